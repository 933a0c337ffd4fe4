"""Topics found from the notes themselves: pages cut from git's manual and Python's tutorial, embedded with the
real local model, fall into topics of one subject each, named by words of their own texts.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from explorer.providers.embeddings import Embedder
from explorer.reading.topics import SEPARATOR, TopicConfig, find_topics, topic_names

TWO_SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "topics" / "two_subjects.jsonl"


def pages() -> list[dict]:
    """16 short pages: 8 of git's manual (git-commit, git-branch, …), 8 of Python's tutorial and HOWTOs."""
    return [json.loads(line) for line in TWO_SUBJECTS.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def embedded(real_embedder: Embedder) -> tuple[list[dict], np.ndarray]:
    found = pages()
    return found, real_embedder.embed([page["text"] for page in found])


def test_topics_separate_the_subjects_and_are_named_by_their_own_words(embedded) -> None:
    found, vectors = embedded
    topics = find_topics([p["title"] for p in found], [p["text"] for p in found], vectors)
    subject = {p["title"]: p["subject"] for p in found}
    assert 2 <= len(topics.topics) <= 3
    for topic in topics.topics:
        subjects = Counter(subject[d] for d in topic.documents)
        assert len(subjects) == 1, (topic.name, subjects)  # pure: git's pages and Python's never share a topic
        words = topic.name.split(SEPARATOR)
        assert len(words) == 2
        texts = " ".join(p["text"].lower() for p in found if p["title"] in topic.documents)
        assert all(re.search(rf"\b{re.escape(w)}", texts) for w in words), topic.name  # its own words
    assert len({t.name for t in topics.topics}) == len(topics.topics)
    placed = [d for d, name in topics.of_document.items() if name is not None]
    assert len(placed) >= 14  # noise joins its nearest topic when it is close


@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_a_handful_of_documents_gives_no_topics(embedded, count: int) -> None:
    found, vectors = embedded
    topics = find_topics([p["title"] for p in found[:count]], [p["text"] for p in found[:count]], vectors[:count])
    assert topics.topics == [] and topics.of_document == {p["title"]: None for p in found[:count]}


def test_one_long_document_s_sections_make_no_topic_of_their_own(embedded) -> None:
    """Topics are at least ``min_topic_documents`` documents: one page cut into many chunks is not a topic."""
    found, vectors = embedded
    ids = [p["title"] for p in found] + ["git-commit"] * 12
    texts = [p["text"] for p in found] + [found[0]["text"]] * 12
    topics = find_topics(ids, texts, np.vstack([vectors, np.repeat(vectors[:1], 12, axis=0)]))
    assert all(len(topic.documents) >= TopicConfig().min_topic_documents for topic in topics.topics)


def test_a_term_every_topic_uses_names_none_and_names_stay_apart() -> None:
    names = topic_names(
        [
            ["the commit and the branch", "a commit on a branch", "the file"],
            ["the list and the dictionary", "lists of dictionaries", "the file"],
        ]
    )
    assert [name for name, _ in names] == ["branch · commit", "dictionary · list"]
    assert "file" not in names[0][0] and "file" not in names[1][0]
    same = topic_names([["commit branch merge"], ["commit branch rebase"]])
    assert same[0][0] != same[1][0]


def test_where_no_topics_are_found_the_previous_ones_stand_and_new_documents_join_the_nearest(embedded) -> None:
    found, vectors = embedded
    git, python = found[:3], found[8:11]
    previous = {p["title"]: "git" for p in git[:2]} | {p["title"]: "python" for p in python[:2]}
    pages = git + python  # six documents of two subjects, too few chunks for a dense region of three documents
    rows = [found.index(p) for p in pages]
    topics = find_topics(
        [p["title"] for p in pages], [p["text"] for p in pages], vectors[rows], TopicConfig(min_documents=10), previous
    )
    assert topics.method == "kept"
    assert {d: topics.of_document[d] for d in previous} == previous  # kept
    assert topics.of_document[git[2]["title"]] == "git" and topics.of_document[python[2]["title"]] == "python"
    assert find_topics([], [], np.zeros((0, 384), np.float32), previous=previous).of_document == {}
