"""``explorer consolidate`` end to end with the offline provider on a real store, and its user errors: one
line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from explorer.cli import app

from .conftest import SAMPLE_LOG

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_import_run_and_query_through_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "explorer.duckdb")
    log = tmp_path / "log.jsonl"
    log.write_text(SAMPLE_LOG.read_text(encoding="utf-8") + '{"kind": "move", "description": "no outcome"}\n')
    imported = invoke("consolidate", "import", str(log), "--db", db)
    assert imported.exit_code == 0
    assert imported.stdout == "15 experiences imported, 0 already present\n"
    assert imported.stderr == f"error: {log}:16: a move needs an outcome (success, failure or progress)\n"

    ran = invoke("consolidate", "run", "--source", "imported", "--db", db, "--json")
    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.stdout)
    assert report["status"] == "verified" and report["verification"]["score"] >= 0.8
    assert report["compression_ratio"] == 5.0 and report["ladder_levels"] == 4
    assert {p["name"] for p in report["patterns"]} == {"Naked single", "Hidden single", "Backtracking"}
    assert report["model_calls"] > 0 and report["spent_cents"] == 0.0

    text = invoke("consolidate", "run", "--db", db)
    assert text.exit_code == 0
    assert "15 experiences, 13 kept by triage, 3 patterns (compression 5:1), a ladder of 4 levels" in text.stdout
    assert "verification: verified (score 1.00)" in text.stdout
    assert "warning: compression ratio 5.0:1 is below the target 10:1 (±30%)" in text.stderr

    query = invoke("consolidate", "query", "a digit fits one square of a row", "--db", db, "--json")
    found = json.loads(query.stdout)
    assert found["patterns"][0]["name"] == "Hidden single" and found["patterns"][0]["actions"]
    assert invoke("consolidate", "query", "a digit fits one square", "--db", db).stdout.startswith("0.")


@pytest.mark.parametrize(
    ("args", "status", "line"),
    [
        (["import", "{tmp}/missing.jsonl"], 1, "error: {tmp}/missing.jsonl: No such file or directory"),
        (["import", "{tmp}/empty.jsonl"], 1, "error: {tmp}/empty.jsonl: empty file"),
        (
            ["import", "{tmp}/binary.jsonl"],
            1,
            "error: {tmp}/binary.jsonl: binary file (it contains NUL bytes), not text",
        ),
        (["import", "{tmp}/bad.jsonl"], 1, "error: {tmp}/bad.jsonl:1: malformed JSON"),
        (["run", "--source", "elsewhere"], 2, "error: --source must be one of wander, dreams, imported, all"),
        (["run", "--budget-cents", "-1"], 2, "error: --budget-cents must be from 0.0 to 10000000.0, not -1"),
        (
            ["query", "anything"],
            1,
            "error: nothing has been consolidated yet; consolidate first: explorer consolidate run",
        ),
        (["query", "x", "--limit", "0"], 2, "error: --limit must be from 1 to 100, not 0"),
    ],
)
def test_a_user_error_is_one_line(tmp_path: Path, args: list[str], status: int, line: str) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01\x02")
    (tmp_path / "bad.jsonl").write_text("{oops\n")
    duckdb.connect(str(tmp_path / "e.duckdb")).close()  # an empty database: `query` refuses a missing one
    result = runner.invoke(
        app, ["consolidate", *[a.format(tmp=tmp_path) for a in args], "--db", str(tmp_path / "e.duckdb")]
    )
    assert result.exit_code == status
    assert "Traceback" not in result.output
    (said,) = result.stderr.strip().splitlines()
    assert said.startswith(line.format(tmp=tmp_path)), said
