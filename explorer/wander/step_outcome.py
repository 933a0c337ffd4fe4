"""What a step leaves once it has arrived (docs/wander.md#the-step): perhaps a crystal (stage 7), its trace
(8), hot memory compressed into warm (9), and the session's next status by the guard rails. Pure, like every
stage.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from explorer.records.wander import Locus, PauseKind, Residue, Resonance, Session, SessionStatus, Trace, WarmMemory
from explorer.wander import adjacency, memory, selection
from explorer.wander import crystal as crystals
from explorer.wander.config import WanderTuning
from explorer.wander.guards import Spending, budget_warnings, checkpoint_due, circuit_reason
from explorer.wander.step_records import (
    Choice,
    Destination,
    Embed,
    Encounter,
    Event,
    FenceCheck,
    NextStatus,
    StepCallbacks,
    StepInputs,
)


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
    gone long enough since its last one (the next strongest when the rules decline one unasked, see
    :func:`crystals.first_crystal`); None when no attempt was made. An attempt that broke is a failure of the
    step; one the model declined is not.
    """
    if residue is None or not crystals.crystal_allowed(inputs.step_number, inputs.crystal_steps, tuning):
        return None
    ready = crystals.ready_resonances(touched, residue.interestingness, calls.last_attempt, tuning)
    if not ready:
        return None
    existing = calls.known_crystals()  # read once: the tries stop at the first crystal formed
    line = selection.strong_bridge_line(inputs.corpus, tuning)
    attempt = crystals.first_crystal(
        ready,
        lambda resonance: crystals.crystallize(
            resonance,
            target,
            calls.evidence(resonance, residue),
            session_id=inputs.session.id,
            spending=spending,
            embed=calls.embed,
            existing=existing,
            related=calls.related,
            tuning=tuning,
            min_relatedness=line,
        ),
    )
    if attempt is None:
        return None
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
