"""Guard rails: the status machine, the cloud budget, the circuit breaker and human checkpoints.

Budget: the session's budget is a :class:`~explorer.providers.budget.Budget`,
which the gateway reserves each attempt's worst case against before making it;
a cloud call it cannot cover goes to the local model, or to the offline provider
when there is none. So spending never passes the budget, as long as a model is
not dearer than its listed price.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict, TypeGuard

from explorer.errors import Remedy
from explorer.prompts import Prompt
from explorer.providers.budget import Budget
from explorer.providers.gateway import Answer, Gateway, Tier, Usage
from explorer.records.wander import REVIEW_OUTCOMES, Crystal, Review, ReviewDecision, ReviewState, Session
from explorer.wander.config import WanderTuning
from explorer.wander.errors import InvalidRequest, SessionStateError

TRANSITIONS: dict[str, frozenset[str]] = {
    "active": frozenset({"paused", "completed", "abandoned"}),
    "paused": frozenset({"active", "completed", "abandoned"}),
    "completed": frozenset(),
    "abandoned": frozenset(),
}
_VERBS = {"active": "resume", "paused": "pause", "completed": "complete", "abandoned": "abandon"}


def require_transition(session: Session, target: str) -> None:
    """Raise :class:`SessionStateError` unless ``session`` may move to ``target``."""
    if target not in TRANSITIONS:
        raise SessionStateError(f"unknown session status {target!r}; use one of {', '.join(TRANSITIONS)}")
    if target not in TRANSITIONS[session.status]:
        hint = {"active": "it is already running", "paused": "it is already paused; resume it first"}.get(
            session.status, "it has ended; start a new session"
        )
        why = f" ({session.status_reason})" if session.status_reason else ""
        raise SessionStateError(f"cannot {_VERBS[target]} session {session.id}: it is {session.status}{why}; {hint}")


# -- review ---------------------------------------------------------------------------
# The one review state machine: the app, the CLI, the API, the MCP tools and bulk reviews all go through it.
# A decision moves a crystal along these edges; anything else is a change of mind and needs ``force``. A revert
# goes back along the edge an earlier review took, and only from where that review left the crystal.
REVIEW_TRANSITIONS: dict[ReviewState, frozenset[ReviewState]] = {
    ReviewState.PENDING: frozenset({ReviewState.APPROVED, ReviewState.REJECTED, ReviewState.ARCHIVED}),
    ReviewState.APPROVED: frozenset({ReviewState.ARCHIVED}),  # an approved insight that has served its purpose
    ReviewState.REJECTED: frozenset(),
    ReviewState.ARCHIVED: frozenset(),
}


def review_allowed(current: ReviewState, target: ReviewState) -> bool:
    """Whether a review may take a crystal from ``current`` to ``target`` without forcing.

    Surfaces grey out the rest.
    """
    return target in REVIEW_TRANSITIONS[current]


def is_review_decision(decision: str) -> TypeGuard[ReviewDecision]:
    """Whether ``decision`` is one a person can take (approve, reject, archive)."""
    return decision in REVIEW_OUTCOMES


def require_decision(decision: str) -> ReviewDecision:
    """``decision`` if it is one a person can take, else :class:`InvalidRequest` listing them."""
    if not is_review_decision(decision):
        raise InvalidRequest(f"review decision must be one of {', '.join(REVIEW_OUTCOMES)}, not {decision!r}")
    return decision


def require_review(crystal: Crystal, decision: str, force: bool = False) -> ReviewState:
    """The state ``decision`` leads to, or an error when it would silently overturn an earlier review."""
    current, target = crystal.review_state, REVIEW_OUTCOMES[require_decision(decision)]
    if not force and not review_allowed(current, target):
        raise SessionStateError(
            f"crystal {crystal.id} is already {current}; a review cannot make it {target} unless forced",
            remedy=Remedy.FORCE_REVIEW,
            subject=crystal.id,
        )
    return target


def review_values(crystal: Crystal, decision: ReviewDecision, reviewer: str, at: datetime) -> dict[str, Any]:
    """The crystal fields ``decision`` stores (the state machine's states are derived from them, see
    :attr:`Crystal.review_state`): an approval is ``human_approved``, a rejection ``invalidated``, archiving
    ``archived``; an approval names who made it and when, a rejection who (the review log keeps every when).
    """
    if decision == "approve":
        status = "active" if crystal.status in ("invalidated", "archived") else crystal.status
        return {"status": status, "human_approved": True, "human_approved_at": at, "human_approved_by": reviewer}
    if decision == "reject":
        return {
            "status": "invalidated",
            "human_approved": False,
            "human_approved_at": None,
            "human_approved_by": reviewer,
        }
    return {"status": "archived"}


def require_revert(crystal: Crystal, review: Review, force: bool = False) -> ReviewState:
    """The state reverting ``review`` takes ``crystal`` back to, or an error: the log does not know what was
    there before, or the crystal changed since (a later review), which only ``force`` overrides.
    """
    if review.crystal_id != crystal.id:
        raise InvalidRequest(f"review {review.id} is of crystal {review.crystal_id}, not {crystal.id}")
    if not review.revertible:
        raise SessionStateError(
            f"review {review.id} was made before reviews were logged with the crystal's fields; it cannot be "
            "reverted (review the crystal again instead)",
            subject=crystal.id,
        )
    if not force and crystal.review_values() != review.values_after:
        raise SessionStateError(
            f"crystal {crystal.id} changed since review {review.id} (it is {crystal.review_state} now); revert the "
            "later review first",
            remedy=Remedy.FORCE_REVIEW,
            subject=review.id,
        )
    return review.state_before


def require_active(session: Session) -> None:
    """Refuse to step a session that is not running, naming the remedy (resume it, or start a new one)."""
    if session.status != "active":
        why = f" ({session.status_reason})" if session.status_reason else ""
        remedy = Remedy.RESUME_SESSION if session.status == "paused" else Remedy.NEW_SESSION
        raise SessionStateError(f"session {session.id} is {session.status}{why}", remedy=remedy, subject=session.id)


# -- budget --------------------------------------------------------------------


class SpendingCounters(TypedDict):
    """A session's spending counters, as the fields of :class:`Session` (and of its row) they are written to."""

    cloud_spent_cents: float
    local_calls: int
    cloud_calls: int
    offline_calls: int


class Spending:
    """The model calls of one step, kept inside the session's budget.

    Every priced call counts against the budget (reserved at its worst case by the gateway before each
    attempt); a cloud call the budget cannot cover goes to the local model instead, or to the offline
    provider when there is none.
    """

    def __init__(self, gateway: Gateway, session: Session, tuning: WanderTuning):
        self.gateway = gateway
        self.session = session
        self.tuning = tuning
        self.budget = Budget(session.cloud_budget_cents, session.cloud_spent_cents)
        self.usage = Usage()
        self.downgraded = 0
        self.models: list[str] = []

    @property
    def cloud_cents(self) -> float:
        """What this step spent on priced models (the cloud, usually)."""
        return self.budget.spent_cents - self.session.cloud_spent_cents

    def spent_on(self, session: Session) -> SpendingCounters:
        """``session``'s four spending counters with this spending added, as the session fields to store.

        A step and a person's crystallize both charge their calls to the session this way, so the counters
        never drift apart by who summed them. ``session`` is the one about to be written (a crystallize
        re-reads it), not necessarily the one this spending started from; the cents are rounded to 6 places so
        float sums do not grow trailing digits step after step.
        """
        by_tier = self.usage.by_tier
        return SpendingCounters(
            cloud_spent_cents=round(session.cloud_spent_cents + self.cloud_cents, 6),
            local_calls=session.local_calls + by_tier.get("local", 0),
            cloud_calls=session.cloud_calls + by_tier.get("cloud", 0),
            offline_calls=session.offline_calls + by_tier.get("offline", 0),
        )

    @property
    def has_local_model(self) -> bool:
        """Whether a local model is configured, so an unaffordable cloud call can fall back to it, not offline."""
        return self.gateway.model_for("local")[1] == "local"

    def affordable(self, prompt: Prompt[Any], fields: dict[str, Any], tier: Tier) -> Tier:
        """``tier``, or a cheaper one when the call it would make cannot be covered by what is left: the local
        model (free, usually), else the offline provider.
        """
        model, resolved = self.gateway.model_for(tier)
        if resolved == "offline" or self.budget.can_cover(self.gateway.worst_case_cents(prompt, fields, model)):
            return tier
        self.downgraded += 1
        if resolved == "cloud" and self.has_local_model:
            local = self.gateway.model_for("local")[0]
            if self.budget.can_cover(self.gateway.worst_case_cents(prompt, fields, local)):
                return "local"
        return "offline"

    def ask(
        self, prompt: Prompt[Any], fields: dict[str, Any], *, tier: Tier = "local", purpose: str | None = None
    ) -> Answer[Any]:
        """Ask the model through the gateway at a tier the budget can cover, counting what it cost."""
        tier = self.affordable(prompt, fields, tier)
        answer = self.gateway.ask(
            prompt, fields, tier=tier, purpose=purpose, session_id=self.session.id, budget=self.budget
        )
        self.usage.add(answer)
        self.models.append(answer.model)
        self.downgraded += answer.refused
        return answer

    def wants_cloud(self, value: float) -> bool:
        """A high-value encounter earns a cloud call while the cloud's share stays near its target."""
        if self.gateway.model_for("cloud")[1] != "cloud" or not self.has_local_model:
            return False
        s = self.session
        dwellings = s.local_calls + s.cloud_calls + s.offline_calls
        share = s.cloud_calls / dwellings if dwellings else 0.0
        return value >= self.tuning.cloud_min_score and share < self.tuning.cloud_share


def budget_warnings(
    before: float, after: float, budget: float, exhausted: bool, tuning: WanderTuning
) -> dict[str, Any] | None:
    """The ``wander.budget.low`` payload when this step crossed the warning line or ran the budget out."""
    line = tuning.budget_low_share * budget
    if budget > 0 and before < line <= after:
        return {
            "spent_cents": round(after, 4),
            "budget_cents": budget,
            "share": round(after / budget, 3),
            "exhausted": exhausted,
        }
    if exhausted:
        return {
            "spent_cents": round(after, 4),
            "budget_cents": budget,
            "share": round(after / budget, 3) if budget else 1.0,
            "exhausted": True,
        }
    return None


# -- circuit breaker and checkpoints -----------------------------------------------


def circuit_reason(
    session: Session, recent_loci: list[str], tuning: WanderTuning, last_error: str | None = None
) -> str | None:
    """Why the circuit breaker trips after this step, or None.

    ``recent_loci`` are the destinations of the steps since the breaker was last
    reset (a resume resets it), most recent last.
    """
    if session.failure_streak >= tuning.failure_trip:
        detail = f" (last: {last_error})" if last_error else ""
        return f"circuit breaker: {session.failure_streak} steps in a row failed to dwell{detail}"
    if session.fence_streak >= tuning.fence_trip:
        return (
            f"circuit breaker: drift past the fence, {session.fence_streak} steps in a row with nowhere to go "
            "inside it; widen it (fence include, a larger max drift) or inject a concept"
        )
    if session.fence_streak:
        return None  # stuck at the fence, not looping: the rule above names the remedy once it has waited
    cycle = repeating_cycle(recent_loci, tuning.loop_max_period, tuning.loop_repeats)
    if cycle == 1:
        return f"circuit breaker: loop, the last {tuning.loop_repeats} steps all went to the same locus"
    if cycle:
        return (
            f"circuit breaker: loop, the last {cycle * tuning.loop_repeats} steps went round the same "
            f"{cycle} loci {tuning.loop_repeats} times"
        )
    window = recent_loci[-tuning.loop_window :]
    if len(window) >= tuning.loop_window and len(set(window)) < tuning.loop_distinct:
        return f"circuit breaker: loop, the last {len(window)} steps visited only {len(set(window))} loci"
    return None


def repeating_cycle(recent_loci: list[str], max_period: int, repeats: int) -> int | None:
    """The length of the shortest cycle the latest steps went round ``repeats`` times in a row (A-B-A-B is a
    cycle of 2 gone round twice; A-A a cycle of 1), up to ``max_period`` loci, or None.
    """
    for period in range(1, max_period + 1):
        span = period * repeats
        if len(recent_loci) < span:
            break
        tail = recent_loci[-span:]
        if all(tail[i] == tail[i - period] for i in range(period, span)):
            return period
    return None


def checkpoint_due(session: Session) -> bool:
    """Whether this step ends at a human checkpoint, where the session pauses for a person to review."""
    every = session.human_checkpoint_frequency
    return every > 0 and session.step_count > 0 and session.step_count % every == 0
