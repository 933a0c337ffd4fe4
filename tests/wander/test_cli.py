"""The `explorer wander` contract: JSON fields, --db, a review that stands unless forced. Its user errors are in
tests/cli/test_errors.py's table.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from explorer.cli import app
from explorer.records.wander import Crystal
from explorer.store import wander as wander_store

runner = CliRunner()


def cli(*args: str) -> dict | list:
    result = runner.invoke(app, ["wander", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_session_commands_speak_json(corpus_copy: Path) -> None:
    db = str(corpus_copy)
    created = cli(
        "new",
        "--seed-concept",
        "garbage collection of reference cycles",
        "--seed",
        "5",
        "--name",
        "gc",
        "--max-steps",
        "20",
        "--checkpoint-every",
        "0",
        "--forbidden-domains",
        "love, politics",
        "--db",
        db,
    )
    assert set(created) == {"session_id"}
    sid = created["session_id"]
    ran = cli("run", sid, "--steps", "2", "--db", db)
    assert ran == {
        "steps_completed": 2,
        "crystals_formed": 0,
        "stopped_reason": None,
        "dwellings_failed": 0,
        "errors": [],
    }
    stepped = cli("step", sid, "--db", db)
    assert stepped["step_number"] == 3 and stepped["residue"]["themes"] and stepped["status"] == "active"
    shown = cli("show", sid, "--db", db)
    assert set(shown) == {"session", "loci", "trace", "residues", "resonances", "crystals", "warm_memory"}
    assert [t["step_number"] for t in shown["trace"]] == [1, 2, 3]
    assert shown["session"]["name"] == "gc" and shown["session"]["forbidden_domains"] == ["love", "politics"]
    assert shown["session"]["random_seed"] == 5 and shown["session"]["max_steps"] == 20
    assert not {locus["domains"][0] for locus in shown["loci"] if locus["domains"]} & {"love", "politics"}
    assert cli("pause", sid, "--reason", "tea", "--db", db)["status_reason"] == "tea"
    assert cli("resume", sid, "--db", db)["status"] == "active"
    assert cli("inject", sid, "the walrus operator", "--db", db)["force_visit"] is True
    assert cli("fence", sid, "jokes", "--exclude", "--db", db)["fence"] == [{"concept": "jokes", "action": "exclude"}]
    assert [s["id"] for s in cli("list", "--db", db)] == [sid]
    hits = cli("search", "walrus operator", "--type", "locus", "--db", db)
    assert hits[0]["type"] == "locus" and hits[0]["text"] == "the walrus operator"
    assert cli("stop", sid, "--db", db)["status"] == "completed"
    assert cli("delete", sid, "--db", db) == {"deleted": sid}
    assert cli("list", "--db", db) == []


def test_a_session_that_completes_is_consolidated_once(corpus_copy: Path, runtime) -> None:
    # The session-complete trigger: the walk that reaches max steps consolidates the walks' experiences, as a
    # stop does; a walk that goes on (above) does not.
    from explorer.runtime import open_runtime
    from explorer.settings import load_settings
    from explorer.store import consolidation as consolidation_store

    db = str(corpus_copy)
    new = ("new", "--seed-concept", "garbage collection of reference cycles", "--seed", "5", "--db", db)
    sid = cli(*new, "--max-steps", "2", "--checkpoint-every", "0")["session_id"]
    ran = cli("run", sid, "--steps", "5", "--db", db)
    assert ran["steps_completed"] == 2 and ran["stopped_reason"].startswith("completed")
    first = ran["consolidation"]
    rt = open_runtime(load_settings().with_db(corpus_copy), embedder=runtime.embedder)
    with rt.db.connect() as con:
        report = consolidation_store.run_report(con, first["run_id"])
    assert report is not None and report["trigger"] == "session-complete" and report["source"] == "wander"
    assert report["experiences"] == 2 and first["status"] == report["status"]  # two steps: too few to cluster

    other = cli(*new, "--max-steps", "20")["session_id"]
    cli("step", other, "--db", db)
    stopped = cli("stop", other, "--db", db)
    assert stopped["status"] == "completed" and stopped["consolidation"]["run_id"] not in (None, first["run_id"])
    text = runner.invoke(app, ["wander", "stop", sid, "--db", db])
    assert text.exit_code == 1  # a completed session cannot be stopped again: nothing is consolidated twice


def test_review_a_crystal(corpus_copy: Path, runtime) -> None:
    from explorer.runtime import open_runtime
    from explorer.settings import load_settings

    rt = open_runtime(load_settings().with_db(corpus_copy), embedder=runtime.embedder)
    crystal = Crystal(
        insight="Cycles need a collector.",
        embedding=rt.embedder.embed(["Cycles need a collector."])[0],
        confidence=0.7,
        actionability=0.4,
        domains=["python"],
        validated_by="offline/extractive",
    )
    with rt.db.transaction() as con:
        wander_store.insert_crystal(con, crystal)
    approved = cli(
        "review", crystal.id, "--approve", "--notes", "read the chunks", "--by", "ann", "--db", str(corpus_copy)
    )
    assert approved["human_approved"] is True and approved["human_approved_by"] == "ann"
    assert approved["validation_notes"] == "read the chunks" and approved["validated_by"] == "offline/extractive"
    again = runner.invoke(app, ["wander", "review", crystal.id, "--reject", "--db", str(corpus_copy)])
    assert again.exit_code == 1 and again.stderr.splitlines() == [
        f"error: crystal {crystal.id} is already approved; a review cannot make it rejected unless forced; "
        "add --force to change the decision"
    ]
    rejected = cli("review", crystal.id, "--reject", "--force", "--db", str(corpus_copy))
    assert rejected["status"] == "invalidated" and rejected["review_state"] == "rejected"
    assert [c["id"] for c in cli("crystals", "--status", "invalidated", "--db", str(corpus_copy))] == [crystal.id]
