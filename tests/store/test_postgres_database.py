"""The PostgreSQL database as the store's functions meet it: migrated on first use, transactions all or nothing,
the store's own errors (never psycopg's), a database that is not there refused to those that only read, and
one built for another embedding model refused to all.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from explorer.records import Document, Node, Relation
from explorer.records.wander import Session
from explorer.settings import shown_location
from explorer.store import corpus, dreaming, open_database, wander
from explorer.store.database import DatabaseFailure, DatabaseMissing, SchemaMismatch, WriteConflict, latest_version
from explorer.store.ids import AmbiguousId
from explorer.store.postgres import PostgresDatabase
from explorer.store.wander import corpus_marker

ONE = "9b22cb0e-a78c-4db1-a084-f13e50c36f26"


def make_db(url: str, **kw) -> PostgresDatabase:
    db = open_database(url, embedding_model=kw.pop("model", "test-model"), embedding_dim=kw.pop("dim", 4), **kw)
    assert isinstance(db, PostgresDatabase)
    return db


def test_migrated_on_first_use_and_refused_when_only_read(postgres_url: str) -> None:
    with pytest.raises(DatabaseMissing, match="there is no Dream Explorer database at"):
        make_db(postgres_url, create=False).schema_version()
    db = make_db(postgres_url)
    assert db.schema_version() == latest_version()
    assert make_db(postgres_url, create=False).schema_version() == latest_version()
    with pytest.raises(SchemaMismatch, match="test-model"):
        make_db(postgres_url, model="other", dim=8).schema_version()
    db.close()


def test_rows_and_vectors_round_trip_and_a_transaction_is_all_or_nothing(postgres_url: str) -> None:
    db = make_db(postgres_url)
    doc = Document(title="t", content_hash="h1")
    chunk = Node(type="raw_chunk", text="fine", embedding=np.array([1, 0, 0, 0], np.float32), document_id=doc.id)
    with db.transaction() as con:
        corpus.insert_document(con, doc)
        corpus.insert_nodes(con, [chunk])
    with pytest.raises(DatabaseFailure, match="the database refused this"), db.transaction() as con:
        corpus.insert_nodes(con, [Node(type="raw_chunk", text="kept?", document_id=doc.id)])
        corpus.insert_nodes(con, [Node(type="not-a-type", text="bad")])  # type: ignore[arg-type]
    with db.connect() as con:
        (stored,) = corpus.get_nodes(con, [chunk.id])
        assert con.execute("SELECT count(*) FROM nodes").fetchone() == (1,)
    assert stored.text == "fine" and np.allclose(stored.embedding, chunk.embedding)
    db.close()


def test_the_same_row_written_twice_at_once_is_a_conflict(postgres_url: str) -> None:
    db = make_db(postgres_url)
    doc = Document(title="t", content_hash="h1")
    with db.transaction() as con:
        corpus.insert_document(con, doc)
    with pytest.raises(WriteConflict), db.transaction() as con:
        corpus.insert_document(con, doc)
    first_wrote, second_done = threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    def first() -> None:
        with db.transaction() as con:
            con.execute("UPDATE documents SET title = 'first' WHERE id = ?", [doc.id])
            first_wrote.set()
            second_done.wait(30)

    def second() -> None:
        first_wrote.wait(30)
        try:  # waits for the first's row lock, up to lock_wait_s: then a conflict, not a hang
            with db.transaction() as con:
                con.execute("UPDATE documents SET title = 'second' WHERE id = ?", [doc.id])
        except BaseException as exc:  # noqa: BLE001 - the test looks at what it is
            outcome.append(exc)
        finally:
            second_done.set()

    db.lock_wait_s = 1.0
    db.close()  # the pool is made again with the shorter lock wait
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], WriteConflict), outcome
    db.close()


def test_a_url_is_shown_without_its_password() -> None:
    assert shown_location("postgresql://ana:s3cret@db.lan:5432/kb") == "postgresql://ana:***@db.lan:5432/kb"
    assert shown_location("postgresql://ana@db.lan/kb") == "postgresql://ana@db.lan/kb"


def test_text_with_a_nul_character_is_kept_readable(postgres_url: str) -> None:
    """PostgreSQL's text refuses NUL, which DuckDB keeps (an API fuzzer found a 500): it is stored as U+FFFD."""
    db = make_db(postgres_url)
    doc = Document(title="a\x00b", content_hash="h1", aliases=("c\x00d",))
    with db.transaction() as con:
        corpus.insert_document(con, doc)
    with db.connect() as con:
        (stored,) = corpus.list_documents(con)
    assert (stored.title, stored.aliases) == ("a\ufffdb", ("c\ufffdd",))
    db.close()


def test_the_corpus_counter_moves_once_a_commit_and_only_for_what_a_walk_holds(postgres_url: str) -> None:
    """A walk's corpus cache reads one row (migration 015) instead of counting every node: it must move, once a
    transaction, when a committed write changes nodes, relations or documents as the walk sees them, not before
    the commit, and not for a node's access count.
    """
    db = make_db(postgres_url)
    doc = Document(title="t", content_hash="h1")
    chunks = [
        Node(type="raw_chunk", text=f"c{i}", embedding=np.ones(4, np.float32), document_id=doc.id) for i in range(3)
    ]

    def marker() -> tuple[int, ...]:
        with db.connect() as con:
            return corpus_marker(con)

    start = marker()
    with db.transaction() as con:
        corpus.insert_document(con, doc)
        corpus.insert_nodes(con, chunks)
        corpus.insert_relations(con, [Relation(chunks[0].id, chunks[1].id, "DERIVES", "test")])
    assert marker() == (start[0] + 1,)  # three statements, four rows, one transaction: one change
    with db.transaction() as con:
        dreaming.touch_nodes(con, [chunks[0].id])
    assert marker() == (start[0] + 1,)  # how often a node was read is not what a walk holds
    with db.transaction() as con:
        corpus.update_node_fields(con, chunks[1].id, importance=0.9)
        assert marker() == (start[0] + 1,)  # this connection's own transaction is not committed yet
    assert marker() == (start[0] + 2,)
    writing, reading = threading.Event(), threading.Event()

    def other_machine() -> None:
        other = make_db(postgres_url)
        with other.transaction() as con:
            con.execute("UPDATE documents SET title = 'renamed' WHERE id = ?", [doc.id])
            writing.set()
            reading.wait(30)
        other.close()

    thread = threading.Thread(target=other_machine)
    thread.start()
    writing.wait(30)
    assert marker() == (start[0] + 2,)  # another connection's change counts when it commits, not before
    reading.set()
    thread.join(30)
    assert marker() == (start[0] + 3,)
    db.close()


def test_two_writers_of_the_corpus_at_once_both_commit(postgres_url: str) -> None:
    """The counter's row is locked only as a transaction commits: two transactions adding nodes at the same time,
    each waiting for the other to have written, both commit (a counter updated mid-transaction would make the
    second wait for the first's commit while the first waits for the second: a deadlock).
    """
    db = make_db(postgres_url)
    doc = Document(title="t", content_hash="h1")
    with db.transaction() as con:
        corpus.insert_document(con, doc)
    with db.connect() as con:
        (start,) = corpus_marker(con)
    both_wrote = threading.Barrier(2, timeout=30)
    failures: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            with db.transaction() as con:
                corpus.insert_nodes(con, [Node(type="raw_chunk", text=name, document_id=doc.id)])
                both_wrote.wait()
                corpus.insert_nodes(con, [Node(type="raw_chunk", text=name + " again", document_id=doc.id)])
        except BaseException as exc:  # noqa: BLE001  (reported by the assertion below)
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("ana", "ben")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    with db.connect() as con:
        assert corpus_marker(con) == (start + 2,)
        assert con.execute("SELECT count(*) FROM nodes").fetchone() == (4,)
    db.close()


def test_a_short_id_is_found_on_postgres_as_on_the_file(postgres_url: str) -> None:
    """The text of a UUID column, matched by its start: the same SQL on both backends (tests/store/test_ids.py)."""
    db = make_db(postgres_url)
    ids = ["6871fedc-0000-4000-8000-000000000001", "6871fedc-0000-4000-8000-000000000002", ONE]
    with db.transaction() as con:
        for session_id in ids:
            wander.insert_session(con, Session(name="s", seed_concept="x", id=session_id))
    with db.connect() as con:
        assert wander.get_session(con, ONE[:8].upper()).id == ONE  # type: ignore[union-attr]
        with pytest.raises(AmbiguousId, match=f"{ids[0]}, {ids[1]}"):
            wander.get_session(con, "6871fedc")
        assert wander.get_session(con, "6871fedz") is None
    db.close()
