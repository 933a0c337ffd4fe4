"""Where a step goes (stages 1-4 of docs/wander.md#the-step), and whether that is past the fence.

:func:`choose` takes the locus a person asked for, else the four strategies' adjacencies inside the fence, not
where the walk just was and, while somewhere new is in reach, not where it has ever been, scored and drawn by a
seeded softmax; when every way on goes back where the walk has been, it jumps to an unexplored branch; with
nowhere inside the fence to go, it goes back (an unexplored branch, the seed);
:func:`check_fence` tells whether the choice nears or passes the fence. Pure, like every stage.
"""

from __future__ import annotations

import numpy as np

from explorer.records.wander import Adjacency, Locus, Strategy
from explorer.text import shorten
from explorer.wander import adjacency, scope, selection
from explorer.wander.config import WanderTuning
from explorer.wander.guards import Spending
from explorer.wander.naming import locus_name
from explorer.wander.space import CorpusSpace
from explorer.wander.step_records import Choice, Event, FenceCheck, StepCallbacks, StepInputs, locus_vector

NODE_ABSTRACTION = {
    "raw_chunk": 0.3,
    "synthesis": 0.5,
    "entity_insight": 0.5,
    "rem_dream": 0.7,
    "fused": 0.6,
    "pattern": 0.8,
    "abstraction": 0.9,
}
BACKTRACK_POOL = 200  # the most recently seen unexplored loci a walk stuck at the fence may go back to


def step_rng(random_seed: int, step_number: int, purpose: int) -> np.random.Generator:
    """A generator fixed by the session's seed, the step and what it is for, so a replay draws the same numbers."""
    return np.random.default_rng([int(random_seed) & 0xFFFFFFFF, step_number, purpose])


def choose(
    inputs: StepInputs, s: adjacency.Surroundings, calls: StepCallbacks, spending: Spending, tuning: WanderTuning
) -> Choice:
    """Stages 1-4: the locus a person asked for; else the strategies' adjacencies inside the fence, not where the
    walk just was, scored and drawn by a seeded softmax; else, with nowhere inside the fence to go, a way back.
    """
    if inputs.pending is not None:
        chosen = _as_adjacency(inputs.pending, s.here_vector, "injected", "injected by a person")
        return Choice(chosen, f"injected by a person: {shorten(chosen.concept, 12)}")
    session = inputs.session
    found = _candidates(inputs, s, calls, spending, tuning)
    in_scope = [c for c in found if scope.rejection(c, session, tuning) is None]
    fenced_out = len(found) - len(in_scope)
    candidates = _not_recent(in_scope, inputs.path, inputs.corpus)
    by_strategy = {
        k: sum(c.strategy == k for c in found) for k in ("distance_band", "cross_domain", "analogy", "tension")
    }
    events: list[Event] = [
        (
            "wander.adjacencies.found",
            {
                "step_number": inputs.step_number,
                "count": len(found),
                "in_scope": len(candidates),
                "by_strategy": by_strategy,
            },
        )
    ]
    if not candidates:
        chosen, reason = _backtrack(inputs, s, fenced_out, tuning)
        return Choice(chosen, reason, [], len(found), fenced_out, events)
    fresh = [c for c in candidates if not _visited(c, s)]
    candidates = _scored(fresh or candidates, inputs, s, calls, tuning)
    # every way on leads back: none was new, or the new ones were weak bridges and home holds nothing new
    if all(_visited(c, s) for c in candidates) and (jump := _unexplored_branch(inputs, s, tuning)) is not None:
        reason = f"every way on leads back where the walk has been: a jump to an unexplored branch, {jump.score:.2f}"
        return Choice(jump, reason, [jump], len(found), fenced_out, events)
    pick = selection.softmax_select(
        candidates, session.temperature, step_rng(session.random_seed, inputs.step_number, 3), tuning.score_sharpness
    )
    chosen = candidates[pick]
    reason = f"{chosen.strategy.replace('_', ' ')}: score {chosen.score:.2f}, p={chosen.probability:.2f}" + (
        f" ({chosen.note})" if chosen.note else ""
    )
    return Choice(chosen, reason, candidates, len(found), fenced_out, events)


def _candidates(
    inputs: StepInputs, s: adjacency.Surroundings, calls: StepCallbacks, spending: Spending, tuning: WanderTuning
) -> list[Adjacency]:
    """The four strategies' adjacencies, merged and named; a strategy that fails is a failure of the step, and
    the others' candidates still count.
    """
    session = inputs.session
    groups: dict[str, list[Adjacency]] = {}
    strategies = [
        ("cross_domain", lambda: adjacency.cross_domain(s)),
        ("tension", lambda: adjacency.seek_tensions(s, inputs.updates)),
        ("distance_band", lambda: adjacency.distance_band(s, step_rng(session.random_seed, inputs.step_number, 1))),
        (
            "analogy",
            lambda: adjacency.analogical_reason(
                s, step_rng(session.random_seed, inputs.step_number, 2), spending.ask, calls.embed, calls.node_text
            ),
        ),
    ]
    for name, strategy in strategies:
        try:
            groups[name] = strategy()
        except Exception as exc:  # one strategy failing leaves the others
            s.failures.append(f"{name} failed: {type(exc).__name__}: {exc}")
            groups[name] = []
    found = adjacency.merge(*groups.values())
    _fill_concepts(found, calls.node_text)
    return [c for c in found if c.concept]


def _scored(
    candidates: list[Adjacency],
    inputs: StepInputs,
    s: adjacency.Surroundings,
    calls: StepCallbacks,
    tuning: WanderTuning,
) -> list[Adjacency]:
    """The candidates scored, the weak bridges to other domains left out; when all of them are weak bridges,
    the nearest nodes in here's own domain instead, those the walk has not stood on first (the walk stays home
    rather than claim a link the corpus does not support), or all of them when home has nothing either.
    """
    session = inputs.session
    selection.score(candidates, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
    line = selection.strong_bridge_line(inputs.corpus, tuning)
    strong = [c for c in candidates if not selection.weak_bridge(c, inputs.here.domains, line)]
    if not strong:
        avoid = {x for locus in inputs.path if (x := _source(inputs.corpus, locus)) is not None}
        home = [c for c in adjacency.nearest_at_home(s, avoid) if scope.rejection(c, session, tuning) is None]
        home = [c for c in home if not _visited(c, s)] or home
        _fill_concepts(home, calls.node_text)
        selection.score(home, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
        strong = home
    return strong or candidates


def _backtrack(
    inputs: StepInputs, s: adjacency.Surroundings, fenced_out: int, tuning: WanderTuning
) -> tuple[Adjacency, str]:
    """Nowhere inside the fence to go from here: go back to an unexplored locus inside it, or to the seed."""
    branch = _unexplored_branch(inputs, s, tuning)
    if branch is not None:
        return branch, (
            f"no adjacency inside the fence ({fenced_out} out of scope): "
            f"back to an unexplored branch, score {branch.score:.2f}"
        )
    seed = next((locus for locus in inputs.loci.loci.values() if locus.source_type == "SEED"), inputs.here)
    return (
        _as_adjacency(seed, s.here_vector, "seed", "no adjacency inside the fence"),
        f"no adjacency inside the fence ({fenced_out} out of scope): back to the seed",
    )


def _unexplored_branch(inputs: StepInputs, s: adjacency.Surroundings, tuning: WanderTuning) -> Adjacency | None:
    """A locus the walk saw and never stood on, inside the fence, drawn by the seeded softmax among the most
    recently seen (None when there is none): where a walk goes when it cannot go on from here, because the fence
    is all around it or because every way on leads back where it has been.
    """
    session, here = inputs.session, inputs.here
    recent = [  # unexplored loci on stored nodes: a jump goes somewhere the knowledge base holds
        locus
        for locus in inputs.loci.loci.values()
        if locus.visit_count == 0 and locus.id != here.id and locus.embedding is not None and locus.node_id
    ]
    unexplored = [
        _as_adjacency(locus, s.here_vector, locus.strategy, "an unexplored branch")
        for locus in recent[-BACKTRACK_POOL:]
    ]
    unexplored = [c for c in unexplored if scope.rejection(c, session, tuning) is None]
    if not unexplored:
        return None
    selection.score(unexplored, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
    pick = selection.softmax_select(
        unexplored, session.temperature, step_rng(session.random_seed, inputs.step_number, 4), tuning.score_sharpness
    )
    return unexplored[pick]


def check_fence(inputs: StepInputs, choice: Choice, tuning: WanderTuning) -> FenceCheck:
    """Whether the choice nears or passes the fence: a person hears of it before the circuit breaker trips.

    Past the fence means nowhere inside it to go, or standing outside it (an injected concept, a fence moved in).
    """
    session, point = inputs.session, choice.chosen.embedding
    drift = scope.drift(point, session)
    warning = scope.approaching(point, session, tuning)
    past_fence = (inputs.pending is None and not choice.candidates) or scope.outside(point, session, tuning)
    events: list[Event] = []
    if warning is not None or past_fence:
        events.append(
            (
                "wander.fence.approached",
                {
                    "step_number": inputs.step_number,
                    "drift": round(drift, 4),
                    "max_drift_distance": session.max_drift_distance,
                    "warning": warning or choice.reason,
                    "out_of_scope": choice.fenced_out,
                },
            )
        )
    return FenceCheck(drift, past_fence, events)


def _fill_concepts(candidates: list[Adjacency], node_text: adjacency.NodeText) -> None:
    """Name the candidates that are new to the session after their nodes (see :mod:`explorer.wander.naming`)."""
    missing = [c.node_id for c in candidates if c.node_id and not c.concept]
    if not missing:
        return
    found = node_text(missing)
    for c in candidates:
        if c.node_id in found and not c.concept:
            c.concept = locus_name(found[c.node_id])
            c.abstraction_level = NODE_ABSTRACTION.get(found[c.node_id]["type"], 0.5)


def _not_recent(candidates: list[Adjacency], path: list[Locus], corpus: CorpusSpace) -> list[Adjacency]:
    """The candidates that are neither among the loci visited just before nor on the notes they stood on (all of
    them when every one is): a walk that goes back to where it just was, by the same node or another of the same
    note, is going round in circles.
    """
    loci = {locus.id for locus in path}
    notes = {source for locus in path if (source := _source(corpus, locus)) is not None}
    fresh = [c for c in candidates if not (c.locus_id in loci or _source(corpus, c) in notes)]
    return fresh or candidates


def _visited(candidate: Adjacency, s: adjacency.Surroundings) -> bool:
    """Whether the walk has stood on the candidate's locus before (any step, not only the last few)."""
    known = s.loci.loci.get(candidate.locus_id) if candidate.locus_id else None
    return known is not None and known.visit_count > 0


def _source(corpus: CorpusSpace, locus: Locus | Adjacency) -> int | None:
    row = corpus.row(locus.node_id) if locus.node_id else None
    return int(corpus.sources[row]) if row is not None and len(corpus.sources) else None


def _as_adjacency(locus: Locus, here_vector: np.ndarray, strategy: Strategy, note: str) -> Adjacency:
    """A known locus as a candidate (a backtrack, the seed, a person's choice), so it is scored and recorded
    like any adjacency.
    """
    vector = locus_vector(locus)
    return Adjacency(
        concept=locus.concept,
        embedding=vector,
        strategy=strategy,
        source_type=locus.source_type,
        domains=list(locus.domains),
        node_id=locus.node_id,
        locus_id=locus.id,
        similarity=float(vector @ here_vector),
        note=note,
        abstraction_level=locus.abstraction_level,
        interestingness=locus.interestingness,
        uncertainty=locus.uncertainty,
        score=1.0,
        probability=1.0,
    )
