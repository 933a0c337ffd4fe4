"""``explorer ingest`` in step with a folder: the summary of what became of each file, and ``--watch`` followed
as a person runs it (a process of its own, edits made while it runs, Ctrl-C).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from explorer.cli import app

EXPLORER = Path(sys.executable).with_name("explorer")


def notes_folder(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    (notes / ".obsidian").mkdir(parents=True)
    (notes / "kiln.md").write_text("A kiln fires clay until the body vitrifies and rings.", encoding="utf-8")
    (notes / "glaze.md").write_text("An ash glaze runs green where it pools in the foot.", encoding="utf-8")
    (notes / "cat.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (notes / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (notes / "empty.txt").write_text("", encoding="utf-8")
    (notes / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    return notes


def test_the_summary_counts_files_and_groups_the_reasons(tmp_path: Path) -> None:
    notes = notes_folder(tmp_path)
    env = {"EXPLORER_DB": str(tmp_path / "cli.duckdb")}
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(notes)], env=env)
    assert first.exit_code == 0, first.output
    lines = first.stdout.splitlines()
    assert lines[:3] == [
        "files: 2 added",
        "3 skipped: 1 in .obsidian/, 2 not a document type Dream Explorer reads (.png)",
        "1 failed: 1 empty file",
    ]
    assert lines[3].startswith("documents: 2 added; 2 chunks")
    assert [line for line in first.stderr.splitlines() if line.startswith("error")] == [
        f"error: {notes / 'empty.txt'}: empty file"
    ]

    (notes / "glaze.md").unlink()
    again = runner.invoke(app, ["ingest", str(notes), "--json"], env=env)
    report = json.loads(again.stdout)
    assert (report["documents_unchanged"], report["documents_removed"], report["documents_added"]) == (1, 1, 0)
    statuses = {Path(f["path"]).name: (f["status"], f["reason"]) for f in report["files"]}
    assert statuses["glaze.md"] == ("removed", None) and statuses["kiln.md"] == ("unchanged", None)
    assert statuses["empty.txt"] == ("failed", "empty file")
    assert statuses[".obsidian"] == ("skipped", "in .obsidian/ (1 file)")


def test_watch_keeps_the_folder_in_step_until_ctrl_c(tmp_path: Path) -> None:
    notes = notes_folder(tmp_path)
    (notes / "empty.txt").unlink()
    db = tmp_path / "watched.duckdb"
    watching = subprocess.Popen(
        [str(EXPLORER), "ingest", str(notes), "--watch", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert watching.stdout is not None
    try:
        lines = []
        while not any(line.startswith("spent") for line in lines):  # the first reading's summary ends so
            lines.append(watching.stdout.readline().rstrip("\n"))
            assert watching.poll() is None, watching.stderr.read() if watching.stderr else ""
        time.sleep(1)  # the watch is set up once the first reading is done
        (notes / "kiln.md").write_text("A kiln fires stoneware at 1280 degrees in reduction.", encoding="utf-8")
        (notes / "wedging.md").write_text("Wedging drives the air out of the clay.", encoding="utf-8")
        changed = watching.stdout.readline()
        (notes / ".obsidian" / "workspace.json").write_text("{}", encoding="utf-8")  # an editor's: no line
        (notes / ".kiln.md.swp").write_bytes(b"b0VIM 9.0")  # nor for a swap file, nothing being read
        time.sleep(2)
        (notes / "glaze.md").unlink()
        removed = watching.stdout.readline()
        watching.send_signal(signal.SIGINT)
        out, err = watching.communicate(timeout=30)
    finally:
        if watching.poll() is None:
            watching.kill()
    assert "files: 1 added, 1 changed" in changed and "documents: 1 added, 1 changed" in changed, changed
    assert "files: 1 removed" in removed and "1 removed" in removed.split("documents:")[1], removed
    assert watching.returncode == 0, err
    assert err.splitlines()[-1] == "stopped watching" and "Traceback" not in err
