"""A stage of the step (explorer/wander/step_outcome.py) that decides on its own: how a step ends the session.
The whole chain is walked by the service tests.
"""

from __future__ import annotations

from dataclasses import replace

from explorer.records.wander import Session, utcnow
from explorer.wander.step_outcome import _settled


def test_a_step_ends_the_session_by_the_first_rule_that_holds() -> None:
    now = utcnow()
    last = Session(
        name="s",
        seed_concept="x",
        max_steps=10,
        step_count=10,
        human_checkpoint_frequency=5,
        cloud_budget_cents=3,
        cloud_spent_cents=3.0,
    )
    done = _settled(last, "circuit breaker: loop", True, now)
    assert (done.status, done.status_reason, done.pause_kind, done.completed_at) == (
        "completed",
        "reached max steps (10)",
        None,
        now,
    )
    mid = replace(last, step_count=5)
    tripped = _settled(mid, "circuit breaker: loop", True, now)
    assert (tripped.status, tripped.status_reason, tripped.pause_kind) == (
        "paused",
        "circuit breaker: loop",
        "circuit_breaker",
    )
    broke = _settled(mid, None, True, now)
    assert broke.pause_kind == "budget" and broke.status_reason is not None
    assert broke.status_reason.startswith("cloud budget exhausted (3.00 of 3 cents)")
    checkpoint = _settled(mid, None, False, now)
    assert checkpoint.pause_kind == "checkpoint" and checkpoint.completed_at is None
    going = _settled(replace(mid, step_count=6, status_reason="checkpoint", pause_kind="checkpoint"), None, False, now)
    assert (going.status, going.status_reason, going.pause_kind, going.completed_at) == ("active", None, None, None)
