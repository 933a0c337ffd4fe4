"""The ``explorer dream`` contract: --json fields, --db, progress on stderr, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
        "failures",
        "model_calls",
        "errors",
    },
    "explore": {
        "seed",
        "eligible_memories",
        "seeds_explored",
        "candidates_judged",
        "discoveries",
        "failures",
        "model_calls",
        "errors",
    },
    "fuse": {
        "eligible_memories",
        "clusters_found",
        "clusters_fused",
        "clusters_rejected",
        "memories_superseded",
        "failures",
        "model_calls",
        "errors",
    },
}


def explorer(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "dream", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def dated_db(make_runtime, path: Path) -> Path:
    runtime = make_runtime(db=path)
    store(runtime, [memory(t, year=y, domain="python") for y, texts in PASSAGES.items() for t in texts])
    return path


def test_rem_explore_fuse_and_cycle_print_their_reports(make_runtime, tmp_path: Path) -> None:
    db = dated_db(make_runtime, tmp_path / "dream.duckdb")
    rem = explorer("rem", "--dreams", "2", "--year", "2010", "--seed", "7", "--json", env={"EXPLORER_DB": str(db)})
    assert rem.returncode == 0, rem.stderr
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
        assert out.returncode == 0, out.stderr
        assert set(json.loads(out.stdout)) == REPORT_KEYS[command]
    cycle = explorer("cycle", "--dreams", "1", "--json", "--db", str(db))
    assert cycle.returncode == 0, cycle.stderr
    night = json.loads(cycle.stdout)
    assert set(night) == {"exploration", "fusion", "rem", "model_calls", "failures"}
    assert set(night["exploration"]) == REPORT_KEYS["explore"] and set(night["rem"]) == REPORT_KEYS["rem"]
    assert night["model_calls"] == sum(night[k]["model_calls"] for k in ("exploration", "fusion", "rem"))
    text = explorer("fuse", "--db", str(db))
    assert text.returncode == 0 and text.stdout.startswith("0 of 0 clusters fused")


def test_user_errors_are_one_line_without_traceback(make_runtime, tmp_path: Path) -> None:
    db = dated_db(make_runtime, tmp_path / "dream.duckdb")
    cases = [
        (("rem", "--db", str(tmp_path / "empty.duckdb")), "error: the knowledge base holds 0 node(s) to dream over"),
        (("rem", "--year", "1999", "--db", str(db)), "error: no nodes from 1999 to dream from"),
        (("chrono", str(tmp_path), "--every", "week", "--db", str(db)), "error: --every must be year or month"),
    ]
    for args, start in cases:
        out = explorer(*args)
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith(start), out.stderr
