"""Reviewing crystals: the review log (who, when, why, the state and fields before and after), a crystal's
history, reverting any entry exactly (and the revert itself), and bulk reviews over a filter, all through the one
review state machine. On a real DuckDB file; the crystals are stored directly, as a walk would store them.
"""

from __future__ import annotations

import pytest

from explorer.errors import Remedy
from explorer.records.wander import Crystal, ReviewFilter, ReviewState
from explorer.runtime import Runtime
from explorer.store import events as events_store
from explorer.store import wander as wander_store
from explorer.store.database import DatabaseFailure, migrations
from explorer.store.dialect import dialect
from explorer.wander import review
from explorer.wander import service as wander
from explorer.wander.errors import InvalidRequest, NotFound, SessionStateError
from explorer.wander.guards import REVIEW_TRANSITIONS, require_revert


def stored_crystals(runtime: Runtime, confidences: list[float], session_id: str | None = None) -> list[Crystal]:
    crystals = [
        Crystal(
            insight=f"Insight number {i}: caches forget what nothing refers to.",
            embedding=runtime.embedder.embed([f"insight {i}"])[0],
            confidence=confidence,
            actionability=0.5,
            domains=["python"],
            session_id=session_id,
            validated_by="offline/extractive",
            validation_notes="formed by the walk",
        )
        for i, confidence in enumerate(confidences)
    ]
    with runtime.db.transaction() as con:
        for crystal in crystals:
            wander_store.insert_crystal(con, crystal)
    return crystals


def current(runtime: Runtime, crystal_id: str) -> Crystal:
    with runtime.db.connect() as con:
        return review.require_crystal(con, crystal_id)


def test_a_review_is_logged_with_who_when_why_and_both_sides(runtime: Runtime) -> None:
    (crystal,) = stored_crystals(runtime, [0.7])
    approved = wander.review_crystal(runtime, crystal.id, "approve", notes="read the chunks", reviewer=" ann ")
    (entry,) = review.review_history(runtime, crystal.id)
    assert entry.decision == "approve" and entry.reviewer == "ann" and entry.notes == "read the chunks"
    assert (entry.state_before, entry.state_after) == (ReviewState.PENDING, ReviewState.APPROVED)
    assert entry.values_before == crystal.review_values() and entry.values_after == approved.review_values()
    assert entry.values_before["validation_notes"] == "formed by the walk"
    assert entry.created_at is not None and not entry.forced and entry.batch_id is None and entry.revertible
    assert entry.created_at == approved.human_approved_at
    # the event the session's followers hear keeps its shape
    with runtime.db.connect() as con:
        (event,) = events_store.list_events(con, subject_prefix="wander.crystal.validated")
    assert event.payload["before"] == "pending" and event.payload["after"] == "approved"
    assert event.payload["reviewer"] == "ann" and event.payload["notes"] == "read the chunks"


def test_revert_puts_back_exactly_what_was_there_and_is_logged_too(runtime: Runtime) -> None:
    (crystal,) = stored_crystals(runtime, [0.7])
    wander.review_crystal(runtime, crystal.id, "approve", notes="looks right", reviewer="ann")
    (approval,) = review.review_history(runtime, crystal.id)
    undo = review.revert_review(runtime, approval.id, reviewer="bob", notes="too quick")
    restored = current(runtime, crystal.id)
    assert restored.review_values() == crystal.review_values()  # status, approval, who, when, the notes
    assert restored.review_state is ReviewState.PENDING and restored.validation_notes == "formed by the walk"
    assert undo.decision == "revert" and undo.reverts == approval.id and undo.reviewer == "bob"
    assert (undo.state_before, undo.state_after) == (ReviewState.APPROVED, ReviewState.PENDING)
    assert [e.id for e in review.review_history(runtime, crystal.id)] == [approval.id, undo.id]
    # the approval is no longer what the crystal shows: it cannot be reverted again, but the revert can (a redo)
    with pytest.raises(SessionStateError, match="changed since review") as refused:
        review.revert_review(runtime, approval.id)
    assert refused.value.remedy is Remedy.FORCE_REVIEW
    redo = review.revert_review(runtime, undo.id)
    assert current(runtime, crystal.id).review_values() == approval.values_after
    assert redo.state_after is ReviewState.APPROVED and redo.reverts == undo.id
    with runtime.db.connect() as con:
        reverted = events_store.list_events(con, subject_prefix="wander.crystal.review_reverted")
    assert [(e.payload["reverts"], e.payload["after"]) for e in reverted] == [
        (approval.id, "pending"),
        (undo.id, "approved"),
    ]


def test_an_older_decision_is_reverted_only_when_forced(runtime: Runtime) -> None:
    (crystal,) = stored_crystals(runtime, [0.7])
    wander.review_crystal(runtime, crystal.id, "approve", reviewer="ann")
    wander.review_crystal(runtime, crystal.id, "archive", reviewer="ann")
    approval, archiving = review.review_history(runtime, crystal.id)
    with pytest.raises(SessionStateError, match="revert the later review first"):
        review.revert_review(runtime, approval.id)
    forced = review.revert_review(runtime, approval.id, force=True)
    assert forced.forced and current(runtime, crystal.id).review_values() == crystal.review_values()
    # the archiving's own revert now finds the crystal changed under it
    with pytest.raises(SessionStateError):
        review.revert_review(runtime, archiving.id)


def test_a_revert_goes_through_the_state_machine(runtime: Runtime) -> None:
    (crystal,) = stored_crystals(runtime, [0.7])
    wander.review_crystal(runtime, crystal.id, "reject")
    (rejection,) = review.review_history(runtime, crystal.id)
    # a rejected crystal has no edge out of it but the one the rejection took, backwards
    assert REVIEW_TRANSITIONS[ReviewState.REJECTED] == frozenset()
    assert require_revert(current(runtime, crystal.id), rejection) is ReviewState.PENDING
    other = stored_crystals(runtime, [0.2])[0]
    with pytest.raises(InvalidRequest, match="not"):
        require_revert(other, rejection)
    with pytest.raises(NotFound, match="no review"):
        review.revert_review(runtime, "not-a-review")
    with pytest.raises(NotFound, match="no crystal"):
        review.review_history(runtime, "not-a-crystal")
    with pytest.raises(InvalidRequest, match="approve, reject, archive"):
        wander.review_crystal(runtime, crystal.id, "revert")


def test_decisions_logged_before_the_log_existed_are_history_not_revertible(runtime: Runtime) -> None:
    """Migration 011 recovers earlier decisions from the event log, without the fields to put back."""
    (crystal,) = stored_crystals(runtime, [0.7])
    wander.review_crystal(runtime, crystal.id, "approve", reviewer="ann", notes="fine")
    with runtime.db.transaction() as con:
        con.execute("DELETE FROM wander_reviews")
        package = "explorer.store.migrations" + (".postgres" if dialect(con).name == "postgres" else "")
        (migration,) = [sql for version, _, sql in migrations(package) if version == 11]
        con.execute(migration[migration.index("INSERT INTO wander_reviews") :])
    (recovered,) = review.review_history(runtime, crystal.id)
    assert (recovered.decision, recovered.reviewer, recovered.notes) == ("approve", "ann", "fine")
    assert recovered.state_after is ReviewState.APPROVED and not recovered.revertible
    with pytest.raises(SessionStateError, match="cannot be reverted"):
        review.revert_review(runtime, recovered.id)


def test_bulk_review_counts_first_then_decides_each_match_through_the_state_machine(runtime: Runtime) -> None:
    session = "00000000-0000-4000-8000-000000000001"
    crystals = stored_crystals(runtime, [0.9, 0.8, 0.6, 0.4, 0.3], session_id=session)
    stored_crystals(runtime, [0.85])  # another session's (none): outside the filter
    wander.review_crystal(runtime, crystals[1].id, "reject")  # reviewed already: not pending
    where = ReviewFilter(session_id=session, min_confidence=0.5, max_confidence=0.95)
    preview = review.bulk_review(runtime, where, "approve", dry_run=True)
    assert preview.to_json() == {
        "decision": "approve",
        "matched": 2,
        "reviewed": 2,
        "refused": 0,
        "dry_run": True,
        "batch_id": None,
    }
    assert all(current(runtime, c.id).review_state is ReviewState.PENDING for c in (crystals[0], crystals[2]))
    done = review.bulk_review(runtime, where, "approve", notes="batch of sure ones", reviewer="ann")
    assert (done.matched, done.reviewed, done.refused, done.dry_run) == (2, 2, 0, False) and done.batch_id
    states = {c.id: current(runtime, c.id).review_state for c in crystals}
    assert [states[c.id] for c in crystals] == [
        ReviewState.APPROVED,
        ReviewState.REJECTED,
        ReviewState.APPROVED,
        ReviewState.PENDING,
        ReviewState.PENDING,
    ]
    entry = review.review_history(runtime, crystals[0].id)[-1]
    assert entry.batch_id == done.batch_id and entry.reviewer == "ann" and entry.notes == "batch of sure ones"
    assert current(runtime, crystals[0].id).validation_notes == "batch of sure ones"
    # any state: the rejected one would be overturned, so it is refused and counted unless forced
    anything = ReviewFilter(session_id=session, states=frozenset(ReviewState))
    refused = review.bulk_review(runtime, anything, "reject", dry_run=True)
    assert (refused.matched, refused.reviewed, refused.refused) == (5, 2, 3)
    forced = review.bulk_review(runtime, anything, "reject", force=True)
    assert (forced.matched, forced.reviewed, forced.refused) == (5, 5, 0)
    assert all(current(runtime, c.id).review_state is ReviewState.REJECTED for c in crystals)
    # each entry of a bulk review reverts on its own, exactly
    last = review.review_history(runtime, crystals[0].id)[-1]
    assert last.forced and last.batch_id == forced.batch_id
    review.revert_review(runtime, last.id)
    assert current(runtime, crystals[0].id).review_state is ReviewState.APPROVED
    with runtime.db.connect() as con:
        bulk = events_store.list_events(con, subject_prefix="wander.crystal.bulk_reviewed")
        validated = events_store.list_events(con, subject_prefix="wander.crystal.validated")
    assert [(e.payload["decision"], e.payload["reviewed"]) for e in bulk] == [("approve", 2), ("reject", 5)]
    assert len(validated) == 1 + 2 + 5
    nothing = review.bulk_review(runtime, ReviewFilter(min_confidence=0.99), "archive")
    assert (nothing.matched, nothing.reviewed, nothing.batch_id) == (0, 0, None)
    with pytest.raises(InvalidRequest):
        review.bulk_review(runtime, where, "maybe")


def test_the_review_queue_is_the_pending_crystals_surest_first(runtime: Runtime) -> None:
    crystals = stored_crystals(runtime, [0.3, 0.9, 0.6])
    wander.review_crystal(runtime, crystals[2].id, "archive")
    assert [c.id for c in review.review_queue(runtime)] == [crystals[1].id, crystals[0].id]
    assert [c.id for c in review.review_queue(runtime, ReviewFilter(states=frozenset({ReviewState.ARCHIVED})))] == [
        crystals[2].id
    ]


def test_the_log_refuses_what_the_state_machine_does_not_know(runtime: Runtime) -> None:
    (crystal,) = stored_crystals(runtime, [0.5])
    with pytest.raises(DatabaseFailure, match="(?i)check constraint"), runtime.db.connect() as con:
        con.execute(
            "INSERT INTO wander_reviews (crystal_id, decision, reviewer, state_before, state_after) "
            "VALUES (?, 'maybe', 'x', 'pending', 'approved')",
            [crystal.id],
        )


def test_the_store_narrows_and_counts_by_review_state_as_the_records_read_it(runtime: Runtime) -> None:
    """The review queue reads only the states it shows, in SQL: that SQL means what ``Crystal.review_state`` does,
    for every state and every set of them.
    """
    stored = stored_crystals(runtime, [0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    wander.review_crystal(runtime, stored[0].id, "approve")
    wander.review_crystal(runtime, stored[1].id, "reject")
    wander.review_crystal(runtime, stored[2].id, "archive")
    wander.review_crystal(runtime, stored[3].id, "approve")
    wander.review_crystal(runtime, stored[3].id, "archive", force=True)  # approved, then archived: archived
    with runtime.db.connect() as con:
        every = wander_store.list_crystals(con)
        for chosen in [
            set(),
            *({s} for s in ReviewState),
            set(ReviewState),
            {ReviewState.PENDING, ReviewState.REJECTED},
        ]:
            expected = {c.id for c in every if c.review_state in chosen}
            assert {c.id for c in wander_store.list_crystals(con, states=chosen)} == expected, chosen
            assert wander_store.count_crystals(con, states=chosen) == len(expected), chosen
        assert wander_store.count_crystals(con) == len(every) == 6
    assert review.awaiting_review(runtime) == 2
    assert [c.id for c in review.review_queue(runtime)] == [stored[4].id, stored[5].id]
