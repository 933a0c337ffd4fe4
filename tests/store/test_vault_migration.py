"""Migration 021 on a file that holds relations already: they are kept in their order, and LINKS may follow."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from explorer.records import Document, Relation, new_id
from explorer.store import Database, corpus
from explorer.store.database import DatabaseFailure
from tests.store.test_row_order import DIM, MODEL, file_at_version


def test_relations_are_kept_in_order_and_links_allowed(tmp_path: Path) -> None:
    path = tmp_path / "v18.duckdb"
    file_at_version(path, 18)
    con = duckdb.connect(str(path))
    old = [(new_id(), new_id(), kind) for kind in ("MENTIONS", "EXTENDS")]
    for source, target, kind in old:
        con.execute(
            "INSERT INTO relations (source_id, target_id, type, created_by) VALUES (?, ?, ?, 'reading')",
            [source, target, kind],
        )
    con.execute("INSERT INTO documents (content_hash, title) VALUES ('h', 'Old note')")
    con.close()

    db = Database(path, embedding_model=MODEL, embedding_dim=DIM)
    with db.transaction() as con:
        corpus.insert_relations(con, [Relation(new_id(), new_id(), "LINKS", created_by="vault")])
        corpus.insert_document(con, Document("Tagged", "h2", tags=("memory",), links=("Old note",)))
        rows = con.execute("SELECT source_id, target_id, type, seq FROM relations ORDER BY seq").fetchall()
        documents = {d.title: d for d in corpus.list_documents(con)}
    assert [(str(s), str(t), kind) for s, t, kind, _ in rows[:2]] == old
    assert [(kind, seq) for _, _, kind, seq in rows] == [("MENTIONS", 1), ("EXTENDS", 2), ("LINKS", 3)]
    assert documents["Old note"].tags == documents["Old note"].links == ()
    assert (documents["Tagged"].tags, documents["Tagged"].links) == (("memory",), ("Old note",))
    with pytest.raises(DatabaseFailure), db.transaction() as con:  # the type is still checked
        con.execute(
            "INSERT INTO relations (source_id, target_id, type, created_by) VALUES (?, ?, 'LIKES', 'x')",
            [new_id(), new_id()],
        )
