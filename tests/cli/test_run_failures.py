"""A run that did none of what was asked ends non-zero: a ``dream``, ``wander run`` or ``consolidate run`` whose
every model call failed (a model server answering 500) exits 1 with one line on stderr naming the first failure,
and ``--json`` still prints the report. A run of which something came exits 0, its failures are warnings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from explorer.cli import app
from explorer.testing.model_server import Reply, Request

SAMPLE_LOG = Path(__file__).parents[1] / "data" / "experiences_sample.jsonl"
# Two months on, the small corpus's memories have faded into the window exploration and fusion act on.
LATER = (datetime.now(UTC) + timedelta(days=60)).strftime("%Y-%m-%d")
NOTHING = "error: the run did none of what was asked: "


def failing(*kinds: str) -> Callable[[Request], Reply | None]:
    """A script answering 500 to the prompts of ``kinds`` (every prompt when none is named), the rest as usual."""
    return lambda request: Reply(status=500) if not kinds or request.kind in kinds else None


def explorer(db: Path, *args: str) -> Result:
    env = {"EXPLORER_DB": str(db), "EXPLORER_RETRIES": "0"}
    return CliRunner().invoke(app, [*args, "--json"], env=env)


def did_nothing(out: Result) -> tuple[dict[str, Any], str]:
    """The report of a run that exited 1, and its one line on stderr (which quotes the server's 500)."""
    assert out.exit_code == 1, out.output
    (line,) = out.stderr.splitlines()
    assert line.startswith(NOTHING) and "500" in line
    return json.loads(out.stdout), line


@pytest.mark.parametrize(
    ("args", "failed"),
    [
        (("dream", "rem", "--dreams", "2", "--seed", "1"), lambda r: f"{r['failures']} of 2 dreams"),
        (("dream", "explore", "--seed", "1", "--as-of", LATER), lambda r: f"{r['failures']} of 6 seeds"),
        (("dream", "fuse", "--as-of", LATER), lambda r: f"{r['failures']} of 1 clusters"),
    ],
    ids=["rem", "explore", "fuse"],
)
def test_a_dreaming_run_whose_every_item_failed_exits_1(
    args: tuple[str, ...], failed: Callable[[dict], str], corpus_copy: Path, model_server: Callable[..., Any]
) -> None:
    server = model_server(script=failing())
    report, line = did_nothing(explorer(corpus_copy, *args))
    assert report["model_calls"] == len(server.requests) > 0 and report["failures"] > 0
    assert line == f"{NOTHING}{failed(report)} failed: {report['errors'][0]}"


def test_a_night_whose_every_mechanism_failed_exits_1(corpus_copy: Path, model_server: Callable[..., Any]) -> None:
    model_server(script=failing())
    night, line = did_nothing(explorer(corpus_copy, "dream", "cycle", "--dreams", "2", "--seed", "1", "--as-of", LATER))
    e, f, r = night["exploration"], night["fusion"], night["rem"]
    assert e["failures"] and f["failures"] and r["failures"] == 2
    parts = f"{e['failures']} of {e['seeds_explored']} seeds, {f['failures']} of 1 clusters, 2 of 2 dreams"
    assert line == f"{NOTHING}{parts} failed: {e['errors'][0]}"


def test_a_night_of_which_something_came_exits_0(corpus_copy: Path, model_server: Callable[..., Any]) -> None:
    model_server(script=failing("rem_question", "rem_synthesis", "dream_relation"))
    out = explorer(corpus_copy, "dream", "cycle", "--dreams", "2", "--seed", "1", "--as-of", LATER)
    assert out.exit_code == 0, out.output
    night = json.loads(out.stdout)
    assert night["rem"]["failures"] == 2 and night["exploration"]["candidates_judged"] > 0


def new_session(db: Path) -> str:
    created = explorer(db, "wander", "new", "--seed-concept", "memory", "--seed", "3", "--checkpoint-every", "0")
    return str(json.loads(created.stdout)["session_id"])


def test_a_walk_whose_every_step_failed_to_dwell_exits_1(corpus_copy: Path, model_server: Callable[..., Any]) -> None:
    sid = new_session(corpus_copy)
    model_server(script=failing())
    walked, line = did_nothing(explorer(corpus_copy, "wander", "run", sid, "--steps", "2"))
    assert (walked["steps_completed"], walked["dwellings_failed"], walked["stopped_reason"]) == (2, 2, None)
    assert line == f"{NOTHING}2 of 2 steps failed: {walked['errors'][0]}"
    assert walked["errors"][0].startswith("step 1: ") and "dwelling failed: " in walked["errors"][0]
    # the next failure trips the circuit breaker (three steps in a row failed to dwell) on the run's first step
    tripped, line = did_nothing(explorer(corpus_copy, "wander", "run", sid, "--steps", "10"))
    assert (tripped["steps_completed"], tripped["dwellings_failed"]) == (1, 1)
    assert "circuit breaker: 3 steps in a row failed to dwell" in tripped["stopped_reason"]
    assert line == f"{NOTHING}1 of 1 steps failed: {tripped['errors'][0]}"


def test_a_walk_with_one_step_that_dwelt_exits_0(corpus_copy: Path, model_server: Callable[..., Any]) -> None:
    sid = new_session(corpus_copy)
    dwellings = iter(range(1_000))
    model_server(
        script=lambda request: Reply(status=500) if request.kind == "wander_dwell" and next(dwellings) else None
    )
    out = explorer(corpus_copy, "wander", "run", sid, "--steps", "3")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["dwellings_failed"] == 2


def test_a_consolidation_whose_every_pattern_failed_exits_1(tmp_path: Path, model_server: Callable[..., Any]) -> None:
    db = tmp_path / "explorer.duckdb"
    assert explorer(db, "consolidate", "import", str(SAMPLE_LOG)).exit_code == 0
    server = model_server(script=failing())
    report, line = did_nothing(explorer(db, "consolidate", "run", "--source", "imported"))
    assert report["patterns"] == [] and report["model_calls"] == len(server.requests) == report["clusters"] > 0
    assert line == f"{NOTHING}{report['failures']} of {report['clusters']} clusters failed: {report['errors'][0]}"


def test_a_consolidation_whose_patterns_came_exits_0(tmp_path: Path, model_server: Callable[..., Any]) -> None:
    db = tmp_path / "explorer.duckdb"
    assert explorer(db, "consolidate", "import", str(SAMPLE_LOG)).exit_code == 0
    model_server(script=failing("consolidation_abstraction", "consolidation_relation", "consolidation_contradiction"))
    out = explorer(db, "consolidate", "run", "--source", "imported")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["patterns"] and report["failures"] > 0


def test_a_run_with_nothing_to_ask_exits_0(corpus_copy: Path, model_server: Callable[..., Any]) -> None:
    server = model_server(script=failing())
    out = explorer(corpus_copy, "dream", "explore", "--seed", "1")  # today nothing has faded: no seed to explore
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["seeds_explored"] == 0 and server.requests == []
