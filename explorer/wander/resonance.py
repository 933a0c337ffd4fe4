"""Stage 6: resonances, the themes that keep coming back.

A residue's themes vector is matched against the resonances in reach (the
session's own, the cross-session ones, and other sessions' confirmed ones, which
a match promotes to cross-session). Matches are reinforced; a residue that
matches none starts a candidate. Strength decays ``decay_rate`` a day from the
last reinforcement; a candidate is confirmed once it has recurred often and
strongly enough, and any resonance that decays away is invalidated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from explorer.records.wander import Residue, Resonance
from explorer.wander.config import WanderTuning


@dataclass
class ResonanceOutcome:
    """What matching one residue did to the resonances in reach: the rows to write and the events to log."""

    touched: list[Resonance] = field(default_factory=list)  # reinforced or new, in match order
    created: list[Resonance] = field(default_factory=list)
    updated: list[Resonance] = field(default_factory=list)  # reinforced, promoted or invalidated
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _payload(r: Resonance, now: datetime, **extra: Any) -> dict[str, Any]:
    return {
        "resonance_id": r.id,
        "themes": r.themes,
        "occurrences": r.occurrences,
        "strength": round(r.current_strength(now), 4),
        "status": r.status,
        "cross_session": r.session_id is None,
        **extra,
    }


def decayed_away(resonance: Resonance, now: datetime, tuning: WanderTuning) -> bool:
    """Whether a pattern not seen again for long has faded below the line where it stops counting."""
    return resonance.status != "invalidated" and resonance.current_strength(now) < tuning.invalidate_strength


def reinforce(resonance: Resonance, residue_id: str, now: datetime, tuning: WanderTuning) -> Resonance:
    """The resonance seen once more: one more occurrence, stronger (up to a cap), the residue as support."""
    return replace(
        resonance,
        occurrences=resonance.occurrences + 1,
        strength=min(tuning.max_strength, resonance.current_strength(now) + tuning.reinforce_gain),
        supporting_residue_ids=[*resonance.supporting_residue_ids, residue_id],
        last_reinforced_at=now,
    )


def confirmable(resonance: Resonance, now: datetime, tuning: WanderTuning) -> bool:
    """Whether a candidate has recurred often and strongly enough to be trusted (and so crystallized)."""
    return (
        resonance.status == "candidate"
        and resonance.occurrences >= tuning.confirm_occurrences
        and resonance.current_strength(now) >= tuning.confirm_strength
    )


def check_resonances(
    residue: Residue | None, in_reach: list[Resonance], session_id: str, now: datetime, tuning: WanderTuning
) -> ResonanceOutcome:
    """Decay the resonances in reach, then reinforce those the residue's themes match, or start a candidate."""
    out = ResonanceOutcome()
    live: list[Resonance] = []
    vectors: list[np.ndarray] = []
    for r in in_reach:
        if decayed_away(r, now, tuning):
            out.updated.append(replace(r, status="invalidated"))
        elif r.embedding is not None:  # matching is by meaning: a resonance read without its vector sits out
            live.append(r)
            vectors.append(r.embedding)
    if residue is None or residue.themes_embedding is None:
        return out  # nothing to match: only the decay is applied
    if live:
        sims = np.vstack(vectors) @ residue.themes_embedding
        order = [int(i) for i in np.argsort(-sims, kind="stable") if sims[i] >= tuning.resonance_match]
    else:
        sims, order = np.zeros(0), []
    for i in order[: tuning.resonance_max_matches]:
        old = live[i]
        new = reinforce(old, residue.id, now, tuning)
        promoted = new.session_id not in (None, session_id)
        if promoted:
            new = replace(new, session_id=None)
        confirmed = confirmable(new, now, tuning)
        if confirmed:
            new = replace(new, status="confirmed")
        out.events.append(  # reinforced first, then (by that reinforcement) graduated
            (
                "wander.resonance.strengthened",
                _payload(new, now, residue_id=residue.id, similarity=round(float(sims[i]), 4), promoted=promoted),
            )
        )
        if confirmed:
            out.events.append(("wander.resonance.confirmed", _payload(new, now, residue_id=residue.id)))
        out.updated.append(new)
        out.touched.append(new)
    if not out.touched:
        candidate = Resonance(
            themes=list(residue.themes),
            embedding=residue.themes_embedding,
            session_id=session_id,
            occurrences=1,
            strength=1.0,
            status="candidate",
            supporting_residue_ids=[residue.id],
            last_reinforced_at=now,
            decay_rate=tuning.decay_rate,
            created_at=now,
        )
        out.created.append(candidate)
        out.touched.append(candidate)
        out.events.append(("wander.resonance.detected", _payload(candidate, now, residue_id=residue.id)))
    return out
