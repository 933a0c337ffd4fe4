"""One wander step (wander.md's ``wander_step``), as a pure function.

:func:`take_step` runs the ten stages over what the caller read from the store
(:class:`StepInputs`) and returns every row to write and every event to emit
(:class:`StepPlan`); the caller writes them in one transaction (and has logged
``wander.step.started`` before it asked, the moment the step began). Model calls go
through a :class:`~explorer.wander.guards.Spending`, reads the step needs on
demand (node texts, a resonance's evidence) through callbacks. A failing
strategy or a broken model answer is recorded in ``failures`` and the step goes
on with what it has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

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
    events: list[tuple[str, dict[str, Any]]]
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


def _candidates(
    inputs: StepInputs, s: adjacency.Surroundings, calls: StepCallbacks, spending: Spending, tuning: WanderTuning
) -> list[Adjacency]:
    session = inputs.session
    groups: dict[str, list[Adjacency]] = {}
    strategies = [
        ("cross_domain", lambda: adjacency.cross_domain(s)),
        ("tension", lambda: adjacency.seek_tensions(s, inputs.updates)),
        ("distance_band", lambda: adjacency.distance_band(s, step_rng(session.random_seed, session.step_count + 1, 1))),
        (
            "analogy",
            lambda: adjacency.analogical_reason(
                s, step_rng(session.random_seed, session.step_count + 1, 2), spending.ask, calls.embed, calls.node_text
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
            step_rng(session.random_seed, session.step_count + 1, 4),
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


def _of_step(number: int, items: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """Events of a stage that knows nothing of steps, naming the step they happened in, as every step event does."""
    return [(subject, {"step_number": number, **payload}) for subject, payload in items]


def take_step(
    inputs: StepInputs, spending: Spending, calls: StepCallbacks, tuning: WanderTuning, now: datetime
) -> StepPlan:
    """The heart of a wander: from here, choose where to go, dwell on the encounter, leave a residue, let
    resonances grow and perhaps a crystal form, and plan every write, without touching the database.
    """
    session, here = inputs.session, inputs.here
    number = session.step_count + 1
    events: list[tuple[str, dict[str, Any]]] = []
    path_vectors = (
        np.vstack([_vector(locus) for locus in inputs.path])
        if inputs.path
        else np.zeros((0, len(_vector(here))), np.float32)
    )
    s = adjacency.Surroundings(
        here, inputs.corpus, inputs.loci, path_vectors, tuning, here_text=_node_text(inputs.corpus, here)
    )

    # 1-4: adjacencies, scope, score, choice (or the locus a person asked for)
    fenced_out = 0
    if inputs.pending is not None:
        candidates, chosen = [], _as_adjacency(inputs.pending, s.here_vector, "injected", "injected by a person")
        reason = f"injected by a person: {shorten(chosen.concept, 12)}"
        considered = 0
    else:
        found = _candidates(inputs, s, calls, spending, tuning)
        considered = len(found)
        candidates = [c for c in found if scope.rejection(c, session, tuning) is None]
        fenced_out = considered - len(candidates)
        candidates = _not_recent(candidates, inputs.path, inputs.corpus)
        events.append(
            (
                "wander.adjacencies.found",
                {
                    "step_number": number,
                    "count": considered,
                    "in_scope": len(candidates),
                    "by_strategy": {
                        k: sum(c.strategy == k for c in found)
                        for k in ("distance_band", "cross_domain", "analogy", "tension")
                    },
                },
            )
        )
        if candidates:
            selection.score(candidates, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
            line = selection.strong_bridge_line(inputs.corpus, tuning)
            strong = [c for c in candidates if not selection.weak_bridge(c, here.domains, line)]
            if not strong:  # only weak bridges out of here: stay in its domain rather than claim one
                avoid = {x for locus in inputs.path if (x := _source(inputs.corpus, locus)) is not None}
                home = [c for c in adjacency.nearest_at_home(s, avoid) if scope.rejection(c, session, tuning) is None]
                _fill_concepts(home, calls.node_text)
                selection.score(home, s, session, inputs.visited_domains, inputs.failed_paths, tuning)
                strong = home
            candidates = strong or candidates
            pick = selection.softmax_select(
                candidates, session.temperature, step_rng(session.random_seed, number, 3), tuning.score_sharpness
            )
            chosen = candidates[pick]
            reason = f"{chosen.strategy.replace('_', ' ')}: score {chosen.score:.2f}, p={chosen.probability:.2f}" + (
                f" ({chosen.note})" if chosen.note else ""
            )
        else:
            chosen, reason = _backtrack(inputs, s, fenced_out, tuning)

    drift = scope.drift(chosen.embedding, session)
    warning = scope.approaching(chosen.embedding, session, tuning)
    # past the fence: nowhere inside it to go, or standing outside it (an injected concept, a fence moved in)
    past_fence = (inputs.pending is None and not candidates) or scope.outside(chosen.embedding, session, tuning)
    if warning is not None or past_fence:
        events.append(
            (
                "wander.fence.approached",
                {
                    "step_number": number,
                    "drift": round(drift, 4),
                    "max_drift_distance": session.max_drift_distance,
                    "warning": warning or reason,
                    "out_of_scope": fenced_out,
                },
            )
        )

    # the loci: the chosen one (new or known) and the best other candidates, remembered unvisited
    new_loci: list[Locus] = []
    if chosen.locus_id:
        known = inputs.loci.loci.get(chosen.locus_id) or inputs.pending
        if known is None:  # only loci of the session, or the one a person asked for, carry a locus_id
            raise ValueError(f"the chosen locus {chosen.locus_id} is neither in the session nor the one asked for")
        target = replace(known)
    else:
        target = _new_locus(chosen, session.id, now)
        new_loci.append(target)
    kept = sorted((c for c in candidates if c is not chosen), key=lambda c: -c.score)[: tuning.remember_candidates - 1]
    linked: list[tuple[Adjacency, str]] = [(chosen, target.id)]
    for c in kept:
        if c.locus_id:
            linked.append((c, c.locus_id))
        else:
            locus = _new_locus(c, session.id, now)
            new_loci.append(locus)
            linked.append((c, locus.id))

    # 5: dwell
    recent_themes = list(dict.fromkeys(t for _, r in reversed(inputs.hot) for t in r.themes))[: tuning.recent_themes]
    active = sorted(
        (r for r in inputs.resonances if r.status != "invalidated"), key=lambda r: -r.current_strength(now)
    )[: tuning.active_resonances]
    trace_id = new_id()
    answer = dwell(here, chosen, recent_themes, active, spending, s.here_text, _node_text(inputs.corpus, chosen))
    dwelling = answer.value if answer.ok else None
    residue = None
    if dwelling is not None:
        residue = residue_from(
            dwelling,
            session_id=session.id,
            trace_id=trace_id,
            from_locus_id=here.id,
            to_locus_id=target.id,
            model=answer.model,
            embed=calls.embed,
        )
        residue.created_at = now
    else:
        s.failures.append(f"dwelling failed: {answer.error}")

    # the visit
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
    if not any(locus.id == target.id for locus in new_loci):
        locus_updates[target.id] = {
            k: getattr(target, k)
            for k in ("visit_count", "last_visited", "novelty_score", "interestingness", "actionability", "uncertainty")
        }
    here_links = {
        "adjacent_to": list(here.adjacent_to),
        "bridges_to": list(here.bridges_to),
        "contradicts": list(here.contradicts),
    }
    for c, locus_id in linked:
        if locus_id == here.id:
            continue
        here_links["adjacent_to"].append(
            {"locus_id": locus_id, "distance": round(c.distance, 4), "strength": round(c.score, 4)}
        )
        if c.strategy == "cross_domain":
            here_links["bridges_to"].append(
                {"locus_id": locus_id, "bridge_type": c.note, "strength": round(c.similarity, 4)}
            )
        if c.strategy == "tension":
            here_links["contradicts"].append({"locus_id": locus_id, "tension_description": c.note})
    here_links = {k: v[-CONNECTIONS_KEPT:] for k, v in here_links.items()}
    locus_updates.setdefault(here.id, {}).update(here_links)
    events.append(
        (
            "wander.locus.visited",
            {
                "step_number": number,
                "locus_id": target.id,
                "concept": shorten(target.concept, 20),
                "strategy": chosen.strategy,
                "visit_count": visits,
                "node_id": target.node_id,
            },
        )
    )

    # 6: resonances
    outcome = check_resonances(residue, inputs.resonances, session.id, now, tuning)
    events += _of_step(number, outcome.events)

    # 7: crystallize
    formed = None
    if residue is not None and crystals.crystal_allowed(number, inputs.crystal_steps, tuning):
        resonance = crystals.pick_resonance(outcome.touched, residue.interestingness, calls.last_attempt, tuning)
        if resonance is not None:
            attempt = crystals.crystallize(
                resonance,
                target,
                calls.evidence(resonance, residue),
                session_id=session.id,
                spending=spending,
                embed=calls.embed,
                existing=calls.known_crystals(),
                related=calls.related,
                tuning=tuning,
                min_relatedness=selection.strong_bridge_line(inputs.corpus, tuning),
            )
            formed = attempt.crystal
            events += _of_step(number, attempt.events)
            if formed is None and not attempt.reason.startswith(crystals.DECLINED):
                s.failures.append(attempt.reason)

    # 8: trace and session state
    failed_dwell = residue is None
    trace = Trace(
        session_id=session.id,
        step_number=number,
        from_locus_id=here.id,
        to_locus_id=target.id,
        adjacencies_considered=considered,
        selection_scores={
            "interestingness": round(chosen.interestingness, 4),
            "novelty": round(chosen.novelty, 4),
            "bridge_potential": round(chosen.bridge_potential, 4),
            "uncertainty": round(chosen.uncertainty, 4),
            "relatedness": round(chosen.relatedness, 4),
            "attractor_pull": round(chosen.attractor_pull, 4),
            "score": round(chosen.score, 4),
            "probability": round(chosen.probability, 4),
        },
        selection_reason=reason,
        model_used=answer.model,
        tokens_used=spending.usage.tokens,
        cost_cents=round(spending.cloud_cents, 6),
        strategy=chosen.strategy,
        drift=round(drift, 4),
        failures=len(s.failures),
        id=trace_id,
        created_at=now,
    )

    # 9: hot → warm
    hot = [*inputs.hot, (number, residue)] if residue else list(inputs.hot)
    loci_now = {**inputs.loci.loci, **{locus.id: locus for locus in new_loci}, target.id: target}
    try:
        warm = memory.compress(hot, loci_now, calls.embed, session_id=session.id, now=now, tuning=tuning)
    except Exception as exc:
        s.failures.append(f"memory compression failed: {type(exc).__name__}: {exc}")
        warm = []

    # guard rails
    spent_before = session.cloud_spent_cents
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
    warning_payload = budget_warnings(
        spent_before,
        after.cloud_spent_cents,
        session.cloud_budget_cents,
        exhausted and not inputs.already_exhausted,
        tuning,
    )
    if warning_payload:
        events.append(("wander.budget.low", {"step_number": number, **warning_payload}))
    status: SessionStatus = "active"
    status_reason: str | None = None
    pause_kind: PauseKind | None = None
    tripped = circuit_reason(
        after, [*inputs.since_reset, target.id], tuning, last_error=answer.error if failed_dwell else None
    )
    if number >= session.max_steps:
        status, status_reason = "completed", f"reached max steps ({session.max_steps})"
    elif tripped:
        status, status_reason, pause_kind = "paused", tripped, "circuit_breaker"
        events.append(("wander.circuit.tripped", {"step_number": number, "reason": tripped}))
    elif exhausted and not spending.has_local_model and tuning.exhausted_action == "pause":
        pause_kind = "budget"
        status, status_reason = (
            "paused",
            (
                f"cloud budget exhausted ({after.cloud_spent_cents:.2f} of "
                f"{session.cloud_budget_cents} cents); raise it, then resume"
            ),
        )
    elif checkpoint_due(after):
        pause_kind = "checkpoint"
        status, status_reason = (
            "paused",
            f"checkpoint: {number} steps taken; review the trace and crystals, then resume",
        )
    after = replace(
        after,
        status=status,
        status_reason=status_reason,
        pause_kind=pause_kind,
        completed_at=now if status == "completed" else session.completed_at,
    )
    events.append(
        (
            "wander.step.completed",
            {
                "step_number": number,
                "from_locus_id": here.id,
                "to_locus_id": target.id,
                "to_concept": shorten(target.concept, 20),
                "strategy": chosen.strategy,
                "resonances_detected": len(outcome.touched),
                "crystal_id": formed.id if formed else None,
                "model_used": answer.model,
                "cost_cents": trace.cost_cents,
                "failures": list(s.failures),
            },
        )
    )
    if status == "paused":
        events.append(("wander.session.paused", {"reason": status_reason, "step_number": number}))
    elif status == "completed":
        events.append(("wander.session.completed", {"reason": status_reason, "step_number": number}))

    session_updates = {
        k: getattr(after, k)
        for k in (
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
        )
    }
    here_after = replace(
        here,
        adjacent_to=here_links["adjacent_to"],
        bridges_to=here_links["bridges_to"],
        contradicts=here_links["contradicts"],
    )
    result = StepResult(
        step_number=number,
        from_locus=here_after,
        to_locus=target,
        trace=trace,
        residue=residue,
        resonances=outcome.touched,
        crystal=formed,
        adjacencies=candidates,
        failures=list(s.failures),
        status=status,
        status_reason=status_reason,
    )
    return StepPlan(
        result=result,
        new_loci=new_loci,
        locus_updates=locus_updates,
        trace=trace,
        residue=residue,
        resonance_outcome=outcome,
        crystal=formed,
        warm=warm,
        session_updates=session_updates,
        events=events,
        visited=target,
    )
