"""The corpus commands' contract: ingest's --json fields, bad records reported by name and line, --db and
EXPLORER_DB. Their user errors are in test_errors.py's table.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from explorer.cli import app


def test_ingest_json_contract_and_stats(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Reference cycles are collected by the gc module in Python 2.0.", encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text('{"text": "fine record about parsers"}\n{oops\n', encoding="utf-8")
    db = tmp_path / "cli.duckdb"
    runner = CliRunner()
    out = runner.invoke(app, ["ingest", str(tmp_path), "--json"], env={"EXPLORER_DB": str(db)})
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert set(report) == {
        "documents_added",
        "documents_skipped",
        "documents_changed",
        "documents_unchanged",
        "documents_removed",
        "files",
        "chunks_added",
        "syntheses_added",
        "entity_insights_added",
        "aliases_added",
        "domains_set",
        "topics",
        "items_failed",
        "items_deferred",
        "items_completed",
        "spent_cents",
        "budget_exhausted",
        "errors",
    }
    assert report["documents_added"] == 2
    files = {Path(f["path"]).name: (f["status"], f["reason"]) for f in report["files"]}
    assert files["a.txt"] == files["bad.jsonl"] == ("added", None)  # a bad line of two is an error, not the file's
    assert report["errors"] == [
        {
            "path": str(tmp_path / "bad.jsonl"),
            "line": 2,
            "message": "malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        }
    ]
    assert out.stderr.splitlines() == [
        f"error: {tmp_path / 'bad.jsonl'}:2: malformed JSON (Expecting property name enclosed in double quotes "
        "at column 2)"
    ]
    stats = runner.invoke(app, ["stats", "--json", "--db", str(db)])
    counts = json.loads(stats.stdout)
    assert counts["documents"] == 2 and counts["nodes_by_type"]["raw_chunk"] == 2
    assert set(counts) >= {"documents", "nodes_by_type", "relations", "sessions", "loci", "crystals", "resonances"}


def test_documents_lists_a_vaults_notes_by_tag(tmp_path: Path) -> None:
    vault = Path(__file__).resolve().parents[1] / "data" / "vault"
    db = str(tmp_path / "vault.duckdb")
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(vault), "--db", db]).exit_code == 0
    out = runner.invoke(app, ["documents", "--tag", "#Memory", "--json", "--db", db])
    assert out.exit_code == 0, out.output
    listed = {d["title"]: d for d in json.loads(out.stdout)}
    assert set(listed) == {"Garbage collection", "Generational hypothesis", "Reference counting", "Memory allocator"}
    assert set(listed["Garbage collection"]) == {"id", "title", "path", "year", "domain", "tags", "aliases", "links"}
    assert listed["Garbage collection"]["tags"] == ["memory", "python", "memory/cycles"]
    assert listed["Memory allocator"]["tags"] == ["memory/allocation"]  # nested under the tag asked for
    text = runner.invoke(app, ["documents", "--tag", "cpython", "--db", db])
    assert text.stdout.splitlines() == [
        "   —  memory       Reference counting  #memory #cpython #performance",  # its first tag names its domain
        "1 document tagged #cpython",
    ]
