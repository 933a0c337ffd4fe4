"""One wander step (docs/wander.md#the-step), as a pure function.

:func:`take_step` chains the stages over what the caller read from the store
(:class:`StepInputs`): :func:`choose` where to go (adjacencies, scope, score,
choice) and :func:`check_fence`, :func:`plan_loci`, :func:`dwell_on` the
encounter, :func:`visit_target`, the resonances, :func:`attempt_crystal`,
:func:`trace_of`, :func:`compress_memory` and the guard rails' :func:`next_status`.
It returns every row to write and every event to emit (:class:`StepPlan`); the
caller writes them in one transaction (and has logged ``wander.step.started``
before it asked, the moment the step began). Model calls go through a
:class:`~explorer.wander.guards.Spending`, reads the step needs on demand (node
texts, a resonance's evidence) through callbacks. A failing strategy or a broken
model answer is recorded in ``failures`` and the step goes on with what it has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from explorer.prompts.wander import Dwelling
from explorer.providers.gateway import Answer
from explorer.records import new_id
from explorer.records.wander import (
    Adjacency,
    Crystal,
    Locus,
    PauseKind,
    Residue,
    Resonance,
    Session,
    SessionStatus,
    StepResult,
    Strategy,
    Trace,
    WarmMemory,
)
from explorer.text import shorten
from explorer.wander import adjacency, memory, scope, selection
from explorer.wander import crystal as crystals
from explorer.wander.config import WanderTuning
from explorer.wander.dwell import dwell, residue_from
from explorer.wander.guards import Spending, budget_warnings, checkpoint_due, circuit_reason
from explorer.wander.naming import locus_name
from explorer.wander.resonance import ResonanceOutcome, check_resonances
from explorer.wander.space import CorpusSpace, LociSpace

Embed = Callable[[Sequence[str]], np.ndarray]
Event = tuple[str, dict[str, Any]]  # subject, payload
NODE_ABSTRACTION = {
    "raw_chunk": 0.3,
    "synthesis": 0.5,
    "entity_insight": 0.5,
    "rem_dream": 0.7,
    "fused": 0.6,
    "pattern": 0.8,
    "abstraction": 0.9,
}
CONNECTIONS_KEPT = 20  # entries of a locus's adjacent_to / bridges_to / contradicts
BACKTRACK_POOL = 200  # the most recently seen unexplored loci a walk stuck at the fence may go back to


def step_rng(random_seed: int, step_number: int, purpose: int) -> np.random.Generator:
    """A generator fixed by the session's seed, the step and what it is for, so a replay draws the same numbers."""
    return np.random.default_rng([int(random_seed) & 0xFFFFFFFF, step_number, purpose])


@dataclass
class StepInputs:
    """Everything a step needs from the store, read before any model is asked, so the step itself never waits
    on the database while it thinks.
    """

    session: Session
    here: Locus
    corpus: CorpusSpace
    loci: LociSpace
    path: list[Locus]  # loci visited just before here, oldest first
    since_reset: list[str]  # destinations of the steps since the circuit breaker was reset
    hot: list[tuple[int, Residue]]  # hot memory: (step, residue) not yet compressed
    resonances: list[Resonance]  # resonances in reach
    failed_paths: np.ndarray  # warm failed-path vectors, to steer away from
    visited_domains: set[str]
    pending: Locus | None = None  # a locus a person asked to visit next
    crystal_steps: list[int] = field(default_factory=list)  # steps at which this walk formed a crystal
    updates: list[str] = field(default_factory=list)  # nodes linked to here by UPDATES relations
    already_exhausted: bool = False  # the budget ran out in an earlier step (warned then)

    @property
    def step_number(self) -> int:
        """The number of the step these inputs are for: the session's next."""
        return self.session.step_count + 1


@dataclass
class StepCallbacks:
    """What a step may need on demand (embeddings, node texts, a resonance's evidence, earlier crystals): each
    callback reads in its own short connection, so the walk stays a pure function of its inputs.
    """

    embed: Embed
    node_text: adjacency.NodeText
    evidence: Callable[[Resonance, Residue], crystals.Evidence]
    last_attempt: Callable[[str], int | None]  # a resonance's occurrences when it last tried to crystallize
    known_crystals: Callable[[], crystals.KnownCrystals]
    related: crystals.Related  # evidence that two stored nodes are related


@dataclass
class StepPlan:
    """Every row a step writes and every event it emits, handed back so the caller can write them in one
    transaction after re-checking the session.
    """

    result: StepResult
    new_loci: list[Locus]
    locus_updates: dict[str, dict[str, Any]]
    trace: Trace
    residue: Residue | None
    resonance_outcome: ResonanceOutcome
    crystal: Crystal | None
    warm: list[WarmMemory]
    session_updates: dict[str, Any]
    events: list[Event]
    visited: Locus


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


def _node_text(corpus: CorpusSpace, locus: Locus | Adjacency) -> str | None:
    """The text of the node a locus stands on (None for the seed or an injected concept)."""
    row = corpus.row(locus.node_id) if locus.node_id else None
    return corpus.texts[row] if row is not None and row < len(corpus.texts) else None


def _not_recent(candidates: list[Adjacency], path: list[Locus], corpus: CorpusSpace) -> list[Adjacency]:
    """The candidates that are neither among the loci visited just before nor on the notes they stood on (all of
    them when every one is): a walk that goes back to where it just was, by the same node or another of the same
    note, is going round in circles.
    """
    loci = {locus.id for locus in path}
    notes = {source for locus in path if (source := _source(corpus, locus)) is not None}
    fresh = [c for c in candidates if not (c.locus_id in loci or _source(corpus, c) in notes)]
    return fresh or candidates


def _source(corpus: CorpusSpace, locus: Locus | Adjacency) -> int | None:
    row = corpus.row(locus.node_id) if locus.node_id else None
    return int(corpus.sources[row]) if row is not None and len(corpus.sources) else None


def _vector(locus: Locus) -> np.ndarray:
    """A locus's embedding: the walk measures every move by it, so a locus without one cannot be stepped to."""
    if locus.embedding is None:
        raise ValueError(f"locus {locus.id} has no embedding, so the walk cannot measure a step to it")
    return locus.embedding


def _as_adjacency(locus: Locus, here_vector: np.ndarray, strategy: Strategy, note: str) -> Adjacency:
    """A known locus as a candidate (a backtrack, the seed, a person's choice), so it is scored and recorded
    like any adjacency.
    """
    vector = _vector(locus)
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


# -- 1-4: adjacencies, scope, score, choice ----------------------------------------------


@dataclass(frozen=True)
class Choice:
    """Where a step goes and why, with what it chose among."""

    chosen: Adjacency
    reason: str  # the trace's selection reason
    candidates: list[Adjacency] = field(default_factory=list)  # in scope and scored; none for a person's pick
    considered: int = 0  # adjacencies the strategies found, in scope or not
    fenced_out: int = 0  # of those, the ones the fence left out
    events: list[Event] = field(default_factory=list)


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
    candidates = _scored(candidates, inputs, s, calls, tuning)
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
    the nearest nodes in here's own domain instead (the walk stays home rather than claim a link the corpus
    does not support), or all of them when home has nothing either.
    """
    session = inputs.session
    selection.score(candidates, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
    line = selection.strong_bridge_line(inputs.corpus, tuning)
    strong = [c for c in candidates if not selection.weak_bridge(c, inputs.here.domains, line)]
    if not strong:
        avoid = {x for locus in inputs.path if (x := _source(inputs.corpus, locus)) is not None}
        home = [c for c in adjacency.nearest_at_home(s, avoid) if scope.rejection(c, session, tuning) is None]
        _fill_concepts(home, calls.node_text)
        selection.score(home, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
        strong = home
    return strong or candidates


def _backtrack(
    inputs: StepInputs, s: adjacency.Surroundings, fenced_out: int, tuning: WanderTuning
) -> tuple[Adjacency, str]:
    """Nowhere inside the fence to go from here: go back to an unexplored locus inside it, or to the seed."""
    session, here = inputs.session, inputs.here
    recent = [  # unexplored loci on stored nodes: a backtrack goes somewhere the knowledge base holds
        locus
        for locus in inputs.loci.loci.values()
        if locus.visit_count == 0 and locus.id != here.id and locus.embedding is not None and locus.node_id
    ]
    unexplored = [
        _as_adjacency(locus, s.here_vector, locus.strategy, "an unexplored branch")
        for locus in recent[-BACKTRACK_POOL:]
    ]
    unexplored = [c for c in unexplored if scope.rejection(c, session, tuning) is None]
    if unexplored:
        selection.score(unexplored, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
        pick = selection.softmax_select(
            unexplored,
            session.temperature,
            step_rng(session.random_seed, inputs.step_number, 4),
            tuning.score_sharpness,
        )
        return unexplored[pick], (
            f"no adjacency inside the fence ({fenced_out} out of scope): "
            f"back to an unexplored branch, score {unexplored[pick].score:.2f}"
        )
    seed = next((locus for locus in inputs.loci.loci.values() if locus.source_type == "SEED"), here)
    return (
        _as_adjacency(seed, s.here_vector, "seed", "no adjacency inside the fence"),
        f"no adjacency inside the fence ({fenced_out} out of scope): back to the seed",
    )


@dataclass(frozen=True)
class FenceCheck:
    """How far the chosen point lies from the session's centre, and whether the step went past the fence."""

    drift: float
    past_fence: bool  # counted by the circuit breaker's fence streak
    events: list[Event]


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


# -- the loci, the dwelling and the visit --------------------------------------------------


@dataclass(frozen=True)
class Destination:
    """The loci a step plans: where it goes, and the best other candidates, remembered unvisited."""

    target: Locus  # the chosen locus: a copy of a known one, or a new one
    new_loci: list[Locus]  # to insert: the target when it is new, and remembered candidates that were no loci yet
    linked: list[tuple[Adjacency, str]]  # the candidates here links to, with their loci, the chosen one first


def plan_loci(inputs: StepInputs, choice: Choice, tuning: WanderTuning, now: datetime) -> Destination:
    """The chosen locus, new or known, and the best of the other candidates as unvisited loci: a walk stuck at
    the fence later goes back to one of them (see :func:`_backtrack`).
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


@dataclass(frozen=True)
class Encounter:
    """What dwelling on the step's encounter gave: the model's answer, and the residue it leaves when it read."""

    answer: Answer[Dwelling]
    dwelling: Dwelling | None  # the model's reflection, None when its answer could not be read
    residue: Residue | None
    trace_id: str  # the residue names its trace before the trace is made


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
    answer = dwell(inputs.here, chosen, recent_themes, active, spending, s.here_text, _node_text(inputs.corpus, chosen))
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


@dataclass(frozen=True)
class Visit:
    """What the visit changes in the loci: the target's counts and ratings, here's links to where the step led."""

    here_after: Locus
    locus_updates: dict[str, dict[str, Any]]  # locus id -> fields to store
    events: list[Event]


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


# -- 7-9: crystal, trace, memory ---------------------------------------------------------------


def attempt_crystal(
    inputs: StepInputs,
    s: adjacency.Surroundings,
    target: Locus,
    residue: Residue | None,
    touched: list[Resonance],
    calls: StepCallbacks,
    spending: Spending,
    tuning: WanderTuning,
) -> crystals.CrystalAttempt | None:
    """Stage 7: perhaps a crystal, from the strongest confirmed resonance this step touched, when the walk has
    gone long enough since its last one; None when no attempt was made. An attempt that broke is a failure of
    the step; one the model declined is not.
    """
    if residue is None or not crystals.crystal_allowed(inputs.step_number, inputs.crystal_steps, tuning):
        return None
    resonance = crystals.pick_resonance(touched, residue.interestingness, calls.last_attempt, tuning)
    if resonance is None:
        return None
    attempt = crystals.crystallize(
        resonance,
        target,
        calls.evidence(resonance, residue),
        session_id=inputs.session.id,
        spending=spending,
        embed=calls.embed,
        existing=calls.known_crystals(),
        related=calls.related,
        tuning=tuning,
        min_relatedness=selection.strong_bridge_line(inputs.corpus, tuning),
    )
    if attempt.crystal is None and not attempt.reason.startswith(crystals.DECLINED):
        s.failures.append(attempt.reason)
    return attempt


_SELECTION_SCORES = (
    "interestingness",
    "novelty",
    "bridge_potential",
    "uncertainty",
    "relatedness",
    "attractor_pull",
    "score",
    "probability",
)


def trace_of(
    inputs: StepInputs,
    choice: Choice,
    fence: FenceCheck,
    target: Locus,
    encounter: Encounter,
    spending: Spending,
    failures: int,
    now: datetime,
) -> Trace:
    """Stage 8: the step as the trace keeps it: where from and to, why (the chosen candidate's scores and the
    reason), with which model at what cost, and how many things failed along the way.
    """
    return Trace(
        session_id=inputs.session.id,
        step_number=inputs.step_number,
        from_locus_id=inputs.here.id,
        to_locus_id=target.id,
        adjacencies_considered=choice.considered,
        selection_scores={name: round(getattr(choice.chosen, name), 4) for name in _SELECTION_SCORES},
        selection_reason=choice.reason,
        model_used=encounter.answer.model,
        tokens_used=spending.usage.tokens,
        cost_cents=round(spending.cloud_cents, 6),
        strategy=choice.chosen.strategy,
        drift=round(fence.drift, 4),
        failures=failures,
        id=encounter.trace_id,
        created_at=now,
    )


def compress_memory(
    inputs: StepInputs,
    s: adjacency.Surroundings,
    destination: Destination,
    residue: Residue | None,
    embed: Embed,
    tuning: WanderTuning,
    now: datetime,
) -> list[WarmMemory]:
    """Stage 9: hot memory, with this step's residue, compressed into warm memories when it has grown long; a
    compression that fails is a failure of the step, and the hot memory waits for the next one.
    """
    hot = [*inputs.hot, (inputs.step_number, residue)] if residue else list(inputs.hot)
    target = destination.target
    loci_now = {**inputs.loci.loci, **{locus.id: locus for locus in destination.new_loci}, target.id: target}
    try:
        return memory.compress(hot, loci_now, embed, session_id=inputs.session.id, now=now, tuning=tuning)
    except Exception as exc:
        s.failures.append(f"memory compression failed: {type(exc).__name__}: {exc}")
        return []


# -- guard rails ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NextStatus:
    """The session after the step (where it stands, what it spent, its streaks, its status) and the guard
    rails' events.
    """

    session: Session
    events: list[Event]


def next_status(
    inputs: StepInputs,
    target: Locus,
    encounter: Encounter,
    past_fence: bool,
    spending: Spending,
    tuning: WanderTuning,
    now: datetime,
) -> NextStatus:
    """The guard rails: charge the step's calls to the session, count the streaks of failed dwellings and of
    steps past the fence, warn as the budget runs low, and stop, pause or go on (see :func:`_settled`).
    """
    session, number = inputs.session, inputs.step_number
    failed_dwell = encounter.residue is None
    after = replace(
        session,
        step_count=number,
        current_locus_id=target.id,
        pending_locus_id=None,
        last_step_at=now,
        **spending.spent_on(session),
        failure_streak=session.failure_streak + 1 if failed_dwell else 0,
        fence_streak=session.fence_streak + 1 if past_fence else 0,
    )
    exhausted = spending.downgraded > 0
    events: list[Event] = []
    low = budget_warnings(
        session.cloud_spent_cents,
        after.cloud_spent_cents,
        session.cloud_budget_cents,
        exhausted and not inputs.already_exhausted,
        tuning,
    )
    if low:
        events.append(("wander.budget.low", {"step_number": number, **low}))
    last_error = encounter.answer.error if failed_dwell else None
    tripped = circuit_reason(after, [*inputs.since_reset, target.id], tuning, last_error=last_error)
    budget_pause = exhausted and not spending.has_local_model and tuning.exhausted_action == "pause"
    after = _settled(after, tripped, budget_pause, now)
    if after.pause_kind == "circuit_breaker":
        events.append(("wander.circuit.tripped", {"step_number": number, "reason": tripped}))
    return NextStatus(after, events)


def _settled(after: Session, tripped: str | None, budget_pause: bool, now: datetime) -> Session:
    """The session's status after a step, the first that holds: completed at its last step; paused by the
    circuit breaker, by a spent budget with no local model to fall back on, or at a human checkpoint; else active.
    """
    status: SessionStatus = "active"
    reason: str | None = None
    pause_kind: PauseKind | None = None
    if after.step_count >= after.max_steps:
        status, reason = "completed", f"reached max steps ({after.max_steps})"
    elif tripped:
        status, reason, pause_kind = "paused", tripped, "circuit_breaker"
    elif budget_pause:
        status, pause_kind = "paused", "budget"
        reason = (
            f"cloud budget exhausted ({after.cloud_spent_cents:.2f} of "
            f"{after.cloud_budget_cents} cents); raise it, then resume"
        )
    elif checkpoint_due(after):
        status, pause_kind = "paused", "checkpoint"
        reason = f"checkpoint: {after.step_count} steps taken; review the trace and crystals, then resume"
    completed_at = now if status == "completed" else after.completed_at
    return replace(after, status=status, status_reason=reason, pause_kind=pause_kind, completed_at=completed_at)


_SESSION_FIELDS = (
    "step_count",
    "current_locus_id",
    "pending_locus_id",
    "last_step_at",
    "cloud_spent_cents",
    "local_calls",
    "cloud_calls",
    "offline_calls",
    "failure_streak",
    "fence_streak",
    "status",
    "status_reason",
    "pause_kind",
    "completed_at",
)  # what a step changes in its session's row


def _closing_events(result: StepResult) -> list[Event]:
    """``wander.step.completed``, and the session's pause or completion when the step ended it."""
    completed = {
        "step_number": result.step_number,
        "from_locus_id": result.trace.from_locus_id,
        "to_locus_id": result.to_locus.id,
        "to_concept": shorten(result.to_locus.concept, 20),
        "strategy": result.trace.strategy,
        "resonances_detected": len(result.resonances),
        "crystal_id": result.crystal.id if result.crystal else None,
        "model_used": result.trace.model_used,
        "cost_cents": result.trace.cost_cents,
        "failures": list(result.failures),
    }
    events: list[Event] = [("wander.step.completed", completed)]
    if result.status in ("paused", "completed"):
        reason = {"reason": result.status_reason, "step_number": result.step_number}
        events.append((f"wander.session.{result.status}", reason))
    return events


def _of_step(number: int, items: list[Event]) -> list[Event]:
    """Events of a stage that knows nothing of steps, naming the step they happened in, as every step event does."""
    return [(subject, {"step_number": number, **payload}) for subject, payload in items]


# -- the step -------------------------------------------------------------------------------


def take_step(
    inputs: StepInputs, spending: Spending, calls: StepCallbacks, tuning: WanderTuning, now: datetime
) -> StepPlan:
    """The heart of a wander: from here, choose where to go, dwell on the encounter, leave a residue, let
    resonances grow and perhaps a crystal form, and plan every write, without touching the database.

    Each stage hands the next what it decided (the numbers are docs/wander.md's stages); what fails on the way
    is noted in the surroundings' ``failures`` (reported with the step) and the step goes on with what it has.
    """
    s = _surroundings(inputs, tuning)
    choice = choose(inputs, s, calls, spending, tuning)  # 1-4
    fence = check_fence(inputs, choice, tuning)
    destination = plan_loci(inputs, choice, tuning, now)
    target = destination.target
    encounter = dwell_on(inputs, s, choice.chosen, target, calls.embed, spending, tuning, now)  # 5
    visit = visit_target(inputs, choice, destination, encounter.dwelling, now)
    resonances = check_resonances(encounter.residue, inputs.resonances, inputs.session.id, now, tuning)  # 6
    attempt = attempt_crystal(inputs, s, target, encounter.residue, resonances.touched, calls, spending, tuning)  # 7
    trace = trace_of(inputs, choice, fence, target, encounter, spending, len(s.failures), now)  # 8
    warm = compress_memory(inputs, s, destination, encounter.residue, calls.embed, tuning, now)  # 9
    after = next_status(inputs, target, encounter, fence.past_fence, spending, tuning, now)  # guard rails

    crystal = attempt.crystal if attempt else None
    result = StepResult(
        step_number=inputs.step_number,
        from_locus=visit.here_after,
        to_locus=target,
        trace=trace,
        residue=encounter.residue,
        resonances=resonances.touched,
        crystal=crystal,
        adjacencies=choice.candidates,
        failures=list(s.failures),
        status=after.session.status,
        status_reason=after.session.status_reason,
    )
    events = [
        *choice.events,
        *fence.events,
        *visit.events,
        *_of_step(inputs.step_number, resonances.events),
        *_of_step(inputs.step_number, attempt.events if attempt else []),
        *after.events,
        *_closing_events(result),
    ]
    return StepPlan(
        result=result,
        new_loci=destination.new_loci,
        locus_updates=visit.locus_updates,
        trace=trace,
        residue=encounter.residue,
        resonance_outcome=resonances,
        crystal=crystal,
        warm=warm,
        session_updates={k: getattr(after.session, k) for k in _SESSION_FIELDS},
        events=events,
        visited=target,
    )


def _surroundings(inputs: StepInputs, tuning: WanderTuning) -> adjacency.Surroundings:
    """Here and the space around it, measured once for every stage; its ``failures`` is the step's failure log."""
    here = inputs.here
    path_vectors = (
        np.vstack([_vector(locus) for locus in inputs.path])
        if inputs.path
        else np.zeros((0, len(_vector(here))), np.float32)
    )
    return adjacency.Surroundings(
        here, inputs.corpus, inputs.loci, path_vectors, tuning, here_text=_node_text(inputs.corpus, here)
    )
