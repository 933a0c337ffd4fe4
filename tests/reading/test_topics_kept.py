"""Topics that stand while a corpus grows by a little: a note added or edited in a flat folder joins the nearest
topic without the topics being found again (minutes in a vault of 10,000 notes), and a large addition finds them
again, as do small ones once they add up to as much. Through a real ingest, on a real database, with the real model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.reading import domains_service
from explorer.reading.ingest import ingest_paths
from explorer.reading.topics import TopicConfig, refits, smallest_topic
from explorer.runtime import Runtime
from explorer.store import corpus

TWO_SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "topics" / "two_subjects.jsonl"
REFLOG = (
    "git reflog records when the tips of branches and other references were updated in the local repository; "
    "git reflog show HEAD lists every commit HEAD pointed at, so a commit lost by a reset or a rebase is found."
)


def domains(runtime: Runtime) -> dict[str, tuple[str | None, str | None]]:
    """Each document's title → its domain and where the domain came from."""
    with runtime.db.connect() as con:
        return {d.title: (d.domain, d.domain_origin) for d in corpus.list_documents(con) if not d.retired_because}


@pytest.fixture
def refits_seen(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many chunks each finding of topics (a refit) was given, as ingest runs it."""
    seen: list[int] = []
    find = domains_service.find_topics

    def counted(document_ids, *args, **kwargs):
        seen.append(len(document_ids))
        return find(document_ids, *args, **kwargs)

    monkeypatch.setattr(domains_service, "find_topics", counted)
    return seen


@pytest.mark.minilm
def test_a_note_added_or_edited_joins_the_nearest_topic_and_a_large_addition_finds_them_again(
    runtime: Runtime, tmp_path: Path, refits_seen: list[int]
) -> None:
    pages = [json.loads(line) for line in TWO_SUBJECTS.read_text(encoding="utf-8").splitlines()]
    notes = tmp_path / "notes"
    notes.mkdir()
    for page in pages[:6] + pages[8:14]:
        (notes / f"{page['title']}.txt").write_text(page["text"], encoding="utf-8")
    first = ingest_paths(runtime, [notes])
    assert len(first.topics) == 2 and len(refits_seen) == 1  # the first topics are found
    stored = domains(runtime)
    git_topic, python_topic = stored[pages[0]["title"]], stored[pages[8]["title"]]
    assert git_topic != python_topic and git_topic[1] == "topic"

    (notes / "git-reflog.txt").write_text(REFLOG, encoding="utf-8")
    added = ingest_paths(runtime, [notes])
    assert added.documents_added == 1 and sorted(added.topics) == sorted(first.topics)
    assert len(refits_seen) == 1  # one note in twelve: the topics stand
    assert domains(runtime)["git-reflog"] == git_topic  # and it joined the nearest

    edited = pages[9]
    (notes / f"{edited['title']}.txt").write_text(edited["text"] + " Lists nest in lists.", encoding="utf-8")
    changed = ingest_paths(runtime, [notes])
    assert changed.documents_changed == 1
    assert len(refits_seen) == 2  # two in twelve since the topics were found, one at a time: found again
    after = domains(runtime)  # found again, a topic may take another name: who is with whom is what holds
    assert after[edited["title"]] == after[pages[8]["title"]] != after[pages[0]["title"]]
    assert len({after[p["title"]] for p in pages[:6]}) == 1 and len({after[p["title"]] for p in pages[8:14]}) == 1

    for page in pages[6:8] + pages[14:16]:
        (notes / f"{page['title']}.txt").write_text(page["text"], encoding="utf-8")
    grown = ingest_paths(runtime, [notes])
    assert grown.documents_added == 4 and len(refits_seen) == 3  # four in thirteen: found again over all
    assert refits_seen[-1] == 17


def test_topics_are_found_again_first_when_unknown_and_past_a_tenth() -> None:
    assert refits(None, 1000) and refits(5, 0)  # asked to, or no topics yet
    assert not refits(1, 1000) and not refits(100, 1000)
    assert refits(101, 1000)
    assert not refits(300, 1000, TopicConfig(refit_share=0.5))


def test_a_topic_holds_a_share_of_a_large_corpus_and_two_documents_of_a_small_one() -> None:
    """A topic per two notes gave 1,006 topics for 10,000 notes: no list a walk's scope is chosen from."""
    assert smallest_topic(16) == smallest_topic(200) == 2
    assert smallest_topic(1_000) == 10 and smallest_topic(10_000) == 100
