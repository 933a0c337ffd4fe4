"""Domains without being told, through a real ingest on a real database: folders name domains, topics name what
nothing else does, and neither ever overwrites what a person or the file said.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.reading.domains_service import list_domains, merge_domains
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime
from explorer.store import corpus

TWO_SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "topics" / "two_subjects.jsonl"


def write_pages(folder: Path, *, by_subject: bool, only: slice = slice(None)) -> list[dict]:
    """The fixture's pages as .txt files, in a folder per subject (``git/``, ``python/``) or all in one."""
    pages = [json.loads(line) for line in TWO_SUBJECTS.read_text(encoding="utf-8").splitlines()][only]
    for page in pages:
        place = folder / page["subject"] if by_subject else folder
        place.mkdir(parents=True, exist_ok=True)
        (place / f"{page['title']}.txt").write_text(page["text"], encoding="utf-8")
    return pages


def documents_by_title(runtime: Runtime) -> dict[str, tuple[str | None, str | None]]:
    with runtime.db.connect() as con:
        return {d.title: (d.domain, d.domain_origin) for d in corpus.list_documents(con)}


def node_domains(runtime: Runtime) -> dict[str, set[str | None]]:
    """Each document's title → the domains its nodes carry."""
    with runtime.db.connect() as con:
        titles = {d.id: d.title for d in corpus.list_documents(con)}
        found: dict[str, set[str | None]] = {}
        for node in corpus.list_nodes(con):
            if node.document_id:
                found.setdefault(titles[node.document_id], set()).add(node.domain)
    return found


def test_a_folder_of_folders_gives_each_subfolder_s_name_as_a_domain(runtime: Runtime, tmp_path: Path) -> None:
    pages = write_pages(tmp_path / "notes", by_subject=True)
    (tmp_path / "notes" / "loose.txt").write_text("A note directly in the folder named has no folder.", "utf-8")
    report = ingest_paths(runtime, [tmp_path / "notes"])
    assert report.documents_added == len(pages) + 1 and report.topics == []  # too few without a domain
    stored = documents_by_title(runtime)
    assert {stored[p["title"]] for p in pages if p["subject"] == "git"} == {("git", "folder")}
    assert {stored[p["title"]] for p in pages if p["subject"] == "python"} == {("python", "folder")}
    assert stored["loose"] == (None, None)
    nodes = node_domains(runtime)
    assert all(nodes[p["title"]] == {p["subject"]} for p in pages)  # every node of a document carries its domain
    assert {(d.name, d.origin, d.documents) for d in list_domains(runtime)} == {
        ("git", "folder", 8),
        ("python", "folder", 8),
    }


def test_domain_given_later_applies_to_documents_already_present(runtime: Runtime, tmp_path: Path) -> None:
    write_pages(tmp_path / "notes", by_subject=True)
    ingest_paths(runtime, [tmp_path / "notes"])
    again = ingest_paths(runtime, [tmp_path / "notes" / "git"], domain="version control")
    assert again.documents_added == 0 and again.documents_unchanged == 8 and again.domains_set == 8
    stored = documents_by_title(runtime)
    assert stored["git-commit"] == ("version control", "given")
    assert node_domains(runtime)["git-commit"] == {"version control"}
    # a given domain stands: neither a folder nor another --domain takes it back
    assert ingest_paths(runtime, [tmp_path / "notes"]).domains_set == 0
    assert ingest_paths(runtime, [tmp_path / "notes" / "git"], domain="other").domains_set == 0
    assert documents_by_title(runtime)["git-commit"] == ("version control", "given")


def test_a_few_notes_without_a_domain_are_stored_without_one(runtime: Runtime, tmp_path: Path) -> None:
    write_pages(tmp_path / "flat", by_subject=False, only=slice(0, 3))
    report = ingest_paths(runtime, [tmp_path / "flat"])
    assert report.documents_added == 3 and report.topics == []
    assert set(documents_by_title(runtime).values()) == {(None, None)}


@pytest.mark.minilm
def test_a_flat_folder_gets_topics_refreshed_as_it_grows_and_a_rename_stands(runtime: Runtime, tmp_path: Path) -> None:
    git = write_pages(tmp_path / "first", by_subject=False, only=slice(0, 8))
    python = write_pages(tmp_path / "first", by_subject=False, only=slice(8, 12))
    report = ingest_paths(runtime, [tmp_path / "first"])
    assert len(report.topics) == 2, report.topics
    stored = documents_by_title(runtime)
    git_topic = {stored[p["title"]] for p in git}
    python_topic = {stored[p["title"]] for p in python}
    assert len(git_topic) == 1 and len(python_topic) == 1 and git_topic != python_topic  # pure topics
    assert {origin for _, origin in stored.values()} == {"topic"}
    [(git_name, _)], [(python_name, _)] = git_topic, python_topic
    assert node_domains(runtime)["git-commit"] == {git_name}

    merge_domains(runtime, [git_name], "git")  # a person names it: topics never take it back
    more = write_pages(tmp_path / "second", by_subject=False, only=slice(12, 16))
    grown = ingest_paths(runtime, [tmp_path / "second"])
    assert grown.documents_added == 4 and grown.topics == [python_name]  # refreshed over every topic's document
    stored = documents_by_title(runtime)
    assert {stored[p["title"]] for p in git} == {("git", "given")}
    assert node_domains(runtime)["git-push"] == {"git"}
    assert {stored[p["title"]] for p in python} == python_topic  # one subject only: no new topics, the old stands
    joined = [stored[p["title"]] for p in more]
    assert set(joined) <= python_topic | {(None, None)} and joined.count(next(iter(python_topic))) >= 2, joined
