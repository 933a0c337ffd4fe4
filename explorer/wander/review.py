"""A person's review of crystals: one decision, a bulk decision over a filter, a crystal's history, and reverting
any entry of it.

Every change goes through the review state machine (:mod:`explorer.wander.guards`) and is kept in the review log
(``wander_reviews``) with who, when, the notes, the state before and after and the crystal's review fields on
each side, so it can be put back exactly; each is also an event (``wander.crystal.validated``, or
``wander.crystal.review_reverted``) for whoever follows the session.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from explorer.errors import Remedy
from explorer.records import new_id
from explorer.records.wander import (
    REVIEW_OUTCOMES,
    BulkReview,
    Crystal,
    Review,
    ReviewDecision,
    ReviewFilter,
    ReviewState,
    review_fields,
    utcnow,
)
from explorer.runtime import Runtime
from explorer.store import events as events_store
from explorer.store import reviews as reviews_store
from explorer.store import wander as wander_store
from explorer.store.database import Connection
from explorer.wander.errors import NotFound
from explorer.wander.guards import (
    require_decision,
    require_revert,
    require_review,
    review_allowed,
    review_values,
)

HUMAN = "human"  # who reviewed, when the person did not say


def require_crystal(con: Connection, crystal_id: str, *, lock: bool = False) -> Crystal:
    """The crystal, or :class:`NotFound` naming how to list them; ``lock`` when the transaction decides on it (see
    :func:`explorer.store.wander.get_crystal`).
    """
    crystal = wander_store.get_crystal(con, str(crystal_id), lock=lock)
    if crystal is None:
        raise NotFound(f"no crystal {crystal_id!r}", remedy=Remedy.LIST_CRYSTALS, subject=str(crystal_id))
    return crystal


def get_crystal(runtime: Runtime, crystal_id: str) -> Crystal:
    """The crystal with this id (without its vector), or :class:`NotFound`."""
    with runtime.db.connect() as con:
        return require_crystal(con, crystal_id)


def _who(reviewer: str | None) -> str:
    return (reviewer or "").strip() or HUMAN


def _decide(
    crystal: Crystal,
    decision: ReviewDecision,
    reviewer: str,
    notes: str | None,
    now: datetime,
    batch_id: str | None = None,
) -> tuple[Review, dict[str, Any]]:
    """The log entry of ``decision`` on ``crystal`` and the crystal fields to store (the state machine has
    allowed it, forced or not).
    """
    values = review_values(crystal, decision, reviewer, now)
    if notes is not None:
        values["validation_notes"] = notes
    before, target = crystal.review_state, REVIEW_OUTCOMES[decision]
    review = Review(
        crystal_id=crystal.id,
        decision=decision,
        reviewer=reviewer,
        state_before=before,
        state_after=target,
        values_before=crystal.review_values(),
        values_after=replace(crystal, **values).review_values(),
        notes=notes,
        forced=not review_allowed(before, target),
        batch_id=batch_id,
        created_at=now,
    )
    return review, values


def _event(review: Review) -> dict[str, Any]:
    """The ``wander.crystal.validated`` payload of a decision (its shape predates the review log)."""
    return {
        "crystal_id": review.crystal_id,
        "decision": review.decision,
        "before": review.state_before.value,
        "after": review.state_after.value,
        "forced": review.forced,
        "validated_by": "human",
        "reviewer": review.reviewer,
        "notes": review.notes,
    }


def review_crystal(
    runtime: Runtime,
    crystal_id: str,
    decision: str,
    notes: str | None = None,
    reviewer: str | None = None,
    force: bool = False,
) -> Crystal:
    """A person's verdict: approve (human_approved), reject (invalidated) or archive; logged, so it can be
    reverted (:func:`revert_review`). Returns the crystal as it now is (:func:`decide` returns the log entry).

    The review state machine (:func:`~explorer.wander.guards.require_review`) refuses to overturn an earlier
    review unless ``force`` says the person means it.

    Example::

        review_crystal(runtime, crystal_id, "approve", notes="checked the sources", reviewer="ann")
        review_crystal(runtime, crystal_id, "reject", force=True)  # a change of mind must say so
    """
    with runtime.db.transaction() as tx:
        entry = decide(runtime, crystal_id, decision, notes=notes, reviewer=reviewer, force=force)
        return require_crystal(tx, entry.crystal_id)


def decide(
    runtime: Runtime,
    crystal_id: str,
    decision: str,
    notes: str | None = None,
    reviewer: str | None = None,
    force: bool = False,
) -> Review:
    """:func:`review_crystal`, returning the review's log entry (what an undo reverts)."""
    chosen = require_decision(decision)
    with runtime.db.transaction() as tx:
        crystal = require_crystal(tx, crystal_id, lock=True)
        require_review(crystal, chosen, force)
        review, values = _decide(crystal, chosen, _who(reviewer), notes, utcnow())
        wander_store.update_crystal(tx, crystal.id, **values)
        reviews_store.insert_reviews(tx, [review])
        events_store.emit(tx, "wander.crystal.validated", _event(review), crystal.session_id)
    return review


def review_history(runtime: Runtime, crystal_id: str) -> list[Review]:
    """Every review of a crystal and every revert, oldest first."""
    with runtime.db.connect() as con:
        return reviews_store.crystal_reviews(con, require_crystal(con, crystal_id).id)


def revert_review(
    runtime: Runtime,
    review_id: str,
    reviewer: str | None = None,
    notes: str | None = None,
    force: bool = False,
) -> Review:
    """Put a crystal back exactly as it was before a review (its status, approval and notes), if it is still as
    that review left it (``force``: whatever happened since). The revert is logged too, so it can itself be
    reverted (a redo). Returns the revert's log entry.
    """
    with runtime.db.transaction() as tx:
        reviewed = reviews_store.get_review(tx, str(review_id))
        if reviewed is None:
            raise NotFound(f"no review {review_id!r} (a crystal's history lists its reviews)", subject=str(review_id))
        crystal = require_crystal(tx, reviewed.crystal_id, lock=True)
        target = require_revert(crystal, reviewed, force)
        assert reviewed.values_before is not None  # require_revert refuses an entry without them
        values = review_fields(reviewed.values_before)
        revert = Review(
            crystal_id=crystal.id,
            decision="revert",
            reviewer=_who(reviewer),
            state_before=crystal.review_state,
            state_after=target,
            values_before=crystal.review_values(),
            values_after=replace(crystal, **values).review_values(),
            notes=notes,
            forced=crystal.review_values() != reviewed.values_after,
            reverts=reviewed.id,
            created_at=utcnow(),
        )
        wander_store.update_crystal(tx, crystal.id, **values)
        reviews_store.insert_reviews(tx, [revert])
        events_store.emit(
            tx,
            "wander.crystal.review_reverted",
            {
                "crystal_id": crystal.id,
                "review_id": revert.id,
                "reverts": reviewed.id,
                "before": revert.state_before.value,
                "after": revert.state_after.value,
                "forced": revert.forced,
                "reviewer": revert.reviewer,
                "notes": notes,
            },
            crystal.session_id,
        )
    return revert


def _matching(con: Connection, where: ReviewFilter, *, lock: bool = False) -> list[Crystal]:
    """The crystals ``where`` takes, in the order a person reviews them: surest first; ``lock`` when the
    transaction decides on them (see :func:`explorer.store.wander.get_crystal`).
    """
    if where.session_id:  # a short id as the pages show it
        where = replace(where, session_id=wander_store.session_id_of(con, where.session_id))
    found = wander_store.list_crystals(
        con, min_confidence=where.min_confidence, session_id=where.session_id, states=where.states, lock=lock
    )
    return sorted((c for c in found if where.matches(c)), key=lambda c: (-c.confidence, c.id))


def awaiting_review(runtime: Runtime) -> int:
    """How many crystals, of every session, await a person's review (a count, not the crystals)."""
    with runtime.db.connect() as con:
        return wander_store.count_crystals(con, states={ReviewState.PENDING})


def review_queue(runtime: Runtime, where: ReviewFilter | None = None) -> list[Crystal]:
    """The crystals ``where`` takes (default: every one awaiting review), in the order a person reviews them:
    surest first.
    """
    with runtime.db.connect() as con:
        return _matching(con, where or ReviewFilter())


@dataclass
class QueueView:
    """What a review queue shows: the crystals it holds, the one under review and that one's history."""

    queue: list[Crystal]
    crystal: Crystal | None
    history: list[Review]


def queue_view(
    runtime: Runtime, where: ReviewFilter, crystal_id: str | None = None, skipped: Sequence[str] = ()
) -> QueueView:
    """The queue ``where`` takes, with ``crystal_id`` under review (any crystal, in the queue or not; an unknown
    id is :class:`NotFound`) or, without one, the next to review: the surest not ``skipped``, else the one skipped
    longest ago. One short read, since a person waits on it after every key.
    """
    with runtime.db.connect() as con:
        queue = _matching(con, where)
        crystal: Crystal | None
        if crystal_id:
            crystal = next((c for c in queue if c.id == crystal_id), None) or require_crystal(con, crystal_id)
        else:
            waiting = [c for c in queue if c.id not in skipped]
            by_id = {c.id: c for c in queue}
            waiting += [by_id[i] for i in skipped if i in by_id]
            crystal = waiting[0] if waiting else None
        history = reviews_store.crystal_reviews(con, crystal.id) if crystal else []
    return QueueView(queue, crystal, history)


def bulk_review(
    runtime: Runtime,
    where: ReviewFilter,
    decision: str,
    notes: str | None = None,
    reviewer: str | None = None,
    force: bool = False,
    dry_run: bool = False,
) -> BulkReview:
    """One decision on every crystal ``where`` takes, in one transaction, each one logged (with the batch's id)
    as if reviewed alone; crystals the decision would overturn are left alone and counted unless ``force``.
    ``dry_run`` only counts, for the confirmation a person sees first.
    """
    chosen = require_decision(decision)
    target = REVIEW_OUTCOMES[chosen]
    with runtime.db.transaction() as tx:
        matched = _matching(tx, where, lock=not dry_run)
        taken = [c for c in matched if force or review_allowed(c.review_state, target)]
        report = BulkReview(chosen, len(matched), len(taken), len(matched) - len(taken), dry_run)
        if dry_run or not taken:
            return report
        report.batch_id = batch = new_id()
        who, now = _who(reviewer), utcnow()
        reviews: list[Review] = []
        same_values: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        stored: dict[tuple[Any, ...], dict[str, Any]] = {}
        by_session: dict[str | None, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        for crystal in taken:
            review, values = _decide(crystal, chosen, who, notes, now, batch)
            reviews.append(review)
            key = tuple(sorted(values.items()))
            same_values[key].append(crystal.id)
            stored[key] = values
            by_session[crystal.session_id].append(("wander.crystal.validated", _event(review)))
        for key, ids in same_values.items():
            wander_store.update_crystals(tx, ids, **stored[key])
        reviews_store.insert_reviews(tx, reviews)
        for session_id, items in by_session.items():
            events_store.emit_many(tx, items, session_id)
        events_store.emit(
            tx,
            "wander.crystal.bulk_reviewed",
            {
                "batch_id": batch,
                "decision": chosen,
                "matched": report.matched,
                "reviewed": report.reviewed,
                "refused": report.refused,
                "reviewer": who,
                "notes": notes,
                "filter": {
                    "session_id": where.session_id,
                    "min_confidence": where.min_confidence,
                    "max_confidence": where.max_confidence,
                    "states": sorted(where.states),
                },
            },
        )
    return report
