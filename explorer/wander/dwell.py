"""Stage 5: dwell at the encounter between the current locus and the chosen one.

The dwelling prompt (docs/wander.md#dwelling-prompt) is answered by the local model, or by the cloud
model when the encounter scored high and the cloud's share and budget allow.
Its answer becomes a residue; the themes are embedded together (the normalised
mean of each theme's vector) so resonances can be matched by meaning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from explorer.prompts.wander import DWELLING, Dwelling
from explorer.providers.gateway import Answer, Tier
from explorer.records.wander import Adjacency, Locus, Residue, Resonance
from explorer.wander.guards import Spending
from explorer.wander.naming import described

Embed = Callable[[Sequence[str]], np.ndarray]


def _domains(domains: Sequence[str]) -> str:
    return ", ".join(domains) or "unknown"


def dwelling_fields(
    here: Locus,
    there: Adjacency | Locus,
    recent_themes: Sequence[str],
    resonances: Sequence[Resonance],
    here_text: str | None = None,
    there_text: str | None = None,
) -> dict[str, str]:
    """The dwelling prompt's fields for the encounter between here and there (each with its node's text when it
    stands on one), with the themes and resonances the walk has so far, so the model reflects on this step in
    the light of the path.
    """
    return {
        "current_concept": described(here.concept, here_text),
        "current_domains": _domains(here.domains),
        "current_abstraction": f"{here.abstraction_level:.1f}",
        "next_concept": described(there.concept, there_text),
        "next_domains": _domains(there.domains),
        "next_abstraction": f"{there.abstraction_level:.1f}",
        "recent_themes": ", ".join(recent_themes) or "(none yet)",
        "active_resonances": "\n".join(
            f"- {', '.join(r.themes)} (seen {r.occurrences}×, {r.status})" for r in resonances
        )
        or "(none yet)",
    }


def themes_vector(themes: Sequence[str], embed: Embed) -> np.ndarray | None:
    """One unit vector for a set of themes: the normalised mean of their embeddings."""
    if not themes:
        return None
    mean = embed(list(themes)).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32) if norm else None


def dwell(
    here: Locus,
    there: Adjacency,
    recent_themes: Sequence[str],
    resonances: Sequence[Resonance],
    spending: Spending,
    here_text: str | None = None,
    there_text: str | None = None,
) -> Answer[Dwelling]:
    """Reflect on the encounter with the model the step can afford (the cloud for a high-scoring one)."""
    tier: Tier = "cloud" if spending.wants_cloud(there.score) else "local"
    return spending.ask(
        DWELLING,
        dwelling_fields(here, there, recent_themes, resonances, here_text, there_text),
        tier=tier,
        purpose="wander_dwell",
    )


def residue_from(
    dwelling: Dwelling,
    *,
    session_id: str,
    trace_id: str,
    from_locus_id: str | None,
    to_locus_id: str,
    model: str,
    embed: Embed,
) -> Residue:
    """What the dwelling leaves behind, with its themes embedded so resonances can be matched by meaning."""
    return Residue(
        session_id=session_id,
        trace_id=trace_id,
        from_locus_id=from_locus_id,
        to_locus_id=to_locus_id,
        connection=dwelling.connection,
        tension=dwelling.tension,
        bridge=dwelling.bridge,
        surprise=dwelling.surprise,
        possibility=dwelling.possibility,
        themes=list(dwelling.themes),
        themes_embedding=themes_vector(dwelling.themes, embed),
        interestingness=dwelling.interestingness,
        actionability=dwelling.actionability,
        model_used=model,
    )
