"""The step at the chosen locus (docs/wander.md#the-step): the loci it plans, the dwelling on the encounter
(stage 5) and the visit, counted in the target and remembered in here's links. Pure, like every stage.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from explorer.prompts.wander import Dwelling
from explorer.records import new_id
from explorer.records.wander import Adjacency, Locus
from explorer.text import shorten
from explorer.wander import adjacency
from explorer.wander.config import WanderTuning
from explorer.wander.dwell import dwell, residue_from
from explorer.wander.guards import Spending
from explorer.wander.step_records import Choice, Destination, Embed, Encounter, StepInputs, Visit, stored_text

CONNECTIONS_KEPT = 20  # entries of a locus's adjacent_to / bridges_to / contradicts


def plan_loci(inputs: StepInputs, choice: Choice, tuning: WanderTuning, now: datetime) -> Destination:
    """The chosen locus, new or known, and the best of the other candidates as unvisited loci: a walk stuck at
    the fence later goes back to one of them (see :mod:`explorer.wander.next_locus`).
    """
    session, chosen = inputs.session, choice.chosen
    new_loci: list[Locus] = []
    if chosen.locus_id:
        known = inputs.loci.loci.get(chosen.locus_id) or inputs.pending
        if known is None:  # only loci of the session, or the one a person asked for, carry a locus_id
            raise ValueError(f"the chosen locus {chosen.locus_id} is neither in the session nor the one asked for")
        target = replace(known)
    else:
        target = _new_locus(chosen, session.id, now)
        new_loci.append(target)
    others = (c for c in choice.candidates if c is not chosen)
    kept = sorted(others, key=lambda c: -c.score)[: tuning.remember_candidates - 1]
    linked: list[tuple[Adjacency, str]] = [(chosen, target.id)]
    for c in kept:
        if c.locus_id:
            linked.append((c, c.locus_id))
        else:
            locus = _new_locus(c, session.id, now)
            new_loci.append(locus)
            linked.append((c, locus.id))
    return Destination(target, new_loci, linked)


def _new_locus(c: Adjacency, session_id: str, now: datetime) -> Locus:
    return Locus(
        session_id=session_id,
        concept=c.concept,
        embedding=c.embedding,
        source_type=c.source_type,
        strategy=c.strategy,
        node_id=c.node_id,
        domains=list(c.domains),
        abstraction_level=c.abstraction_level,
        novelty_score=c.novelty,
        interestingness=c.interestingness,
        uncertainty=c.uncertainty,
        first_encountered=now,
    )


def dwell_on(
    inputs: StepInputs,
    s: adjacency.Surroundings,
    chosen: Adjacency,
    target: Locus,
    embed: Embed,
    spending: Spending,
    tuning: WanderTuning,
    now: datetime,
) -> Encounter:
    """Stage 5: reflect on the encounter in the light of the walk's recent themes and its strongest live
    resonances; an answer that cannot be read is a failure of the step, which goes on without a residue.
    """
    session = inputs.session
    recent_themes = list(dict.fromkeys(t for _, r in reversed(inputs.hot) for t in r.themes))[: tuning.recent_themes]
    active = sorted(
        (r for r in inputs.resonances if r.status != "invalidated"), key=lambda r: -r.current_strength(now)
    )[: tuning.active_resonances]
    trace_id = new_id()
    answer = dwell(
        inputs.here, chosen, recent_themes, active, spending, s.here_text, stored_text(inputs.corpus, chosen)
    )
    dwelling = answer.value if answer.ok else None
    if dwelling is None:
        s.failures.append(f"dwelling failed: {answer.error}")
        return Encounter(answer, None, None, trace_id)
    residue = residue_from(
        dwelling,
        session_id=session.id,
        trace_id=trace_id,
        from_locus_id=inputs.here.id,
        to_locus_id=target.id,
        model=answer.model,
        embed=embed,
    )
    residue.created_at = now
    return Encounter(answer, dwelling, residue, trace_id)


_VISIT_FIELDS = ("visit_count", "last_visited", "novelty_score", "interestingness", "actionability", "uncertainty")


def visit_target(
    inputs: StepInputs, choice: Choice, destination: Destination, dwelling: Dwelling | None, now: datetime
) -> Visit:
    """The target counts the visit, takes the dwelling's ratings (a running mean after its first visit) and
    grows surer of itself; here remembers the candidates it led to. The target is the step's own copy, updated
    in place.
    """
    here, chosen, target = inputs.here, choice.chosen, destination.target
    visits = target.visit_count + 1
    target.visit_count = visits
    target.last_visited = now
    target.novelty_score = round(chosen.novelty, 4) if inputs.pending is None else target.novelty_score
    if dwelling is not None:  # the residue carries the dwelling's ratings
        rated = dwelling.interestingness
        target.interestingness = rated if visits == 1 else round(0.5 * target.interestingness + 0.5 * rated, 4)
        target.actionability = dwelling.actionability
    target.uncertainty = round(target.uncertainty * 0.5, 4)
    locus_updates: dict[str, dict[str, Any]] = {}
    if not any(locus.id == target.id for locus in destination.new_loci):
        locus_updates[target.id] = {k: getattr(target, k) for k in _VISIT_FIELDS}
    links = _links_from(here, destination.linked)
    locus_updates.setdefault(here.id, {}).update(links)
    here_after = replace(
        here, adjacent_to=links["adjacent_to"], bridges_to=links["bridges_to"], contradicts=links["contradicts"]
    )
    visited = {
        "step_number": inputs.step_number,
        "locus_id": target.id,
        "concept": shorten(target.concept, 20),
        "strategy": chosen.strategy,
        "visit_count": visits,
        "node_id": target.node_id,
    }
    return Visit(here_after, locus_updates, [("wander.locus.visited", visited)])


def _links_from(here: Locus, linked: list[tuple[Adjacency, str]]) -> dict[str, list[dict[str, Any]]]:
    """Here's links with the step's candidates added (each adjacent; a cross-domain one also a bridge, a tension
    also a contradiction), the newest :data:`CONNECTIONS_KEPT` of each kind.
    """
    links = {
        "adjacent_to": list(here.adjacent_to),
        "bridges_to": list(here.bridges_to),
        "contradicts": list(here.contradicts),
    }
    for c, locus_id in linked:
        if locus_id == here.id:
            continue
        links["adjacent_to"].append(
            {"locus_id": locus_id, "distance": round(c.distance, 4), "strength": round(c.score, 4)}
        )
        if c.strategy == "cross_domain":
            links["bridges_to"].append(
                {"locus_id": locus_id, "bridge_type": c.note, "strength": round(c.similarity, 4)}
            )
        if c.strategy == "tension":
            links["contradicts"].append({"locus_id": locus_id, "tension_description": c.note})
    return {k: v[-CONNECTIONS_KEPT:] for k, v in links.items()}
