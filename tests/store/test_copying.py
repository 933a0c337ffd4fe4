"""A whole database copied either way (:mod:`explorer.store.copying`): a file with a corpus and a walked session
into PostgreSQL and back gives the same rows in every table; numbering goes on after the copied rows; a
destination with rows, the source itself, a missing source and a destination built for another model are refused.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from explorer import jobs
from explorer.dreaming.service import run_rem
from explorer.providers.embeddings import HASHING, HashingEmbedder
from explorer.reading.ingest import ingest_paths
from explorer.records import Node
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import Database, open_database
from explorer.store.copying import MIGRATED, DestinationNotEmpty, copy_database, stored_embedding_model
from explorer.store.corpus import insert_nodes
from explorer.store.database import DatabaseMissing, SchemaMismatch, StoreError
from explorer.store.dialect import identifier
from explorer.store.events import emit
from explorer.wander import service
from explorer.wander.config import SessionConfig

# tables a corpus read and a session walked must have filled, so comparing them proves something
FILLED = {"documents", "nodes", "relations", "embedding_cache", "events", "wander_sessions", "wander_loci"}
FILLED |= {"wander_traces", "wander_residues", "wander_resonances", "wander_crystals", "wander_reviews"}
FILLED |= {"jobs", "model_calls", "meta"}


@pytest.fixture(scope="session")
def walked_template(small_corpus: Path, built_once) -> Path:
    """The small corpus read offline, a session walked four steps, a crystal formed and approved, two dreams
    dreamt and a job queued: made once.
    """

    def build(path: Path) -> None:
        runtime = open_runtime(replace(Settings(), db_path=path, embedding_model=HASHING), embedder=HashingEmbedder())
        assert ingest_paths(runtime, [small_corpus]).documents_added
        config = SessionConfig(
            seed_concept="garbage collection", random_seed=2, human_checkpoint_frequency=0, max_drift_distance=1.5
        )
        session = service.create_session(runtime, config)
        for _ in range(4):
            service.step(runtime, session.id)
        crystal = service.crystallize(runtime, session.id).crystal
        assert crystal is not None
        service.review_crystal(runtime, crystal.id, "approve", reviewer="ann")
        run_rem(runtime, dreams=2, seed=1)
        jobs.submit(runtime, "dream.fuse", start_worker=False)
        runtime.flush()

    return built_once("walked-crystal-dreams.duckdb", build)


@pytest.fixture
def walked(walked_template: Path, tmp_path: Path) -> Path:
    """A private copy of the walked template."""
    return Path(shutil.copy(walked_template, tmp_path / "walked.duckdb"))


def tables(location: str | Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows (bar those each database writes itself, ``copying.MIGRATED``), sorted, each vector a
    float32 array, for comparing.
    """
    model, dim = stored_embedding_model(location)
    db = open_database(location, embedding_model=model, embedding_dim=dim, create=False)
    found: dict[str, list[tuple[Any, ...]]] = {}
    with db.connect() as con:
        names = [
            row[0]
            for row in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
                "AND table_schema = current_schema() AND table_type = 'BASE TABLE'"
            ).fetchall()
        ]
        for name in names:
            if name in MIGRATED or name.startswith("procrastinate"):
                continue
            columns = [
                row[0]
                for row in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
                    "AND table_schema = current_schema() AND table_name = ? ORDER BY column_name",
                    [name],
                ).fetchall()
            ]
            rows = con.execute(f"SELECT {', '.join(map(identifier, columns))} FROM {identifier(name)}").fetchall()
            found[name] = sorted((tuple(_comparable(v) for v in row) for row in rows), key=repr)
    if not isinstance(db, Database):
        db.close()
    return found


def _comparable(value: Any) -> Any:
    """A vector or a list of floats (PostgreSQL reads a ``real`` back as the shortest text that names it, DuckDB
    as the double that holds it) as a float32 array; anything else as it is.
    """
    if isinstance(value, np.ndarray) or (isinstance(value, (tuple, list)) and value and isinstance(value[0], float)):
        return Vector(np.asarray(value, dtype=np.float32))
    return value


class Vector:
    """A vector compared with allclose, shown by its first numbers."""

    def __init__(self, values: np.ndarray):
        self.values = values

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Vector)
            and self.values.shape == other.values.shape
            and np.allclose(self.values, other.values)
        )

    def __repr__(self) -> str:
        return f"Vector({np.round(self.values[:4], 5).tolist()})"


def test_file_to_postgres_and_back_keeps_every_row_of_every_table(
    walked: Path, postgres_url: str, tmp_path: Path
) -> None:
    before = tables(walked)
    assert {name for name, rows in before.items() if rows} >= FILLED

    there = copy_database(walked, postgres_url)
    back = copy_database(postgres_url, tmp_path / "back.duckdb")

    assert tables(postgres_url) == before
    assert tables(tmp_path / "back.duckdb") == before
    for report in (there, back):
        counts = {t.name: (t.source, t.copied) for t in report.tables}
        assert counts == {name: (len(rows), len(rows)) for name, rows in before.items()}
        assert report.rows == sum(len(rows) for rows in before.values())
    assert there.skipped == () and there.embedding_model == stored_embedding_model(walked)[0]


def test_a_copy_into_postgres_has_every_index_a_new_database_has(
    walked: Path, postgres_url: str, postgres_server
) -> None:
    copy_database(walked, postgres_url)  # the HNSW indexes are dropped while rows come in, then made again
    fresh = postgres_server.new_database()
    model, dim = stored_embedding_model(walked)
    found = []
    for url in (postgres_url, fresh):
        db = open_database(url, embedding_model=model, embedding_dim=dim)
        with db.connect() as con:
            found.append(sorted(con.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'").fetchall()))
        db.close()
    postgres_server.drop_database(fresh)
    assert found[0] == found[1] and any("USING hnsw" in row[0] for row in found[0])


def test_numbering_goes_on_after_the_copied_rows(walked: Path, postgres_url: str, tmp_path: Path) -> None:
    copy_database(walked, postgres_url)
    copy_database(postgres_url, tmp_path / "back.duckdb")
    model, dim = stored_embedding_model(walked)
    for location in (postgres_url, tmp_path / "back.duckdb"):
        db = open_database(location, embedding_model=model, embedding_dim=dim)
        with db.transaction() as con:
            (top_node,) = con.execute("SELECT max(seq) FROM nodes").fetchone()  # type: ignore[misc]
            (top_event,) = con.execute("SELECT max(seq) FROM events").fetchone()  # type: ignore[misc]
            node = Node(type="raw_chunk", text="written after the copy")
            insert_nodes(con, [node])
            event = emit(con, "test.after_copy", {})
            (seq,) = con.execute("SELECT seq FROM nodes WHERE id = ?", [node.id]).fetchone()  # type: ignore[misc]
        assert seq > top_node and event.seq > top_event, location
        if not isinstance(db, Database):
            db.close()


def test_a_server_written_to_during_the_copy_is_copied_as_it_stood(
    walked: Path, postgres_url: str, tmp_path: Path
) -> None:
    copy_database(walked, postgres_url)
    before = tables(postgres_url)
    model, dim = stored_embedding_model(walked)
    writer = open_database(postgres_url, embedding_model=model, embedding_dim=dim)
    written: list[str] = []

    def write_meanwhile(done: int, total: int, table: str) -> None:
        if table == "documents" and not written:  # documents are copied; nodes and events are still to come
            with writer.transaction() as con:
                insert_nodes(con, [Node(type="raw_chunk", text="written by a worker during the copy")])
                written.append(emit(con, "test.during_copy", {}).subject)

    copy_database(postgres_url, tmp_path / "back.duckdb", progress=write_meanwhile)
    writer.close()
    assert written and tables(tmp_path / "back.duckdb") == before


def test_a_destination_with_rows_is_refused_and_left_as_it_was(walked: Path, postgres_url: str) -> None:
    copy_database(walked, postgres_url)
    before = tables(postgres_url)
    with pytest.raises(DestinationNotEmpty, match=r"is not empty \(it has rows in .*nodes"):
        copy_database(walked, postgres_url)
    assert tables(postgres_url) == before


def test_the_source_decides_the_model_and_a_destination_of_another_is_refused(walked: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.duckdb"
    open_database(other, embedding_model="another-model", embedding_dim=8).schema_version()
    with pytest.raises(SchemaMismatch, match=r"from another-model \(8 dims\), not the source's hashing \(384 dims\)"):
        copy_database(walked, other)
    copy_database(walked, tmp_path / "fresh.duckdb")
    assert stored_embedding_model(tmp_path / "fresh.duckdb") == stored_embedding_model(walked)


def test_a_missing_source_or_the_source_itself_is_refused(walked: Path, tmp_path: Path) -> None:
    with pytest.raises(DatabaseMissing, match="there is no database at"):
        copy_database(tmp_path / "nowhere.duckdb", tmp_path / "new.duckdb")
    assert not (tmp_path / "new.duckdb").exists()
    with pytest.raises(StoreError, match="is both the source and the destination"):
        copy_database(walked, walked)


def test_a_servers_job_queue_stays_on_that_server(walked: Path, postgres_url: str, postgres_server) -> None:
    copy_database(walked, postgres_url)
    other = postgres_server.new_database()
    model, dim = stored_embedding_model(walked)
    for url in (postgres_url, other):
        db = open_database(url, embedding_model=model, embedding_dim=dim)
        with db.connect() as con:
            con.execute("CREATE TABLE procrastinate_jobs (id BIGINT)")  # as the shared queue installs it
        db.close()
    with open_database(postgres_url, embedding_model=model, embedding_dim=dim).connect() as con:
        con.execute("INSERT INTO procrastinate_jobs VALUES (1)")

    report = copy_database(postgres_url, other)

    assert report.skipped == ("procrastinate_jobs",) and "procrastinate_jobs" not in tables(other)
    assert tables(other) == tables(walked)
    postgres_server.drop_database(other)
