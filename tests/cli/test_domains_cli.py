"""``explorer domains``: list, rename and merge on a real DuckDB, read back through the command and the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from explorer.cli import app
from explorer.runtime import Runtime
from explorer.store import corpus

TWO_SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "topics" / "two_subjects.jsonl"


@pytest.fixture
def notes_db(tmp_path: Path) -> Path:
    """A database of the fixture's pages ingested from notes/git/ and notes/python/: two folder domains."""
    for line in TWO_SUBJECTS.read_text(encoding="utf-8").splitlines():
        page = json.loads(line)
        folder = tmp_path / "notes" / page["subject"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{page['title']}.txt").write_text(page["text"], encoding="utf-8")
    db = tmp_path / "notes.duckdb"
    out = CliRunner().invoke(app, ["ingest", str(tmp_path / "notes"), "--db", str(db)])
    assert out.exit_code == 0, out.output
    return db


def domains(db: Path) -> list[dict]:
    out = CliRunner().invoke(app, ["domains", "list", "--json", "--db", str(db)])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def node_domains(runtime: Runtime) -> set[str | None]:
    with runtime.db.connect() as con:
        return {node.domain for node in corpus.list_nodes(con)}


def test_list_rename_and_merge_change_documents_and_nodes(notes_db: Path, make_runtime) -> None:
    assert [(d["name"], d["origin"], d["documents"]) for d in domains(notes_db)] == [
        ("git", "folder", 8),
        ("python", "folder", 8),
    ]
    runner = CliRunner()
    text = runner.invoke(app, ["domains", "list", "--db", str(notes_db)])
    assert text.stdout.splitlines()[0].split()[:4] == ["git", "folder", "8", "documents,"]

    renamed = runner.invoke(app, ["domains", "rename", "git", "version control", "--json", "--db", str(notes_db)])
    assert renamed.exit_code == 0, renamed.output
    change = json.loads(renamed.stdout)
    assert change["merged"] == ["git"] and change["into"] == "version control" and change["documents"] == 8
    listed = {d["name"]: d for d in domains(notes_db)}
    assert set(listed) == {"version control", "python"} and listed["version control"]["origin"] == "given"
    assert node_domains(make_runtime(notes_db)) == {"version control", "python"}  # the nodes carry the new name

    merged = runner.invoke(
        app, ["domains", "merge", "version control", "python", "--into", "code", "--db", str(notes_db)]
    )
    assert merged.exit_code == 0, merged.output
    assert merged.stdout.startswith("version control, python → code: 16 documents, ")
    assert [(d["name"], d["origin"], d["documents"]) for d in domains(notes_db)] == [("code", "given", 16)]
    assert node_domains(make_runtime(notes_db)) == {"code"}


def test_merge_into_the_first_when_no_name_is_given(notes_db: Path) -> None:
    out = CliRunner().invoke(app, ["domains", "merge", "python", "git", "--json", "--db", str(notes_db)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["into"] == "python"
    assert [d["name"] for d in domains(notes_db)] == ["python"]


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        (["rename", "nope", "x"], 1, "error: no domain named 'nope'; the domains are 'git', 'python'"),
        (["merge", "git", "nope", "--into", "x"], 1, "error: no domain named 'nope'; the domains are 'git', 'python'"),
        (["rename", "git", "  "], 1, "error: a domain's new name must not be blank"),
        (["merge", "git"], 2, "error: invalid value for DOMAIN...: name two domains or more, or one and --into NAME"),
    ],
)
def test_a_domain_that_does_not_exist_is_one_line_on_stderr(notes_db: Path, args, status: int, said: str) -> None:
    out = CliRunner().invoke(app, ["domains", *args, "--db", str(notes_db)])
    assert out.exit_code == status
    assert out.stderr.splitlines()[0].startswith(said) and len(out.stderr.splitlines()) == 1, out.stderr
    assert [d["name"] for d in domains(notes_db)] == ["git", "python"]  # nothing changed


def test_listing_an_empty_database_says_how_domains_come(tmp_path: Path) -> None:
    db = tmp_path / "empty.duckdb"
    (tmp_path / "a.txt").write_text("One note.", encoding="utf-8")
    assert CliRunner().invoke(app, ["ingest", str(tmp_path / "a.txt"), "--db", str(db)]).exit_code == 0
    out = CliRunner().invoke(app, ["domains", "list", "--db", str(db)])
    assert out.exit_code == 0 and out.stdout.startswith("no domains yet")
    assert CliRunner().invoke(app, ["domains", "list", "--json", "--db", str(db)]).stdout.strip() == "[]"
