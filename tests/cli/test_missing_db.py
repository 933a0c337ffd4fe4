"""A mistyped ``--db`` is refused by every command that only reads, before any folder or file is made (it used to
become a new, empty database and the command printed zeros as if they were the answer); a command that writes
still creates the database it is pointed at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from explorer.cli import app
from explorer.records import new_id

ID = new_id()

# Every command that only reads the database (explorer.cli passes them create=False), with its arguments.
READ_ONLY = [
    "stats",
    "export {id} --png {tmp}/archive",
    "jobs list",
    "jobs show {id}",
    "wander list",
    "wander show {id}",
    "wander history {id}",
    "wander crystals",
    "wander evidence {id}",
    "wander search gc",
    "consolidate query gc",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_command_that_only_reads_refuses_a_missing_database(command: str, tmp_path: Path) -> None:
    db = tmp_path / "no" / "such" / "dir" / "x.duckdb"
    args = [*command.format(id=ID, tmp=tmp_path).split(), "--db", str(db)]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 1, out.output
    assert out.stderr.splitlines() == [
        f"error: there is no database at {db}; check --db or EXPLORER_DB "
        "(commands that write, such as explorer ingest, create one)"
    ]
    assert not (tmp_path / "no").exists()


def test_a_command_that_writes_still_creates_the_database(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Reference cycles are collected by the gc module.", encoding="utf-8")
    db = tmp_path / "new" / "dir" / "x.duckdb"
    out = CliRunner().invoke(app, ["ingest", str(tmp_path / "docs"), "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert db.is_file()
    stats = CliRunner().invoke(app, ["stats", "--db", str(db), "--json"])
    assert stats.exit_code == 0, stats.output
