"""Ingestion on a real store: the READING cycle, idempotence, and every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.reading.cycle import DocumentText, KnownNodes, read_documents
from explorer.reading.ingest import ingest_paths
from explorer.records import Node, new_id
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store.stats import database_stats

GOOD_MD = """---
title: Garbage collection
year: 2001
domain: python
---
Python 2.0 added a garbage collector that finds reference cycles between container objects.
The collector runs periodically and can be tuned or disabled with the gc module.
Weak references arrived a release later, letting caches refer to objects without keeping them alive.
"""

RELATED_TXT = (
    "The cycle detector in the gc module finds groups of objects that refer only to each other. "
    "Programs that build large graphs of objects benefit, and the threshold can be tuned. "
    "Memory that reference counting alone could never free is reclaimed."
)


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


@pytest.mark.minilm
def test_reading_cycle_builds_nodes_with_provenance(runtime: Runtime, tmp_path: Path) -> None:
    write(tmp_path, "a.md", GOOD_MD)
    write(tmp_path, "b.txt", RELATED_TXT)
    report = ingest_paths(runtime, [tmp_path / "a.md", tmp_path / "b.txt"], year=2003, domain="memory")
    assert (report.documents_added, report.chunks_added, report.errors) == (2, 2, [])
    with runtime.db.connect() as con:
        docs = {d.title: d for d in corpus.list_documents(con)}
        chunks = corpus.list_nodes(con, types=["raw_chunk"], with_vectors=True)
        syntheses = corpus.list_nodes(con, types=["synthesis"])
        insights = corpus.list_nodes(con, types=["entity_insight"])
        relations = corpus.list_relations(con)
    assert docs["Garbage collection"].year == 2001 and docs["Garbage collection"].domain == "python"
    assert docs["b"].year == 2003 and docs["b"].domain == "memory"  # defaults from the command line
    # The first chunk had nothing to relate to; the second relates to the first.
    assert report.syntheses_added == len(syntheses) == 1
    (synthesis,) = syntheses
    first, second = sorted(chunks, key=lambda n: n.created_at)
    assert synthesis.parent_ids[0] == second.id and first.id in synthesis.parent_ids
    assert second.id not in synthesis.parent_ids[1:]  # a node never matches itself as its own neighbour
    with runtime.db.connect() as con:
        parents = corpus.get_nodes(con, synthesis.parent_ids)
    assert synthesis.generation == 1 + max(p.generation for p in parents)  # one more than its deepest parent
    assert synthesis.metadata["model"] == "offline/extractive"
    assert insights and all(i.entity and i.parent_ids[0] in {first.id, second.id} for i in insights)
    assert report.entity_insights_added == len(insights)
    assert any(r.type == "EXTENDS" and r.source_id == second.id and r.target_id == first.id for r in relations)
    # a chunk extends what was read; the first chunk's insights were among its neighbours, and are only context
    read = {c.id for c in chunks}
    assert all(r.target_id in read for r in relations if r.type == "EXTENDS")
    assert all(c.embedding is not None and c.embedding.shape == (384,) for c in chunks)


def test_reingesting_adds_nothing(runtime: Runtime, tmp_path: Path) -> None:
    write(tmp_path, "a.md", GOOD_MD)
    ingest_paths(runtime, [tmp_path])
    with runtime.db.connect() as con:
        before = database_stats(con)
    again = ingest_paths(runtime, [tmp_path, tmp_path / "a.md"])
    with runtime.db.connect() as con:
        after = database_stats(con)
    # unchanged files are not opened again: the one file, walked and named, is unchanged twice
    assert (again.documents_added, again.documents_unchanged, again.documents_skipped) == (0, 2, 0)
    assert [f.status for f in again.files if f.path.endswith("a.md")] == ["unchanged", "unchanged"]
    assert before == after


def test_every_bad_input_is_named_and_the_rest_still_ingests(runtime: Runtime, tmp_path: Path) -> None:
    write(tmp_path, "good.txt", RELATED_TXT)
    write(tmp_path, "empty.txt", "")
    write(tmp_path, "blank.md", "---\ntitle: nothing\n---\n   \n")
    write(tmp_path, "binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(tmp_path, "latin1.txt", "caf\xe9 cr\xe8me".encode("latin-1"))
    write(tmp_path, "bad-front.md", "---\ntitle: [unclosed\n---\nBody text here.")
    write(
        tmp_path,
        "records.jsonl",
        "\n".join(
            [
                json.dumps({"text": "A perfectly good record about cycles in graphs.", "domain": "graphs"}),
                "{not json",
                json.dumps({"title": "no text"}),
                json.dumps(["a", "list"]),
                json.dumps({"text": "Another good record.", "year": "not a year"}),
            ]
        ),
    )
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:  # 50 MB, sparse: cheap to make
        handle.truncate(50 * 1024 * 1024)
    write(tmp_path, "image.png", b"\x89PNG")
    report = ingest_paths(runtime, [tmp_path, tmp_path / "image.png", tmp_path / "missing.txt"])
    errors = {(Path(e["path"]).name, e["line"]): e["message"] for e in report.errors}
    assert report.documents_added == 2  # good.txt and the first JSONL record
    assert errors[("empty.txt", None)] == "empty file"
    assert "no text after the front matter" in errors[("blank.md", None)]
    assert "binary file" in errors[("binary.txt", None)]
    assert "not UTF-8" in errors[("latin1.txt", None)]
    assert "front matter is not valid YAML" in errors[("bad-front.md", None)]
    assert "malformed JSON" in errors[("records.jsonl", 2)]
    assert 'no "text" field' in errors[("records.jsonl", 3)]
    assert "must be a JSON object" in errors[("records.jsonl", 4)]
    assert "not a year" in errors[("records.jsonl", 5)]
    assert "50.0 MB, over the 20 MB limit" in errors[("big.txt", None)]
    assert "unsupported file type .png" in errors[("image.png", None)]
    assert errors[("missing.txt", None)] == "no such file or folder"
    assert not report.failed


def test_a_failing_document_leaves_nothing_half_written(runtime: Runtime, tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, "a.txt", RELATED_TXT)
    write(tmp_path, "b.md", GOOD_MD)
    real_insert = corpus.insert_relations

    def explode_for_b(con, relations):
        if (
            any(True for _ in relations)
            and con.execute("SELECT count(*) FROM documents WHERE title = 'Garbage collection'").fetchone()[0]
        ):
            raise RuntimeError("disk full")
        real_insert(con, relations)

    monkeypatch.setattr(corpus, "insert_relations", explode_for_b)
    report = ingest_paths(runtime, [tmp_path / "a.txt", tmp_path / "b.md"])
    assert report.documents_added == 1
    assert any("could not ingest: disk full" in e["message"] for e in report.errors)
    with runtime.db.connect() as con:
        assert [d.title for d in corpus.list_documents(con)] == ["a"]
        assert {n.document_id for n in corpus.list_nodes(con)} == {corpus.list_documents(con)[0].id}


def test_the_documents_after_a_failing_one_are_read_again_without_it(
    runtime: Runtime, tmp_path: Path, monkeypatch
) -> None:
    write(tmp_path, "a.txt", RELATED_TXT)
    write(tmp_path, "b.md", GOOD_MD)
    write(tmp_path, "c.txt", RELATED_TXT.replace("cycle detector", "cycle collector") + " Finalizers delay it.")
    real_insert = corpus.insert_document

    def explode_for_b(con, document):
        if document.title == "Garbage collection":
            raise RuntimeError("disk full")
        real_insert(con, document)

    monkeypatch.setattr(corpus, "insert_document", explode_for_b)
    report = ingest_paths(runtime, [tmp_path / "a.txt", tmp_path / "b.md", tmp_path / "c.txt"])
    assert report.documents_added == 2
    with runtime.db.connect() as con:
        assert sorted(d.title for d in corpus.list_documents(con)) == ["a", "c"]
        stored = {n.id for n in corpus.list_nodes(con)}
        relations = corpus.list_relations(con)
    assert relations and all({r.source_id, r.target_id} <= stored for r in relations)  # nothing points at b


def test_nothing_ingestable_is_a_failure(runtime: Runtime, tmp_path: Path) -> None:
    write(tmp_path, "empty.txt", "")
    report = ingest_paths(runtime, [tmp_path / "empty.txt"])
    assert report.failed and report.documents_added == 0


@pytest.mark.parametrize("answer", ["NOTHING", "nothing.", "  NOTHING  "])
def test_implant_nothing_stores_no_synthesis(make_runtime, tmp_path: Path, answer: str) -> None:
    runtime = make_runtime(local_model="gpt-4o-mini", completion_kwargs={"mock_response": answer})
    write(tmp_path, "a.txt", RELATED_TXT)
    write(tmp_path, "b.md", GOOD_MD)
    report = ingest_paths(runtime, [tmp_path])
    assert report.chunks_added == 2 and report.syntheses_added == 0
    # "NOTHING" is no list of entities either: the failure is reported, the chunk kept
    assert any("entity extraction failed" in e["message"] for e in report.errors)


def test_a_chunk_extends_what_was_read_not_what_was_derived(runtime: Runtime) -> None:
    text = "Python 2.0 added a garbage collector that finds reference cycles between container objects."
    read_before = Node(type="raw_chunk", text=text, embedding=runtime.embedder.embed([text])[0], document_id=new_id())
    echo = f"{text} It runs now and then."
    derived = Node(type="synthesis", text=echo, embedding=runtime.embedder.embed([echo])[0], memory_type="derived")
    known = KnownNodes(runtime.embedder.dim)
    known.add([read_before, derived])
    (result,) = read_documents(
        [DocumentText(new_id(), [f"{text} It can be tuned."])],
        known=known,
        embedder=runtime.embedder,
        gateway=runtime.gateway,
    )
    neighbours = {r.target_id for r in result.relations if r.type == "DERIVES"}
    assert derived.id in neighbours  # the synthesis was close enough to inform the implant …
    assert [r.target_id for r in result.relations if r.type == "EXTENDS"] == [read_before.id]  # … not to be linked
