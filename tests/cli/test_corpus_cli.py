"""The command-line contract: --json fields, --db / EXPLORER_DB, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def explorer(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def test_ingest_json_contract_and_stats(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Reference cycles are collected by the gc module in Python 2.0.", encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text('{"text": "fine record about parsers"}\n{oops\n', encoding="utf-8")
    db = tmp_path / "cli.duckdb"
    out = explorer("ingest", str(tmp_path), "--json", env={"EXPLORER_DB": str(db)})
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {
        "documents_added",
        "documents_skipped",
        "chunks_added",
        "syntheses_added",
        "entity_insights_added",
        "errors",
    }
    assert report["documents_added"] == 2
    assert report["errors"] == [
        {
            "path": str(tmp_path / "bad.jsonl"),
            "line": 2,
            "message": "malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        }
    ]
    assert f"error: {tmp_path / 'bad.jsonl'}:2: malformed JSON" in out.stderr
    stats = explorer("stats", "--json", "--db", str(db))
    counts = json.loads(stats.stdout)
    assert counts["documents"] == 2 and counts["nodes_by_type"]["raw_chunk"] == 2
    assert set(counts) >= {"documents", "nodes_by_type", "relations", "sessions", "loci", "crystals", "resonances"}


def test_nothing_ingestable_exits_non_zero_without_traceback(tmp_path: Path) -> None:
    out = explorer("ingest", str(tmp_path / "missing.md"), "--db", str(tmp_path / "x.duckdb"))
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == f"error: {tmp_path / 'missing.md'}: no such file or folder"
    assert "Traceback" not in out.stderr


def test_unusable_database_is_one_line(tmp_path: Path) -> None:
    not_a_db = tmp_path / "notes.duckdb"
    not_a_db.write_text("this is not a database", encoding="utf-8")
    out = explorer("stats", "--db", str(not_a_db))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith(
        f"error: cannot open database {not_a_db}"
    )
