"""The ``explorer dream`` contract: --json fields, --db and EXPLORER_DB, a text summary. Its user errors are in
tests/cli/test_errors.py's table.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner, Result

from explorer.cli import app
from explorer.testing.model_server import SERVED_MODEL

from .conftest import memory, store
from .test_rem_cycle import PASSAGES

REPORT_KEYS = {
    "rem": {
        "seed",
        "current_year",
        "dreams_requested",
        "dreams_stored",
        "dreams_dropped",
        "duplicates",
        "dream_ids",
        "failures",
        "model_calls",
        "spent_cents",
        "budget_exhausted",
        "errors",
    },
    "explore": {
        "seed",
        "eligible_memories",
        "seeds_explored",
        "candidates_judged",
        "candidates_kept",
        "discoveries",
        "dream_ids",
        "failures",
        "model_calls",
        "spent_cents",
        "budget_exhausted",
        "errors",
    },
    "fuse": {
        "eligible_memories",
        "clusters_found",
        "clusters_fused",
        "clusters_rejected",
        "memories_superseded",
        "dream_ids",
        "failures",
        "model_calls",
        "spent_cents",
        "budget_exhausted",
        "errors",
    },
}


def explorer(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, ["dream", *args], env=env)


def dated_db(make_runtime, path: Path) -> Path:
    runtime = make_runtime(db=path)
    store(runtime, [memory(t, year=y, domain="python") for y, texts in PASSAGES.items() for t in texts])
    return path


def test_rem_explore_fuse_and_cycle_print_their_reports(make_runtime, tmp_path: Path) -> None:
    db = dated_db(make_runtime, tmp_path / "dream.duckdb")
    rem = explorer("rem", "--dreams", "2", "--year", "2010", "--seed", "7", "--json", env={"EXPLORER_DB": str(db)})
    assert rem.exit_code == 0, rem.output
    report = json.loads(rem.stdout)
    assert set(report) == REPORT_KEYS["rem"]
    assert (report["seed"], report["current_year"], report["dreams_requested"], report["model_calls"]) == (
        7,
        2010,
        2,
        6,
    )
    assert report["dreams_stored"] + report["dreams_dropped"] == 2
    for command in ("explore", "fuse"):
        out = explorer(command, "--json", "--db", str(db))
        assert out.exit_code == 0, out.output
        assert set(json.loads(out.stdout)) == REPORT_KEYS[command]
    cycle = explorer("cycle", "--dreams", "1", "--json", "--db", str(db))
    assert cycle.exit_code == 0, cycle.output
    night = json.loads(cycle.stdout)
    assert set(night) == {"exploration", "fusion", "rem", "model_calls", "spent_cents", "budget_exhausted", "failures"}
    assert set(night["exploration"]) == REPORT_KEYS["explore"] and set(night["rem"]) == REPORT_KEYS["rem"]
    assert night["model_calls"] == sum(night[k]["model_calls"] for k in ("exploration", "fusion", "rem"))
    text = explorer("fuse", "--db", str(db))
    assert text.exit_code == 0 and text.stdout.startswith("0 of 0 clusters fused")


def test_a_night_through_a_priced_model_keeps_to_its_budget(make_runtime, model_server, tmp_path: Path) -> None:
    db = dated_db(make_runtime, tmp_path / "dream.duckdb")
    server = model_server()
    prices = json.dumps({SERVED_MODEL: [1000.0, 2000.0]})  # dollars per million tokens: a call costs cents
    env = {"EXPLORER_DB": str(db), "EXPLORER_PRICES": prices}
    broke = explorer("rem", "--dreams", "3", "--budget-cents", "0", "--json", env=env)
    assert broke.exit_code == 0, broke.output
    report = json.loads(broke.stdout)
    assert report["budget_exhausted"] and report["spent_cents"] == 0 and report["failures"] == 3
    assert server.requests == []  # a call the budget cannot cover is never sent
    paid = explorer("rem", "--dreams", "3", "--budget-cents", "500", "--seed", "1", "--json", env=env)
    report = json.loads(paid.stdout)
    assert not report["budget_exhausted"] and 0 < report["spent_cents"] <= 500
    assert len(server.requests) == report["model_calls"]


def test_as_of_a_later_date_lets_fresh_memories_fade_into_the_window(make_runtime, tmp_path: Path) -> None:
    db = dated_db(make_runtime, tmp_path / "fresh.duckdb")
    today = json.loads(explorer("explore", "--seed", "1", "--json", "--db", str(db)).stdout)
    assert today["eligible_memories"] == 0  # just read: every memory is at full prominence
    later = explorer("explore", "--seed", "1", "--as-of", "2999-01-01", "--json", "--db", str(db))
    assert later.exit_code == 0, later.output
    assert json.loads(later.stdout)["eligible_memories"] == 0  # centuries on: archived, below the window
    month = (datetime.now(UTC) + timedelta(days=45)).strftime("%Y-%m-%d")
    faded = json.loads(explorer("explore", "--seed", "1", "--as-of", month, "--json", "--db", str(db)).stdout)
    assert faded["eligible_memories"] == len([t for texts in PASSAGES.values() for t in texts])
    assert faded["seeds_explored"] > 0
    bad = explorer("explore", "--as-of", "next week", "--db", str(db))
    assert bad.exit_code != 0 and "--as-of" in bad.output
