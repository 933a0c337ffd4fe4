"""A model outage during ingest, at the command line: ingesting notes while the model answers 500 stores them, exits
3 with one line saying how many steps failed and how to complete them, and ``--json`` counts them; ``stats`` shows
them pending; once the model is back, ``ingest --retry-failed`` completes them and exits 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from explorer.cli import app
from explorer.testing.model_server import Reply

NOTES = {
    "hives.txt": "A hive keeps its brood warm in winter. The bees cluster and shiver to make heat.",
    "swarms.txt": "A swarm leaves the hive with the old queen in spring. Scouts choose a new home.",
}


def test_an_outage_exits_3_and_retry_failed_completes_it(model_server, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    down = [True]
    model_server(script=lambda request: Reply(status=500) if down[0] else None)
    env = {"EXPLORER_DB": str(tmp_path / "kb.duckdb"), "EXPLORER_RETRIES": "0"}
    cli = CliRunner()

    out = cli.invoke(app, ["ingest", str(folder), "--json"], env=env)
    assert out.exit_code == 3, out.output
    report = json.loads(out.stdout)
    # entities for both notes, an implant for the second only: the first has nothing known to be implanted among
    assert (report["documents_added"], report["syntheses_added"], report["items_failed"]) == (2, 0, 3)
    assert out.stderr.splitlines()[-1] == (
        "error: 3 steps of the model failed and are kept pending; `explorer ingest --retry-failed` completes them"
    )
    stats = json.loads(cli.invoke(app, ["stats", "--json"], env=env).stdout)
    assert stats["reading_pending"] == 3

    down[0] = False
    out = cli.invoke(app, ["ingest", "--retry-failed", "--json"], env=env)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert (report["items_completed"], report["items_failed"], report["documents_added"]) == (3, 0, 0)
    assert report["syntheses_added"] + report["entity_insights_added"] > 0
    assert json.loads(cli.invoke(app, ["stats", "--json"], env=env).stdout)["reading_pending"] == 0


def test_ingest_with_nothing_to_do_says_what_it_needs(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["ingest", "--db", str(tmp_path / "kb.duckdb")])
    assert out.exit_code == 2
    assert "give files or folders to read, or --retry-failed" in out.stderr
    assert not (tmp_path / "kb.duckdb").exists()
