"""Real notes in, as a person keeps them: a folder of real documents in every format (git's manual pages as
AsciiDoc, HTML and PDF; reStructuredText from docutils and Python; a saved web page; ChatGPT and Claude exports)
beside an Obsidian vault with its ``.obsidian/`` folder and an attachment, read through ``explorer ingest --json``;
then a note edited, one deleted, and the folder read again.

Each part has its own tests (test_formats, test_vault, test_domain_ingest, test_sync); this one holds them
together, on one folder, through the command a person runs.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from explorer.cli import app
from explorer.store import corpus

DATA = Path(__file__).resolve().parents[1] / "data"
MARKUP = re.compile(r"^(=+|-{3,}|~{3,})$|\[verse\]|^\.\. \w+::|<div|linkgit:|^:\w+:", re.MULTILINE)


def a_persons_notes(tmp_path: Path) -> Path:
    """Real documents by subject in folders, the vault beside them, and what a vault holds that is no note."""
    notes = tmp_path / "notes"
    for subject in ("git", "python", "docutils", "chats"):
        shutil.copytree(DATA / "documents" / subject, notes / subject)
    shutil.copytree(DATA / "vault", notes / "vault")
    (notes / "vault" / ".obsidian").mkdir()
    (notes / "vault" / ".obsidian" / "workspace.json").write_text("{}", encoding="utf-8")
    (notes / "vault" / "collector-diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return notes


def ingest(db: Path, notes: Path) -> dict:
    out = CliRunner().invoke(app, ["ingest", str(notes), "--json", "--db", str(db)])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_a_folder_of_real_documents_and_a_vault_read_as_structure_and_kept_in_step(
    make_runtime, tmp_path: Path
) -> None:
    notes, db = a_persons_notes(tmp_path), tmp_path / "mine.duckdb"
    first = ingest(db, notes)

    # every file is accounted for: read, or skipped with its reason; none failed, none dropped in silence
    statuses = {Path(f["path"]).relative_to(notes).as_posix(): (f["status"], f["reason"]) for f in first["files"]}
    assert statuses["vault/collector-diagram.png"] == ("skipped", "not a document type Dream Explorer reads (.png)")
    assert statuses["vault/.obsidian"] == ("skipped", "in .obsidian/ (1 file)")
    read = {path for path, (status, _) in statuses.items() if status == "added"}
    assert {Path(p).suffix for p in read} == {".txt", ".html", ".pdf", ".rst", ".json", ".md"}
    assert not [path for path, (status, _) in statuses.items() if status == "failed"] and first["errors"] == []

    database = make_runtime(db=db).db  # the database the command wrote, as the tests' runtimes open it
    with database.connect() as con:
        documents = {d.id: d for d in corpus.list_documents(con)}
        chunks = corpus.list_nodes(con, types=["raw_chunk"])
        links = con.execute("SELECT count(*) FROM relations WHERE type = 'LINKS'").fetchone()[0]
    # markup is structure: headings title the chunks, and no underline, directive or tag is left in the prose
    assert all(not MARKUP.search(c.text) for c in chunks if not c.text.startswith("```")), "markup read as prose"
    sections = {(documents[str(c.document_id)].title, c.section) for c in chunks}
    assert ("git-check-attr(1)", "OPTIONS") in sections  # AsciiDoc: an underlined man-page section
    assert any(title == "Sorting HOW TO" and section for title, section in sections)  # rST and HTML
    # domains without being told: each top folder is one, the vault's too
    assert {d.domain for d in documents.values()} == {"git", "python", "docutils", "chats", "vault"}
    assert {d.domain_origin for d in documents.values()} == {"folder"}
    # the vault's own links and tags
    by_title = {d.title: d for d in documents.values()}
    assert links > 0 and by_title["Garbage collection"].tags == ("memory", "python", "memory/cycles")

    # a note edited, another deleted: read again, only they change
    edited = notes / "vault" / "Weak references.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nA weak reference never keeps its object alive.\n")
    (notes / "git" / "git-column.pdf").unlink()
    again = ingest(db, notes)
    assert (again["documents_added"], again["documents_changed"], again["documents_removed"]) == (0, 1, 1)
    assert again["documents_unchanged"] == first["documents_added"] - 2
    assert again["chunks_added"] > 0 and again["errors"] == []
    now = {Path(f["path"]).relative_to(notes).as_posix(): f["status"] for f in again["files"]}
    assert now["vault/Weak references.md"] == "changed" and now["git/git-column.pdf"] == "removed"
    assert {
        status for path, status in now.items() if path not in ("vault/Weak references.md", "git/git-column.pdf")
    } == {
        "unchanged",
        "skipped",
    }
    with database.connect() as con:
        current = corpus.list_nodes(con, types=["raw_chunk"], latest_only=True)
        documents = {d.id: d for d in corpus.list_documents(con)}
    retired = {d.path: d.retired_because for d in documents.values() if d.retired_because}
    assert retired == {str(edited): "changed", str(notes / "git" / "git-column.pdf"): "removed"}
    gone = {d.id for d in documents.values() if d.retired_because}
    assert not [c for c in current if str(c.document_id) in gone]  # no longer walked or drawn
    assert {documents[str(c.document_id)].path for c in current} >= {str(edited)}  # its new text is
