"""The four triggers and the minimum interval, pure and through the service."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from typer.testing import CliRunner

from explorer.cli import app
from explorer.consolidation.schedule import ScheduleConfig, decide
from explorer.consolidation.service import import_log, run_consolidation
from explorer.store import consolidation as consolidation_store

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
        last = consolidation_store.last_run_at(con, "imported")
    soon = run_consolidation(runtime, "imported", "periodic", now=last + timedelta(minutes=5)).to_json()
    assert soon["status"] == "not_due" and soon["reason"] == "no new experiences since the last run"
    again = run_consolidation(runtime, "imported", "session-complete").to_json()
    assert again["status"] == "verified" and again["run_id"] != first["run_id"]
    with runtime.db.connect() as con:
        assert con.execute("SELECT count(*) FROM consolidation_runs").fetchone()[0] == 2


def test_the_schedule_runs_what_is_due_at_each_check(tmp_path) -> None:
    # The first check finds no run yet (periodic: due), the next ones nothing new: one run in three checks, a
    # line of JSON for it.
    db = str(tmp_path / "explorer.duckdb")
    runner = CliRunner()
    assert runner.invoke(app, ["consolidate", "import", str(SAMPLE_LOG), "--db", db]).exit_code == 0
    args = ["consolidate", "schedule", "--source", "imported", "--every", "0.1", "--checks", "3", "--db", db]
    ran = runner.invoke(app, [*args, "--json"], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    (line,) = ran.stdout.splitlines()
    report = json.loads(line)
    assert report["trigger"] == "periodic" and report["reason"] == "no run yet" and report["status"] == "verified"
    quiet = runner.invoke(app, [*args, "--checks", "1"], catch_exceptions=False)
    assert quiet.exit_code == 0 and quiet.stdout == ""  # nothing new: no run, nothing said
    assert runner.invoke(app, ["consolidate", "schedule", "--every", "0", "--db", db]).exit_code == 2
