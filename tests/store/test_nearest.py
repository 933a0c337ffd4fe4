"""Search by meaning on both backends: the nearest loci to a vector, in the order exact cosine gives, and on
PostgreSQL answered by the HNSW index (the query's plan says so), not by reading every row.
"""

from __future__ import annotations

import numpy as np
import pytest

from explorer.records.wander import Locus, Session
from explorer.store import Store, open_database
from explorer.store import wander as wander_store

DIM = 16


def loci(session: Session, count: int) -> list[Locus]:
    rng = np.random.default_rng(3)
    return [Locus(session.id, f"locus {i}", rng.normal(size=DIM).astype(np.float32), "ADJACENT") for i in range(count)]


@pytest.fixture(params=["duckdb", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path) -> Store:
    location = str(tmp_path / "n.duckdb") if request.param == "duckdb" else request.getfixturevalue("postgres_url")
    db = open_database(location, embedding_model="test-model", embedding_dim=DIM)
    yield db
    db.close()


def test_the_nearest_loci_in_exact_cosine_order(store: Store) -> None:
    session = Session(name="s", seed_concept="x")
    made = loci(session, 60)
    with store.transaction() as con:
        wander_store.insert_session(con, session)
        wander_store.insert_loci(con, made)
    query = made[7].embedding + 0.1
    with store.connect() as con:
        found = wander_store.nearest(con, "locus", query, 5)
    vectors = np.vstack([locus.embedding for locus in made])
    exact = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    expected = [made[i].id for i in np.argsort(-exact)[:5]]
    assert [row[0] for row in found] == expected
    assert np.allclose([row[3] for row in found], np.sort(exact)[::-1][:5], atol=1e-5)


def test_postgres_answers_it_from_the_hnsw_index(postgres_url: str) -> None:
    db = open_database(postgres_url, embedding_model="test-model", embedding_dim=DIM)
    session = Session(name="s", seed_concept="x")
    with db.transaction() as con:
        wander_store.insert_session(con, session)
        wander_store.insert_loci(con, loci(session, 200))
    scans = (
        "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE relname = 'wander_loci' "
        "AND indexrelname LIKE '%embedding%'"
    )
    with db.connect() as con:
        before = con.execute(scans).fetchone()[0]
        con.execute("SET enable_seqscan = off")  # 200 rows: the planner might scan them; may it use the index?
        assert len(wander_store.nearest(con, "locus", np.ones(DIM, np.float32), 5)) == 5
        con.execute("SELECT pg_stat_force_next_flush()")
    with db.connect() as con:
        assert con.execute(scans).fetchone()[0] > before
    db.close()
