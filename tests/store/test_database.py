"""The database file: creation, migrations, transactions, two processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import duckdb
import pytest

from explorer.records import Document, Node
from explorer.store import Database, DatabaseBusy, SchemaMismatch, corpus, database
from explorer.store.database import DatabaseCorrupt, DatabaseFailure, WriteConflict, latest_version


def make_db(path: Path, **kw) -> Database:
    return Database(path, embedding_model=kw.pop("model", "test-model"), embedding_dim=kw.pop("dim", 4), **kw)


def test_created_and_migrated_on_first_use(tmp_path: Path) -> None:
    db = make_db(tmp_path / "sub" / "new.duckdb")
    assert not db.path.exists()
    assert db.schema_version() == latest_version()
    with db.connect() as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    for table in (
        "documents",
        "nodes",
        "relations",
        "wander_sessions",
        "wander_loci",
        "wander_traces",
        "wander_residues",
        "wander_resonances",
        "wander_crystals",
        "wander_warm_memory",
        "events",
        "model_calls",
        "schema_version",
    ):
        assert table in tables
    assert meta == {"embedding_model": "test-model", "embedding_dim": "4"}


def test_migrations_are_forward_only_and_run_once(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    make_db(path).schema_version()
    again = make_db(path)
    with again.connect() as con:
        rows = con.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()
    assert [v for v, _ in rows] == sorted({v for v, _ in rows})
    assert rows[0] == (1, "initial")


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.duckdb"
    make_db(path).schema_version()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_version (version, name) VALUES (999, 'from_the_future')")
    con.close()
    with pytest.raises(SchemaMismatch, match="newer than this program"):
        make_db(path).schema_version()


def test_other_embedding_model_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "e.duckdb"
    make_db(path).schema_version()
    with pytest.raises(SchemaMismatch, match="test-model"):
        make_db(path, model="other", dim=8).schema_version()


def test_check_constraints_hold(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    with db.transaction() as con, pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO wander_sessions (name, seed_concept, status) VALUES ('s', 'x', 'sleeping')")


def test_transaction_rolls_back_every_row_on_failure(tmp_path: Path) -> None:
    db = make_db(tmp_path / "t.duckdb")
    doc = Document(title="t", content_hash="h1")
    with pytest.raises(DatabaseFailure, match="the database refused this: Constraint Error"), db.transaction() as con:
        corpus.insert_document(con, doc)
        corpus.insert_nodes(con, [Node(type="raw_chunk", text="fine", document_id=doc.id)])
        corpus.insert_nodes(con, [Node(type="not-a-type", text="bad")])  # type: ignore[arg-type]
    with db.connect() as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0


def test_nested_transaction_joins_the_outer_one(tmp_path: Path) -> None:
    db = make_db(tmp_path / "n.duckdb")
    with pytest.raises(RuntimeError), db.transaction() as con:
        with db.transaction() as inner:
            corpus.insert_document(inner, Document(title="t", content_hash="h"))
        raise RuntimeError("outer fails after inner finished")
    with db.connect() as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 0


HOLDER = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("INSERT INTO documents (content_hash, title) VALUES ('held', 'held')")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
""")


def _hold(path: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_second_process_waits_for_the_lock_then_works(tmp_path: Path) -> None:
    path = tmp_path / "shared.duckdb"
    db = make_db(path, lock_wait_s=20)
    db.schema_version()
    holder = _hold(path, 1.5)
    try:
        with db.transaction() as con:
            corpus.insert_document(con, Document(title="mine", content_hash="mine"))
        with db.connect() as con:
            titles = {r[0] for r in con.execute("SELECT title FROM documents").fetchall()}
    finally:
        holder.wait(timeout=30)
    assert titles == {"held", "mine"}


def test_lock_held_too_long_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "busy.duckdb"
    make_db(path).schema_version()
    holder = _hold(path, 5)
    try:
        with pytest.raises(DatabaseBusy, match=r"busy: another program \(process \d+\)"):
            make_db(path, lock_wait_s=0.5).schema_version()
    finally:
        holder.kill()
        holder.wait()


OPEN_AND_COUNT = (
    "import sys, duckdb; print(duckdb.connect(sys.argv[1]).execute('SELECT count(*) FROM documents').fetchone()[0])"
)


def _other_process_count(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", OPEN_AND_COUNT, str(path)], capture_output=True, text=True, timeout=60)


def test_the_file_is_free_and_written_once_a_unit_of_work_ends(tmp_path: Path) -> None:
    path = tmp_path / "free.duckdb"
    db = make_db(path)
    with db.transaction() as con:
        corpus.insert_document(con, Document(title="t", content_hash="h"))
        held = _other_process_count(path)
    assert held.returncode != 0 and "lock" in held.stderr.lower()
    after = _other_process_count(path)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "1"
    assert not Path(f"{path}.wal").exists()  # detaching checkpointed: a copy of the file alone is complete


def test_threads_and_databases_on_one_file_share_it_and_free_it_together(tmp_path: Path) -> None:
    path = tmp_path / "shared-threads.duckdb"
    first, second = make_db(path), make_db(path)
    first.schema_version()
    inside = threading.Barrier(2)
    failures: list[BaseException] = []

    def work(db: Database, title: str) -> None:
        try:
            with db.transaction() as con:
                inside.wait(timeout=30)  # both units of work hold the file at once
                corpus.insert_document(con, Document(title=title, content_hash=title))
                inside.wait(timeout=30)
        except BaseException as exc:  # reported below, on the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(db, t)) for db, t in ((first, "a"), (second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    with first.connect() as con, second.connect() as nested:
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 2
        assert nested.execute("SELECT count(*) FROM documents").fetchone()[0] == 2
    assert not first.held and not second.held
    after = _other_process_count(path)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "2"


def test_a_deferred_checkpoint_leaves_the_log_to_the_next_opening_then_folds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "deferred.duckdb"
    log = Path(f"{path}.wal")
    db = make_db(path)
    db.schema_version()
    with db.connect(checkpoint=False), db.transaction() as con:  # the outermost unit of work decides
        corpus.insert_document(con, Document(title="first", content_hash="first"))
    assert log.exists()
    with db.connect(checkpoint=False) as con:  # read back from the log, still deferred
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
    other = _other_process_count(path)  # another process replays the log: nothing is lost to it
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == "1" and not log.exists()  # and folds it in when it closes the file
    with db.connect(checkpoint=False) as con:
        corpus.insert_document(con, Document(title="second", content_hash="second"))
    assert log.exists()
    db.checkpoint()
    assert not log.exists()
    monkeypatch.setattr(database, "WAL_LIMIT", 0)  # past the limit the log is folded in even when deferred
    with db.connect(checkpoint=False) as con:
        corpus.insert_document(con, Document(title="third", content_hash="third"))
    assert not log.exists()
    with db.connect() as con:
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 3


def test_the_store_raises_its_own_errors_not_duckdbs(tmp_path: Path) -> None:
    """Surfaces never meet DuckDB's classes: a row written twice is a conflict (at the boundary of the unit of
    work it failed in, nested or not), two transactions writing one row at once too, a bad statement a failure,
    and a file that is no database says so.
    """
    db = make_db(tmp_path / "e.duckdb")
    doc = Document(title="t", content_hash="h1")
    with db.transaction() as con:
        corpus.insert_document(con, doc)
    # nested in the outer connect: translated at its own boundary
    with (
        db.connect(),
        pytest.raises(WriteConflict, match="wrote the same data at the same time"),
        db.transaction() as con,
    ):
        corpus.insert_document(con, doc)
    with pytest.raises(DatabaseFailure, match="the database refused this: Parser Error"), db.connect() as con:
        con.execute("SELEC 1")

    first_wrote, second_done = threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    def first() -> None:
        with db.transaction() as con:
            con.execute("UPDATE documents SET title = 'first' WHERE id = ?", [doc.id])
            first_wrote.set()
            second_done.wait(30)

    def second() -> None:
        first_wrote.wait(30)
        try:
            with db.transaction() as con:
                con.execute("UPDATE documents SET title = 'second' WHERE id = ?", [doc.id])
        except BaseException as exc:  # noqa: BLE001 - the test looks at what it is
            outcome.append(exc)
        finally:
            second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], WriteConflict), outcome
    with db.connect() as con:
        assert con.execute("SELECT title FROM documents").fetchall() == [("first",)]

    garbage = tmp_path / "notes.duckdb"
    garbage.write_text("my notes, not a database", encoding="utf-8")
    with pytest.raises(DatabaseCorrupt, match="is not a Dream Explorer database"):
        make_db(garbage).schema_version()
