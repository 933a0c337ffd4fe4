"""Backlinks: a note that names another note's title is linked to it, whichever was read first."""

from __future__ import annotations

import json
import os
from pathlib import Path

from explorer.reading.ingest import ingest_paths
from explorer.reading.mentions import MentionIndex
from explorer.runtime import Runtime
from explorer.store import corpus


def index(**titles: str) -> MentionIndex:
    found = MentionIndex()
    for document_id, title in titles.items():
        found.add_title(document_id, title)
    return found


def test_the_longest_name_wins_and_plurals_count() -> None:
    titles = index(util="utility", prog="program", up="utility program", comp="compiler")
    mentions = titles.find("A utility program, unlike most compilers, runs once.")
    assert [(m.document_id, m.title) for m in mentions] == [("up", "utility program"), ("comp", "compiler")]
    assert [m.document_id for m in titles.find("Every program needs a utility.")] == ["prog", "util"]


def test_names_with_marks_match_only_as_written() -> None:
    titles = index(plan=".plan", tcp="tcp/ip", cpp="c++", c="c")
    assert [m.document_id for m in titles.find("Edit your .plan file over TCP/IP in C++.")] == ["plan", "tcp", "cpp"]
    assert titles.find("The file. Plan ahead; TCP / IP differs.") == []  # other spacing names something else
    assert titles.find("Write c code.") == []  # a one-letter title names nothing reliably


def test_a_document_does_not_mention_itself_and_earlier_texts_are_found_by_title() -> None:
    titles = index(cpu="CPU")
    assert titles.find("The CPU runs.", exclude="cpu") == []
    texts = MentionIndex()
    texts.add_text("a", "Registers sit inside the CPU.")
    texts.add_text("b", "Disks spin slowly.")
    texts.add_text("c", "Two CPUs share a bus.")
    assert texts.naming("cpu", "cpu") == ["a", "c"]


def test_ingest_links_mentions_both_ways(runtime: Runtime, tmp_path: Path) -> None:
    records = [
        {"title": "Kernel", "text": "The kernel schedules every process and hands out memory to each of them."},
        {"title": "Scheduler", "text": "A scheduler inside the kernel picks which process runs next on a CPU."},
        {"title": "CPU", "text": "The central processing unit executes instructions one after another."},
        {"title": "Lawn", "text": "Grass grows slowly in spring and needs water through the dry summer."},
    ]
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records))
    ingest_paths(runtime, [path])
    with runtime.db.connect() as con:
        title_of = {
            n.id: d.title for d in corpus.list_documents(con) for n in corpus.list_nodes(con) if n.document_id == d.id
        }
        mentions = [r for r in corpus.list_relations(con) if r.type == "MENTIONS"]
    pairs = {(title_of[r.source_id], title_of[r.target_id], r.description) for r in mentions}
    # Scheduler names Kernel (read before it) and CPU (read after it): a link and a backlink.
    assert pairs == {("Scheduler", "Kernel", "Kernel"), ("Scheduler", "CPU", "CPU")}
    assert all(r.created_by == "reading" for r in mentions)


def test_the_same_text_under_another_title_becomes_an_alias_that_mentions_link_to(runtime: Runtime, tmp_path) -> None:
    text = "The accelerated graphics port is a bus that connects a graphics card to the processor and memory."
    records = [
        {"title": "Accelerated Graphics Port", "text": text},
        {"title": "Video card", "text": "A video card plugs into the AGP slot and draws the screen from its memory."},
        {"title": "AGP", "text": text},
    ]
    path = tmp_path / "synonyms.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records))
    report = ingest_paths(runtime, [path])
    assert (report.documents_added, report.documents_skipped, report.aliases_added) == (2, 1, 1)
    with runtime.db.connect() as con:
        documents = {d.title: d for d in corpus.list_documents(con)}
        title_of = {
            n.id: documents_title
            for documents_title, d in documents.items()
            for n in corpus.list_nodes(con)
            if n.document_id == d.id
        }
        mentions = [r for r in corpus.list_relations(con) if r.type == "MENTIONS"]
    assert documents["Accelerated Graphics Port"].aliases == ("AGP",)
    assert {(title_of[r.source_id], title_of[r.target_id], r.description) for r in mentions} == {
        ("Video card", "Accelerated Graphics Port", "AGP")
    }
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))  # touched: opened again
    again = ingest_paths(runtime, [path])
    # the file's two texts unchanged, its duplicate line skipped again; an alias is kept once
    assert (again.documents_unchanged, again.documents_skipped, again.aliases_added) == (2, 1, 0)


def test_the_earlier_texts_naming_a_title_are_the_same_scanned_or_indexed() -> None:
    from explorer.reading.mentions import SCANS_BEFORE_INDEXING

    texts = MentionIndex()
    texts.add_text("a", "Garbage collections free memory; the garbage\ncollection runs.")
    texts.add_text("b", "A collector of garbage is no garbage collection.")
    texts.add_text("c", "Reference counting frees at once.")
    scanned = [texts.naming(f"d{i}", title) for i, title in enumerate(["garbage collection", "counting", "memory"])]
    for i in range(SCANS_BEFORE_INDEXING):  # enough titles looked for that the postings are built
        texts.naming("other", f"title {i}")
    indexed = [texts.naming(f"d{i}", title) for i, title in enumerate(["garbage collection", "counting", "memory"])]
    assert scanned == indexed == [["a", "b"], ["c"], ["a"]]
    texts.add_text("d", "Memory is reclaimed by a garbage collection.")  # read after the postings were built
    assert texts.naming("d0", "garbage collection") == ["a", "b", "d"]
