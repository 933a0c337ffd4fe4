"""One wander step (docs/wander.md#the-step), as a pure function.

:func:`take_step` chains the stages over what the caller read from the store
(:class:`~explorer.wander.step_records.StepInputs`): where to go and whether that is past the fence
(:mod:`~explorer.wander.next_locus`, stages 1-4), the loci, the dwelling and the visit
(:mod:`~explorer.wander.arrival`, 5), the resonances (:mod:`~explorer.wander.resonance`, 6), then the crystal,
the trace, memory and the guard rails' next status (:mod:`~explorer.wander.step_outcome`, 7-9); each stage hands
the next a record of what it decided (:mod:`~explorer.wander.step_records`). It returns every row to write and
every event to emit (:class:`~explorer.wander.step_records.StepPlan`); the caller writes them in one
transaction (and has logged ``wander.step.started`` before it asked, the moment the step began). Model calls go
through a :class:`~explorer.wander.guards.Spending`, reads the step needs on demand (node texts, a resonance's
evidence) through callbacks. A failing strategy or a broken model answer is recorded in ``failures`` and the
step goes on with what it has.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from explorer.records.wander import StepResult
from explorer.text import shorten
from explorer.wander import adjacency
from explorer.wander.arrival import dwell_on, plan_loci, visit_target
from explorer.wander.config import WanderTuning
from explorer.wander.guards import Spending
from explorer.wander.next_locus import check_fence, choose
from explorer.wander.resonance import check_resonances
from explorer.wander.step_outcome import attempt_crystal, compress_memory, next_status, trace_of
from explorer.wander.step_records import Event, StepCallbacks, StepInputs, StepPlan, locus_vector, stored_text

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
        np.vstack([locus_vector(locus) for locus in inputs.path])
        if inputs.path
        else np.zeros((0, len(locus_vector(here))), np.float32)
    )
    return adjacency.Surroundings(
        here, inputs.corpus, inputs.loci, path_vectors, tuning, here_text=stored_text(inputs.corpus, here)
    )


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
