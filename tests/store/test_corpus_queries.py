"""Node, relation and cache queries on a real file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explorer.records import Node, Relation
from explorer.store import Database, corpus
from explorer.store import projection as projection_store


def test_nodes_round_trip_with_provenance(tmp_path: Path) -> None:
    db = Database(tmp_path / "q.duckdb", embedding_model="m", embedding_dim=3)
    parent = Node(
        type="raw_chunk",
        text="Parent 100% _literal_",
        embedding=np.array([1, 0, 0], np.float32),
        year=2001,
        domain="python",
    )
    child = Node(
        type="synthesis",
        text="child",
        embedding=np.array([0, 1, 0], np.float32),
        generation=1,
        parent_ids=[parent.id],
        metadata={"model": "offline/extractive"},
    )
    with db.transaction() as con:
        corpus.insert_nodes(con, [parent, child])
        corpus.insert_relations(con, [Relation(child.id, parent.id, "DERIVES", created_by="test", scores={"a": 1})])
    with db.connect() as con:
        got = corpus.get_nodes(con, [child.id, parent.id])
        assert [n.id for n in got] == [child.id, parent.id]
        assert got[0].parent_ids == [parent.id] and got[0].metadata == {"model": "offline/extractive"}
        np.testing.assert_allclose(got[1].embedding, [1, 0, 0])
        assert [n.id for n in corpus.children_of(con, parent.id)] == [child.id]
        # search is a literal substring: % and _ in the user's text are not wildcards
        assert [n.id for n in corpus.list_nodes(con, search="100% _lit")] == [parent.id]
        assert corpus.list_nodes(con, search="1_0") == []
        assert corpus.count_nodes(con, types=["synthesis"]) == 1
        ids, matrix = projection_store.all_node_vectors(con)
        assert sorted(ids) == sorted([parent.id, child.id]) and matrix.shape == (2, 3)
        (relation,) = corpus.list_relations(con, [parent.id])
        assert relation.scores == {"a": 1} and relation.type == "DERIVES"
        corpus.update_node_fields(con, parent.id, prominence=0.2, is_latest=False)
        assert corpus.get_nodes(con, [parent.id])[0].prominence == 0.2


def test_embedding_cache_round_trip(tmp_path: Path) -> None:
    db = Database(tmp_path / "c.duckdb", embedding_model="m", embedding_dim=2)
    with db.transaction() as con:
        corpus.cache_embeddings(con, "m", {"h1": np.array([0.6, 0.8], np.float32)})
        corpus.cache_embeddings(con, "m", {"h1": np.array([1, 0], np.float32)})  # first write wins
    with db.connect() as con:
        got = corpus.cached_embeddings(con, "m", ["h1", "h2"])
    assert list(got) == ["h1"]
    np.testing.assert_allclose(got["h1"], [0.6, 0.8], rtol=1e-6)
