"""`explorer wander review-bulk`, `history`, `revert` and `evidence`: their --json fields, the count and the
confirmation a bulk review asks for, and user errors as one line on stderr with a non-zero exit.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from explorer.cli import app
from explorer.providers.embeddings import Embedder
from explorer.records import Node, new_id
from explorer.records.wander import Crystal, Session
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import corpus
from explorer.store import wander as wander_store

runner = CliRunner()
SESSION = "00000000-0000-4000-8000-00000000000a"


@pytest.fixture
def world(embedder: Embedder, tmp_path: Path) -> tuple[str, list[str]]:
    """A database with five pending crystals of one session (confidence 0.9 down to 0.1); its path and their ids."""
    db = tmp_path / "explorer.duckdb"
    runtime = open_runtime(replace(Settings(), db_path=db, embedding_model=embedder.name), embedder=embedder)
    crystals = [
        Crystal(
            insight=f"Insight {i}",
            embedding=embedder.embed([f"insight {i}"])[0],
            confidence=confidence,
            actionability=0.4,
            domains=["python"],
            session_id=SESSION,
        )
        for i, confidence in enumerate((0.9, 0.7, 0.5, 0.3, 0.1))
    ]
    with runtime.db.transaction() as con:
        wander_store.insert_session(con, Session(name="crystals", seed_concept="x", id=SESSION))
        for crystal in crystals:
            wander_store.insert_crystal(con, crystal)
    return str(db), [c.id for c in crystals]


def wander(*args: str) -> Result:
    return runner.invoke(app, ["wander", *args])


def as_json(*args: str) -> dict | list:
    result = wander(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bulk_review_counts_asks_then_decides(world) -> None:
    db, ids = world
    counted = as_json("review-bulk", "--approve", "--min-confidence", "0.5", "--dry-run", "--db", db)
    assert counted == {
        "decision": "approve",
        "matched": 3,
        "reviewed": 3,
        "refused": 0,
        "dry_run": True,
        "batch_id": None,
    }
    # no terminal to ask at: it says what it would do, and does nothing
    unasked = wander("review-bulk", "--approve", "--min-confidence", "0.5", "--db", db)
    assert unasked.exit_code == 1 and unasked.stderr.splitlines() == [
        "error: this would approve 3 crystals; add --yes to do it, or --dry-run to only count"
    ]
    assert [c["review_state"] for c in as_json("crystals", "--db", db)] == ["pending"] * 5
    done = as_json(
        "review-bulk", "--approve", "--min-confidence", "0.5", "--session", SESSION, "--by", "ann", "--yes", "--db", db
    )
    assert (done["matched"], done["reviewed"], done["dry_run"]) == (3, 3, False) and done["batch_id"]
    states = {c["id"]: c["review_state"] for c in as_json("crystals", "--db", db)}
    assert [states[i] for i in ids] == ["approved"] * 3 + ["pending"] * 2
    # approved ones keep their decision unless forced; text output says so
    rejecting = wander("review-bulk", "--reject", "--state", "approved", "--state", "pending", "--dry-run", "--db", db)
    assert rejecting.exit_code == 0 and rejecting.stdout.strip() == (
        "would reject 2 of 5 matching crystals; 3 more match but keep their decision (--force changes it)"
    )
    archived = wander("review-bulk", "--archive", "--state", "approved", "--max-confidence", "0.8", "--yes", "--db", db)
    assert archived.exit_code == 0 and archived.stdout.startswith("archived 2 of 2 matching crystals (batch ")


def test_history_and_revert(world) -> None:
    db, ids = world
    as_json("review", ids[0], "--approve", "--notes", "fine", "--by", "ann", "--db", db)
    (approval,) = as_json("history", ids[0], "--db", db)
    assert approval["decision"] == "approve" and approval["reviewer"] == "ann" and approval["notes"] == "fine"
    assert (approval["state_before"], approval["state_after"], approval["revertible"]) == ("pending", "approved", True)
    assert approval["values_before"]["human_approved"] is False and approval["values_after"]["human_approved"]
    undone = as_json("revert", approval["id"], "--by", "bob", "--notes", "too quick", "--db", db)
    assert undone["review"]["reverts"] == approval["id"] and undone["review"]["state_after"] == "pending"
    assert undone["crystal"]["review_state"] == "pending" and undone["crystal"]["human_approved_by"] is None
    assert [e["decision"] for e in as_json("history", ids[0], "--db", db)] == ["approve", "revert"]
    text = wander("history", ids[0], "--db", db)
    assert text.exit_code == 0 and len(text.stdout.splitlines()) == 2
    assert f"revert of {approval['id']}  approved -> pending  by bob: too quick" in text.stdout
    assert wander("history", ids[1], "--db", db).stdout.strip() == f"crystal {ids[1]} has not been reviewed"
    again = wander("revert", approval["id"], "--db", db)
    assert again.exit_code == 1 and again.stderr.splitlines() == [
        f"error: crystal {ids[0]} changed since review {approval['id']} (it is pending now); revert the later "
        "review first; add --force to change the decision"
    ]
    assert wander("revert", approval["id"], "--force", "--db", db).exit_code == 0


@pytest.mark.parametrize(
    ("args", "line", "status"),
    [
        (("review-bulk", "--min-confidence", "0.5"), "error: say exactly one of --approve, --reject, --archive", 1),
        (
            ("review-bulk", "--approve", "--state", "maybe"),
            "error: --state must be one of pending, approved, rejected, archived, not 'maybe'; see: "
            "explorer wander review-bulk --help",
            2,
        ),
        (
            ("review-bulk", "--approve", "--max-confidence", "2"),
            "error: --max-confidence must be from 0.0 to 1.0, not 2; see: explorer wander review-bulk --help",
            2,
        ),
        (("history", "nope"), "error: no crystal 'nope'; list crystals with: explorer wander crystals", 1),
        (("revert", "nope"), "error: no review 'nope' (a crystal's history lists its reviews)", 1),
    ],
)
def test_user_errors_are_one_line(world, args, line, status) -> None:
    db, _ = world
    result = wander(*args, "--db", db)
    assert (result.exit_code, result.stderr.splitlines()) == (status, [line])


def test_an_unknown_crystal_id_is_not_found(world) -> None:
    db, _ = world
    missing = new_id()
    result = wander("history", missing, "--db", db)
    assert result.exit_code == 1 and f"no crystal '{missing}'" in result.stderr


def test_the_short_ids_the_app_shows_work_on_the_command_line(world, embedder: Embedder) -> None:
    """A crystal's and a session's first 8 digits, as the pages show them, name them here too; a prefix that
    begins two crystals is one line naming both, and nothing is decided.
    """
    db, ids = world
    done = as_json("review", ids[0][:8], "--approve", "--by", "ann", "--db", db)
    assert done["id"] == ids[0] and done["review_state"] == "approved"
    (entry,) = as_json("history", ids[0][:8], "--db", db)
    assert entry["crystal_id"] == ids[0]
    counted = as_json("review-bulk", "--reject", "--session", SESSION[:8], "--dry-run", "--db", db)
    assert counted["matched"] == 4
    runtime = open_runtime(replace(Settings(), db_path=Path(db), embedding_model=embedder.name), embedder=embedder)
    twins = [f"5eed{i}000-0000-4000-8000-000000000000" for i in (1, 2)]
    with runtime.db.transaction() as con:
        for twin in twins:
            wander_store.insert_crystal(
                con,
                Crystal(
                    insight="twin",
                    embedding=embedder.embed(["twin"])[0],
                    confidence=0.5,
                    actionability=0.5,
                    domains=[],
                    id=twin,
                ),
            )
    refused = wander("review", "5eed", "--approve", "--db", db)
    assert refused.exit_code != 0 and refused.stderr.splitlines() == [
        f"error: '5eed' is the start of more than one crystal id ({twins[0]}, {twins[1]}); give more of the id"
    ]
    assert {c["id"]: c["review_state"] for c in as_json("crystals", "--db", db)}[twins[0]] == "pending"


def test_evidence_names_the_section_of_each_source_chunk(world, embedder: Embedder) -> None:
    db, _ = world
    runtime = open_runtime(replace(Settings(), db_path=Path(db), embedding_model=embedder.name), embedder=embedder)
    chunk = Node(type="raw_chunk", text="--follow keeps listing a file's history across renames.", section="OPTIONS")
    crystal = Crystal(
        insight="Renames hide history",
        embedding=embedder.embed(["renames hide history"])[0],
        confidence=0.8,
        actionability=0.4,
        domains=["git"],
        session_id=SESSION,
        supporting_evidence=[{"type": "node", "id": chunk.id}],
    )
    with runtime.db.transaction() as con:
        corpus.insert_nodes(con, [chunk])
        wander_store.insert_crystal(con, crystal)
    (shown,) = as_json("evidence", crystal.id, "--db", db)["chunks"]
    assert (shown["id"], shown["section"]) == (chunk.id, "OPTIONS")
    assert f"chunk {chunk.id} (OPTIONS): --follow keeps listing" in wander("evidence", crystal.id, "--db", db).stdout
