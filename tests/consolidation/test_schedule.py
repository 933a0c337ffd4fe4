"""The four triggers and the minimum interval, pure and through the service."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from explorer.consolidation.schedule import ScheduleConfig, decide
from explorer.consolidation.service import import_log, run_consolidation
from explorer.store import consolidation as store

from .conftest import SAMPLE_LOG

NOW = datetime(2026, 1, 4, 12, tzinfo=UTC)


def ago(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("trigger", "last", "new", "due", "reason"),
    [
        ("manual", ago(1), 0, True, "asked for"),
        ("session-complete", ago(1), 0, True, "a session completed"),
        ("periodic", None, 3, True, "no run yet"),
        ("periodic", ago(31), 3, True, "the period has passed"),
        ("periodic", ago(29), 3, False, "1740 s since the last run, under the 1800 s period"),
        ("periodic", ago(60), 0, False, "no new experiences since the last run"),
        ("threshold", ago(60), 49, False, "49 new experiences, under the 50 needed"),
        ("threshold", ago(60), 50, True, "50 new experiences"),
        ("threshold", ago(9), 500, False, "540 s since the last run, under the 600 s minimum"),
        ("threshold", None, 50, True, "50 new experiences"),
    ],
)
def test_each_trigger_decides_as_the_spec_says(trigger, last, new, due, reason) -> None:
    decision = decide(trigger, NOW, last, new)
    assert (decision.due, decision.reason) == (due, reason)


def test_a_trigger_can_be_switched_off() -> None:
    off = ScheduleConfig(periodic=False, threshold=False)
    assert not decide("periodic", NOW, None, 10, off).due
    assert not decide("threshold", NOW, None, 100, off).due
    assert decide("manual", NOW, None, 0, off).due


def test_the_service_runs_only_when_the_trigger_is_due(runtime) -> None:
    import_log(runtime, SAMPLE_LOG)
    waiting = run_consolidation(runtime, "imported", "threshold").to_json()
    assert waiting["status"] == "not_due" and waiting["reason"] == "15 new experiences, under the 50 needed"
    first = run_consolidation(runtime, "imported", "periodic").to_json()
    assert first["status"] == "verified" and first["reason"] == "no run yet"
    with runtime.db.connect() as con:
        last = store.last_run_at(con, "imported")
    soon = run_consolidation(runtime, "imported", "periodic", now=last + timedelta(minutes=5)).to_json()
    assert soon["status"] == "not_due" and soon["reason"] == "no new experiences since the last run"
    again = run_consolidation(runtime, "imported", "session-complete").to_json()
    assert again["status"] == "verified" and again["run_id"] != first["run_id"]
    with runtime.db.connect() as con:
        assert con.execute("SELECT count(*) FROM consolidation_runs").fetchone()[0] == 2
