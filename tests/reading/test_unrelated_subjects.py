"""Reading relates what is related: notes on bees and notes on git, read one subject after the other, are never
synthesised together, while a bee note is still synthesised with the bee note read before it.

The floor comes from the knowledge base's own pairs (:func:`~explorer.affinity.relation_floor`): the notes of two
subjects make two groups of pairs, and a knowledge base of one document has no floor at all.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.affinity import relation_floor
from explorer.reading.cycle import KnownNodes
from explorer.reading.ingest import ingest_paths, load_known
from explorer.records import Node
from explorer.store import corpus

NOTES = Path(__file__).parents[1] / "data" / "notes"


def reading_links(runtime) -> list[tuple[Node, Node]]:
    """Every DERIVES relation reading made, as (derived node, what it derives from)."""
    with runtime.db.connect() as con:
        nodes = {n.id: n for n in corpus.list_nodes(con)}
        relations = corpus.list_relations(con)
    return [
        (nodes[r.source_id], nodes[r.target_id]) for r in relations if r.type == "DERIVES" and r.created_by == "reading"
    ]


@pytest.mark.minilm
@pytest.mark.parametrize("first, second", [("bees", "git"), ("git", "bees")])
def test_notes_of_another_subject_read_later_are_not_synthesised_with_the_first(make_runtime, first, second):
    runtime = make_runtime()
    ingest_paths(runtime, [NOTES / first])
    ingest_paths(runtime, [NOTES / second])

    links = reading_links(runtime)
    across = [(a.text[:60], b.text[:60]) for a, b in links if a.domain != b.domain]
    assert across == []
    assert load_known(runtime).relation_floor(20_000) is not None  # two subjects: their pairs split


@pytest.mark.minilm
def test_the_second_bee_note_is_still_synthesised_with_the_first(make_runtime):
    runtime = make_runtime()
    ingest_paths(runtime, [NOTES / "bees"])
    ingest_paths(runtime, [NOTES / "git"])

    with runtime.db.connect() as con:
        titles = {d.id: d.title for d in corpus.list_documents(con)}
    linked = {
        (titles[a.document_id], titles[b.document_id])
        for a, b in reading_links(runtime)
        if a.type == "synthesis" and b.type == "raw_chunk"
    }
    # tests/data/notes/bees/swarming.md is read first, then tests/data/notes/bees/the-queen.md: the queen's synthesis
    # derives from the swarming note
    assert ("The queen and her eggs", "Why colonies swarm") in linked


def test_a_knowledge_base_of_one_document_has_no_floor(embedder):
    """One subject has no group of unrelated pairs to set apart: what is read next is related to it as before."""
    texts = ["Bees swarm in May.", "A swarm clusters on a branch.", "Scouts find a new home for the swarm."]
    known = KnownNodes(embedder.dim)
    known.add(
        [
            Node(type="raw_chunk", text=t, embedding=v, document_id="one")
            for t, v in zip(texts, embedder.embed(texts), strict=True)
        ]
    )
    assert known.relation_floor(20_000) is None


def test_the_floor_falls_between_two_groups_of_pairs_and_not_inside_one():
    rng = np.random.default_rng(0)
    within, across = rng.normal(0.6, 0.08, 60), rng.normal(0.05, 0.05, 80)
    floor = relation_floor(np.sort(np.concatenate([within, across])))
    assert floor is not None and across.max() < floor < within.min()
    assert relation_floor(np.sort(rng.normal(0.2, 0.1, 5000))) is None  # one group: many subjects blending
    assert relation_floor(np.array([0.1, 0.9])) is None  # too few pairs to have a shape
