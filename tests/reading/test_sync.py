"""Sync: a folder read again after notes were edited, deleted and added, with attachments and an editor's folder
beside them; what each file became, what walks and dreams still see, and how a crystal names a source gone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from explorer.cli import app
from explorer.notes.service import export_notes
from explorer.reading.ingest import ingest_paths, sync_changes
from explorer.records.wander import Crystal, Session
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store import wander as wander_store
from explorer.views import find_nodes
from explorer.wander.queries import crystal_evidence, list_crystals
from explorer.wander.review import review_crystal

NOTES = {
    "kiln.md": "A kiln fires clay at over a thousand degrees until the body vitrifies and rings when tapped.",
    "glaze.md": "A glaze is a thin layer of glass fused onto pottery; ash glazes run green where they pool.",
    "wheel.txt": "Throwing on the wheel starts with centring the clay, then opening and pulling up the walls.",
    "sub/trimming.md": "Trimming a leather-hard pot on the wheel carves the foot ring and lightens the base.",
}
EDITED = "A kiln fires stoneware at 1280 degrees in reduction, which turns iron glazes to celadon and tenmoku."
ADDED = "Wedging clay by hand drives out air pockets that would otherwise burst the pot in the kiln."


def write_notes(folder: Path) -> None:
    for name, text in NOTES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")


def touched(path: Path, text: str) -> None:
    """Write ``text`` and move the modification time on, so a change is seen even within a clock tick."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns <= before:
        os.utime(path, ns=(before + 1000, before + 1000))


def by_title(runtime: Runtime) -> dict[str, list]:
    with runtime.db.connect() as con:
        found: dict[str, list] = {}
        for document in corpus.list_documents(con):
            found.setdefault(document.title, []).append(document)
        return found


def cite(runtime: Runtime, *titles: str) -> str:
    """A crystal connecting the current documents of these titles, as a walk forms it; its id."""
    documents = {t: next(d for d in docs if d.retired_because is None) for t, docs in by_title(runtime).items()}
    session = Session(name="pottery", seed_concept="kilns")
    insight = "Firing and glazing are one craft: the kiln's atmosphere decides the glaze's colour."
    crystal = Crystal(
        insight=insight,
        embedding=runtime.embedder.embed([insight])[0],
        confidence=0.8,
        actionability=0.5,
        domains=[],
        session_id=session.id,
        connects=[{"document_id": documents[t].id, "title": t, "name": t, "domain": None} for t in titles],
    )
    with runtime.db.transaction() as con:
        wander_store.insert_session(con, session)
        wander_store.insert_crystal(con, crystal)
    return crystal.id


@pytest.fixture(params=["duckdb", "postgres"])
def backend(request: pytest.FixtureRequest, make_runtime: Callable[..., Runtime]) -> Runtime:
    return make_runtime(db=request.getfixturevalue("postgres_url") if request.param == "postgres" else None)


def test_a_folder_read_again_follows_its_notes(backend: Runtime, tmp_path: Path) -> None:
    runtime = backend
    notes = tmp_path / "notes"
    write_notes(notes)
    first = ingest_paths(runtime, [notes])
    assert (first.documents_added, [f.status for f in first.files]) == (4, ["added"] * 4)
    crystal_id = cite(runtime, "kiln", "glaze")
    with runtime.db.connect() as con:
        glaze_nodes = {n.id for n in corpus.list_nodes(con) if n.document_id == by_title(runtime)["glaze"][0].id}

    touched(notes / "kiln.md", EDITED)
    (notes / "glaze.md").unlink()
    touched(notes / "wedging.md", ADDED)
    (notes / "cat.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    again = ingest_paths(runtime, [notes])

    counts = (again.documents_added, again.documents_changed, again.documents_unchanged, again.documents_removed)
    assert counts == (1, 1, 2, 1) and again.documents_skipped == 0 and again.errors == []
    files = {Path(f.path).name: (f.status, f.reason) for f in again.files}
    assert files == {
        ".obsidian": ("skipped", "in .obsidian/ (1 file)"),
        "cat.png": ("skipped", "not a document type Dream Explorer reads (.png)"),
        "glaze.md": ("removed", None),
        "kiln.md": ("changed", None),
        "wedging.md": ("added", None),
        "wheel.txt": ("unchanged", None),
        "trimming.md": ("unchanged", None),
    }
    assert {f["status"] for f in again.to_json()["files"]} == {"skipped", "removed", "changed", "added", "unchanged"}

    documents = by_title(runtime)
    assert sorted(d.retired_because or "current" for d in documents["kiln"]) == ["changed", "current"]
    assert [d.retired_because for d in documents["glaze"]] == ["removed"]
    with runtime.db.connect() as con:
        walked = {str(i) for i in wander_store.corpus_space_rows(con)["id"]}  # what a walk's corpus holds
        latest = {n.id for n in corpus.list_nodes(con, latest_only=True)}  # what dreaming draws from
        current = {d.id for d in corpus.list_documents(con, current_only=True)}
    browsed = {n.id for n in find_nodes(runtime, limit=1000)[1]}  # the Corpus page's table and its search
    assert not glaze_nodes & (walked | latest | browsed) and glaze_nodes
    assert documents["glaze"][0].id not in current and len(current) == 4

    (crystal,) = [c for c in list_crystals(runtime) if c.id == crystal_id]
    assert [end.get("retired") for end in crystal.connects] == ["changed", "removed"]
    assert crystal_evidence(runtime, crystal_id).retired[documents["glaze"][0].id] == "removed"


def test_nothing_changed_is_not_opened_and_an_edit_undone_comes_back(runtime: Runtime, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_notes(notes)
    ingest_paths(runtime, [notes])
    original = (notes / "kiln.md").read_text(encoding="utf-8")
    (notes / "kiln.md").chmod(0)  # unreadable: were it opened, it would fail
    try:
        again = ingest_paths(runtime, [notes])
    finally:
        (notes / "kiln.md").chmod(0o644)
    assert (again.documents_unchanged, again.errors) == (4, [])

    touched(notes / "kiln.md", EDITED)
    ingest_paths(runtime, [notes])
    touched(notes / "kiln.md", original)  # the edit undone: the first text is current again, not read twice
    undone = ingest_paths(runtime, [notes])
    assert (undone.documents_changed, undone.chunks_added) == (1, 0)
    assert sorted(d.retired_because or "current" for d in by_title(runtime)["kiln"]) == ["changed", "current"]
    current = next(d for d in by_title(runtime)["kiln"] if d.retired_because is None)
    with runtime.db.connect() as con:
        assert all(n.is_latest for n in corpus.list_nodes(con) if n.document_id == current.id)


def test_only_the_folders_named_lose_documents_and_a_copy_keeps_its_text(runtime: Runtime, tmp_path: Path) -> None:
    notes, other = tmp_path / "notes", tmp_path / "other"
    write_notes(notes)
    other.mkdir()
    (other / "kiln copy.md").write_text(NOTES["kiln.md"], encoding="utf-8")
    (other / "elsewhere.md").write_text(ADDED, encoding="utf-8")
    ingest_paths(runtime, [notes, other])
    (other / "elsewhere.md").unlink()
    (notes / "kiln.md").unlink()
    again = ingest_paths(runtime, [notes])  # other/ not named: its deleted note is not this ingest's business
    assert again.documents_removed == 0  # the kiln note's text is still held by its copy in other/
    assert [(Path(f.path).name, f.status) for f in again.files if f.status == "removed"] == [("kiln.md", "removed")]
    assert by_title(runtime)["elsewhere"][0].retired_because is None
    assert ingest_paths(runtime, [other]).documents_removed == 1


def test_a_watched_change_is_synced_by_its_paths(runtime: Runtime, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_notes(notes)
    ingest_paths(runtime, [notes])
    touched(notes / "wheel.txt", EDITED)
    (notes / "sub" / "trimming.md").unlink()
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "workspace.json").write_text("{}", encoding="utf-8")
    changed = [notes / "wheel.txt", notes / "sub" / "trimming.md", notes / ".obsidian" / "workspace.json"]
    report = sync_changes(runtime, [notes], changed)
    # the editor's workspace is passed over, as a walk of the folder would
    assert [(Path(f.path).name, f.status) for f in report.files] == [
        ("wheel.txt", "changed"),
        ("trimming.md", "removed"),
    ]
    assert (report.documents_changed, report.documents_removed) == (1, 1)


def test_a_few_hundred_unchanged_notes_are_read_again_in_a_blink(runtime: Runtime, tmp_path: Path) -> None:
    notes = tmp_path / "many"
    notes.mkdir()
    for number in range(300):
        (notes / f"note {number}.md").write_text(f"Note {number} on glaze recipe number {number}.", encoding="utf-8")
    ingest_paths(runtime, [notes])
    embedded: list[list[str]] = []
    embed = runtime.embedder.embed

    def counting(texts: list[str]):  # the real embedder, told of every text asked of it
        embedded.append(texts)
        return embed(texts)

    runtime.embedder.embed = counting  # type: ignore[method-assign]
    start = time.perf_counter()
    again = ingest_paths(runtime, [notes])
    took = time.perf_counter() - start
    assert (again.documents_unchanged, again.chunks_added, embedded) == (300, 0, [])
    assert took < 5, took


def test_a_crystal_says_its_source_was_removed_wherever_it_is_shown(runtime: Runtime, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_notes(notes)
    ingest_paths(runtime, [notes])
    crystal_id = cite(runtime, "kiln", "glaze")
    review_crystal(runtime, crystal_id, "approve", reviewer="ann")
    (notes / "glaze.md").unlink()
    ingest_paths(runtime, [notes])

    db = ["--db", str(runtime.settings.db_path)]  # a file, or a PostgreSQL URL on that backend
    listed = CliRunner().invoke(app, ["wander", "crystals", *db])
    assert "connects kiln (no domain) and glaze (no domain; source removed)" in listed.stdout, listed.output
    shown = CliRunner().invoke(app, ["wander", "evidence", crystal_id, *db])
    assert "glaze (no domain; source removed)" in shown.stdout, shown.output
    exported = export_notes(runtime, tmp_path / "findings")
    (note,) = [path for path in exported.notes if "crystal" in Path(path).read_text(encoding="utf-8")]
    assert "- [[glaze]] (source removed)" in Path(note).read_text(encoding="utf-8")
    assert "- [[kiln]]\n" in Path(note).read_text(encoding="utf-8")  # the current source is not marked
