"""``explorer db copy SRC DST``: a file into PostgreSQL and back, with every table's counts under ``--json``; a
destination with rows and a missing source refused in one line on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from explorer.cli import app


def test_a_file_copied_into_postgres_and_back_prints_each_tables_counts(
    corpus_copy: Path, postgres_url: str, tmp_path: Path
) -> None:
    there = CliRunner().invoke(app, ["db", "copy", str(corpus_copy), postgres_url, "--json"])
    assert there.exit_code == 0, there.output
    report = json.loads(there.stdout)
    assert set(report) == {"source", "destination", "embedding_model", "embedding_dim", "tables", "skipped", "rows"} | {
        "seconds"
    }
    assert report["tables"]["nodes"]["copied"] > 0 and report["tables"]["documents"]["copied"] > 0
    assert all(counts["source"] == counts["copied"] for counts in report["tables"].values())
    assert report["rows"] == sum(counts["copied"] for counts in report["tables"].values())
    assert "schema_version" not in report["tables"] and "@/" in report["destination"]

    back = CliRunner().invoke(app, ["db", "copy", postgres_url, str(tmp_path / "back.duckdb")])
    assert back.exit_code == 0, back.output
    assert back.stdout.startswith(f"copied {report['rows']} rows in {len(report['tables'])} tables from ")
    assert f"  nodes: {report['tables']['nodes']['copied']}" in back.stdout.splitlines()


def test_a_destination_with_rows_is_refused_in_one_line(corpus_copy: Path, tmp_path: Path) -> None:
    first = CliRunner().invoke(app, ["db", "copy", str(corpus_copy), str(tmp_path / "copy.duckdb"), "--json"])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(app, ["db", "copy", str(corpus_copy), str(tmp_path / "copy.duckdb")])
    assert again.exit_code == 1
    (line,) = again.stderr.splitlines()
    assert line.startswith(f"error: database {tmp_path / 'copy.duckdb'} is not empty (it has rows in ")
    assert line.endswith("; copy into a new, empty database")


def test_a_missing_source_is_refused_in_one_line(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["db", "copy", str(tmp_path / "nowhere.duckdb"), str(tmp_path / "new.duckdb")])
    assert out.exit_code == 1
    assert out.stderr.splitlines() == [f"error: there is no database at {tmp_path / 'nowhere.duckdb'}"]
    assert not (tmp_path / "new.duckdb").exists()
