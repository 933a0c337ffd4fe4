"""The export to notes (``explorer export --notes DIR``): one note per approved crystal and kept dream, its front
matter read back with YAML and its sources as wikilinks; an export repeated changes nothing, a revert removes the
note and nothing else; a vault folder only on request, and ingest never reads an exported note back. On a real
database built offline (ingest, a review, a REM dream), and through the real ``explorer`` command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from explorer.dreaming.service import run_rem
from explorer.notes.folder import IntoVault, NotesExportError, vault_folder
from explorer.notes.render import note_name, note_names, note_text, slug, wikilink
from explorer.notes.service import export_notes
from explorer.providers.embeddings import Embedder
from explorer.reading.discovery import expand_paths
from explorer.reading.ingest import IngestReport, collect_sources, ingest_paths
from explorer.reading.loaders import LoadError
from explorer.records.notes import NoteFinding
from explorer.records.wander import Crystal, Session
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store import wander as wander_store
from explorer.wander.errors import SessionNotFound
from explorer.wander.review import revert_review, review_crystal, review_history

RuntimeFactory = Callable[..., Runtime]
EXPLORER = Path(sys.executable).with_name("explorer")
BEES = "---\ntitle: Honey bees\nyear: 2001\n---\nHoney bees dance to tell the hive where flowers are. The waggle "
BEES += "dance encodes distance and direction. Foragers follow the dance and find nectar.\n"
HASHING = "---\nyear: 2003\n---\nA hash table maps keys to buckets with a hash function. Collisions are resolved "
HASHING += "by chaining or open addressing. Good hash functions spread keys evenly.\n"


@dataclass
class World:
    runtime: Runtime
    vault: Path
    session_id: str
    approved: str  # the approved crystal's id
    pending: str
    dream_ids: list[str]


@pytest.fixture
def world(make_runtime: RuntimeFactory, embedder: Embedder, tmp_path: Path) -> World:
    """A vault of two notes ingested offline, a session with one approved and one pending crystal bridging them,
    and one REM dream.
    """
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Bees.md").write_text(BEES, encoding="utf-8")
    (vault / "Hashing.md").write_text(HASHING, encoding="utf-8")
    runtime = make_runtime()
    assert ingest_paths(runtime, [vault]).documents_added == 2
    with runtime.db.connect() as con:
        documents = {d.title: d for d in corpus.list_documents(con)}
    connects = [
        {"document_id": documents[title].id, "title": title, "name": title, "domain": None}
        for title in ("Honey bees", "Hashing")
    ]
    session = Session(name="bees and hashes", seed_concept="hashing")
    crystals = [
        Crystal(
            insight=insight,
            embedding=embedder.embed([insight])[0],
            confidence=confidence,
            actionability=0.5,
            domains=[],
            session_id=session.id,
            connects=connects,
            validated_by="offline/extractive",
        )
        for insight, confidence in (
            ("Hashing and bees: a waggle dance is a hash of where the flowers are.", 0.8),
            ("A pending thought about buckets.", 0.4),
        )
    ]
    with runtime.db.transaction() as con:
        wander_store.insert_session(con, session)
        for crystal in crystals:
            wander_store.insert_crystal(con, crystal)
    review_crystal(runtime, crystals[0].id, "approve", reviewer="ann")
    dreamt = run_rem(runtime, dreams=1, seed=1)
    assert dreamt.dream_ids
    return World(runtime, vault, session.id, crystals[0].id, crystals[1].id, dreamt.dream_ids)


def read_note(path: Path) -> tuple[dict[str, Any], str]:
    """A note's front matter (parsed with YAML) and its body."""
    text = path.read_text(encoding="utf-8")
    _, head, body = text.split("---\n", 2)
    return yaml.safe_load(head), body


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of ``directory`` with its bytes and modification time."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir()) if p.is_file()}


def test_each_approved_crystal_and_kept_dream_becomes_a_note(world: World, tmp_path: Path) -> None:
    out = tmp_path / "notes" / "findings"  # made, parents and all
    done = export_notes(world.runtime, out)
    assert (done.written, done.unchanged, done.removed) == (2, 0, 0)
    assert done.directory == str(out.resolve())
    notes = {read_note(Path(p))[0]["kind"]: Path(p) for p in done.notes}
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in notes.values())

    crystal, body = read_note(notes["crystal"])
    assert notes["crystal"].name == f"crystal-{world.approved[:8]}-hashing-and-bees-a-waggle-dance.md"
    assert crystal == {
        "generated_by": "dream-explorer",
        "kind": "crystal",
        "id": world.approved,
        "title": "Hashing and bees: a waggle dance is a hash of where the …",  # its first words
        "status": "approved",
        "reviewer": "ann",
        "model": "offline/extractive",
        "session": world.session_id,
        "created": crystal["created"],
        "confidence": 0.8,
    }
    assert crystal["created"].startswith("20")
    assert body.split("\n## Sources\n") == [
        "\nHashing and bees: a waggle dance is a hash of where the flowers are.\n",
        "\n- [[Honey bees]]\n- [[Hashing]]\n",
    ]
    dream, body = read_note(notes["dream"])
    assert (dream["id"], dream["status"], dream["mechanism"]) == (world.dream_ids[0], "kept", "rem")
    assert notes["dream"].name.startswith(f"dream-{world.dream_ids[0][:8]}-")
    assert "session" not in dream and dream["model"] == "offline/extractive"
    sources = body.split("\n## Sources\n\n")[1].splitlines()
    assert sorted(sources) == ["- [[Hashing]]", "- [[Honey bees]]"]  # the two passages it was dreamt from

    assert all(world.pending not in p for p in done.notes)  # a crystal awaiting review stays out
    only_session = export_notes(world.runtime, tmp_path / "one", session_id=world.session_id[:8])
    assert len(only_session.notes) == 2
    with pytest.raises(SessionNotFound):
        export_notes(world.runtime, tmp_path / "none", session_id="00000000-0000-4000-8000-000000000000")


def test_a_second_export_changes_nothing_and_a_revert_removes_only_its_note(world: World, tmp_path: Path) -> None:
    out = tmp_path / "notes"
    out.mkdir()
    (out / "mine.md").write_text("---\ntitle: my own\n---\nMy own note.\n", encoding="utf-8")
    (out / "todo.txt").write_text("buy honey\n", encoding="utf-8")
    (out / "copied.md").write_text("---\nkind: crystal\nid: x\n---\nNot marked as exported.\n", encoding="utf-8")
    first = export_notes(world.runtime, out)
    before = snapshot(out)

    again = export_notes(world.runtime, out)
    assert (again.written, again.unchanged, again.removed) == (0, 2, 0)
    assert again.notes == first.notes
    assert snapshot(out) == before  # not a byte, not a modification time

    revert_review(world.runtime, review_history(world.runtime, world.approved)[-1].id)
    reverted = export_notes(world.runtime, out)
    assert (reverted.written, reverted.unchanged, reverted.removed) == (0, 1, 1)
    crystal_note = next(Path(p).name for p in first.notes if Path(p).name.startswith("crystal-"))
    after = snapshot(out)
    assert set(before) - set(after) == {crystal_note}
    assert all(after[name] == before[name] for name in after)  # the dream's note and the person's files as they were


def test_a_folder_that_is_a_file_or_a_file_in_the_way_is_refused(world: World, tmp_path: Path) -> None:
    a_file = tmp_path / "notes.md"
    a_file.write_text("a file\n", encoding="utf-8")
    with pytest.raises(NotesExportError, match="it is a file, not a folder"):
        export_notes(world.runtime, a_file)
    out = tmp_path / "notes"
    done = export_notes(world.runtime, out)
    taken = Path(done.notes[0])
    taken.write_text("A person's own text, under the same name.\n", encoding="utf-8")
    with pytest.raises(NotesExportError, match="in the way"):
        export_notes(world.runtime, out)
    assert taken.read_text(encoding="utf-8") == "A person's own text, under the same name.\n"


def test_the_vault_only_on_request_and_ingest_never_reads_the_notes_back(world: World) -> None:
    inside = world.vault / "findings"
    with pytest.raises(IntoVault, match="a folder the knowledge base was read from"):
        export_notes(world.runtime, inside)
    assert not inside.exists()
    done = export_notes(world.runtime, inside, into_vault=True)
    assert done.written == 2

    named = list(expand_paths([done.notes[0]]))
    assert len(named) == 1 and isinstance(named[0], LoadError) and "exported" in named[0].message
    again = ingest_paths(world.runtime, [world.vault])
    assert (again.documents_added, again.documents_unchanged, again.errors) == (0, 2, [])
    assert sorted((Path(f.path).name, f.status) for f in again.files) == [
        ("Bees.md", "unchanged"),
        ("Hashing.md", "unchanged"),
        *sorted((Path(note).name, "skipped") for note in done.notes),
    ]
    assert {f.reason for f in again.files if f.status == "skipped"} == {
        "a note Dream Explorer exported (generated_by: dream-explorer), not a source"
    }
    collected = collect_sources([world.vault], year=None, domain=None, max_mb=20, report=IngestReport())
    assert sorted(Path(source.path).name for source in collected) == ["Bees.md", "Hashing.md"]


def test_model_text_cannot_break_the_front_matter_or_the_links() -> None:
    finding = NoteFinding(
        kind="dream",
        id="1a2b3c4d-0000-4000-8000-000000000000",
        title="Évian: water\n---\nkind: crystal",
        text="---\nkind: crystal\nid: forged\n---\n<b>bold</b> and [[a link]]",
        status="kept",
        confidence=0.5,
        sources=("Notes [draft]|v2#top", "Notes [draft]|v2#top", "]]"),
    )
    meta, body = read_note_text(note_text(finding))
    assert (meta["kind"], meta["id"], meta["title"]) == ("dream", finding.id, finding.title)
    assert "<b>bold</b> and [[a link]]" in body  # the text as the model wrote it
    assert body.endswith("## Sources\n\n- [[Notes draft v2 top]]\n")
    assert note_name(finding) == "dream-1a2b3c4d-evian-water-kind-crystal.md"
    assert slug("¿¡!?") == "" and wikilink("[]") is None
    assert note_name(NoteFinding("crystal", "ffffffff-1", "", "", "approved", 1.0)) == "crystal-ffffffff.md"


def test_two_findings_that_would_share_a_name_are_named_by_their_whole_ids() -> None:
    twins = [
        NoteFinding("dream", f"1a2b3c4d-0000-4000-8000-00000000000{i}", "Same words", "text", "kept", 0.5)
        for i in (1, 2)
    ]
    other = NoteFinding("dream", "99999999-0000-4000-8000-000000000000", "Same words", "text", "kept", 0.5)
    assert note_names([*twins, other]) == [
        "dream-1a2b3c4d-0000-4000-8000-000000000001-same-words.md",
        "dream-1a2b3c4d-0000-4000-8000-000000000002-same-words.md",
        "dream-99999999-same-words.md",
    ]


def read_note_text(text: str) -> tuple[dict[str, Any], str]:
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def explorer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXPLORER), *args], capture_output=True, text=True, timeout=120, env=os.environ)


def test_the_command_prints_its_counts_and_says_each_refusal_in_one_line(world: World, tmp_path: Path) -> None:
    db = str(world.runtime.settings.db_path)
    out = tmp_path / "notes"
    done = explorer("export", "--notes", str(out), "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert list(printed) == ["written", "unchanged", "removed", "directory", "notes"]
    assert (printed["written"], printed["unchanged"], printed["removed"]) == (2, 0, 0)
    assert printed["directory"] == str(out.resolve()) and all(Path(p).is_file() for p in printed["notes"])
    again = json.loads(explorer("export", "--notes", str(out), "--db", db, "--json").stdout)
    assert (again["written"], again["unchanged"]) == (0, 2)

    vault = explorer("export", "--notes", str(world.vault / "findings"), "--db", db)
    assert vault.returncode == 1 and len(vault.stderr.splitlines()) == 1
    assert vault.stderr.startswith("error: ") and vault.stderr.endswith("; add --into-vault to write there anyway\n")
    a_file = tmp_path / "file.md"
    a_file.write_text("x\n", encoding="utf-8")
    for args, status in (
        (["--notes", str(a_file)], 1),
        (["--notes", str(out), "--session", "nonesuch"], 1),
        (["--notes", str(out), "--png", str(out)], 2),
        ([], 2),
    ):
        refused = explorer("export", *args, "--db", db)
        assert refused.returncode == status and len(refused.stderr.splitlines()) == 1, (args, refused.stderr)
        assert refused.stderr.startswith("error: ") and "Traceback" not in refused.stderr


def test_a_folder_beside_the_notes_in_an_obsidian_vault_is_the_vault(tmp_path: Path) -> None:
    notes = tmp_path / "vault" / "bees"
    notes.mkdir(parents=True)
    documents = [str(notes / "Bees.md")]
    assert vault_folder(tmp_path / "vault" / "findings", documents) is None  # no mark: only the notes' own folder
    (tmp_path / "vault" / ".obsidian").mkdir()
    assert vault_folder(tmp_path / "vault" / "findings", documents) == (tmp_path / "vault").resolve()
    assert vault_folder(tmp_path / "elsewhere", documents) is None
    assert vault_folder(notes / "findings", documents) == (tmp_path / "vault").resolve()  # the vault, named whole
