"""How long ``explorer db copy`` takes: the sample corpus (read offline) and a synthetic corpus of ``--nodes``
nodes (384-dimension vectors, a tenth as many loci), each copied from its file into PostgreSQL, back into a new
file, and from file to file.

    python -m bench.db_copy [--nodes 20000]

PostgreSQL is the tests' own (``explorer.testing.postgres_server``), on this machine's Unix socket.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from bench.wander_step import ClusterEmbedder, populate
from explorer.providers.embeddings import HashingEmbedder
from explorer.reading.ingest import ingest_paths
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store.copying import copy_database
from explorer.testing.postgres_server import PostgresServer
from explorer.wander import service
from explorer.wander.config import SessionConfig

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def sample_corpus(path: Path) -> Path:
    """The sample corpus read offline, embedded by the hashing embedder (384 dimensions)."""
    embedder = HashingEmbedder()
    runtime = open_runtime(replace(Settings(), db_path=path, embedding_model=embedder.name), embedder=embedder)
    ingest_paths(runtime, [SAMPLE])
    runtime.flush()
    return path


def synthetic_corpus(path: Path, nodes: int) -> Path:
    """``nodes`` clustered nodes and a tenth as many loci of one session, loaded in bulk."""
    runtime = open_runtime(replace(Settings(), db_path=path), embedder=ClusterEmbedder())
    session = service.create_session(runtime, SessionConfig(seed_concept="cluster-3 seed concept"))
    populate(runtime, nodes, nodes // 10, session.id)
    runtime.db.checkpoint()
    return path


def copies(name: str, source: Path, server: PostgresServer, folder: Path) -> None:
    """One line a copy: rows, seconds, rows a second."""
    url = server.new_database()
    for label, src, dst in (
        ("file → PostgreSQL", source, url),
        ("PostgreSQL → file", url, folder / f"{name}-back.duckdb"),
        ("file → file", source, folder / f"{name}-copy.duckdb"),
    ):
        report = copy_database(src, dst)
        print(
            f"{name:>18}  {label:<18} {report.rows:>8} rows  {report.seconds:7.1f} s  "
            f"{report.rows / report.seconds:8.0f} rows/s",
            flush=True,
        )
    server.drop_database(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, PostgresServer() as server:
        folder = Path(tmp)
        copies("sample corpus", sample_corpus(folder / "sample.duckdb"), server, folder)
        synthetic = synthetic_corpus(folder / "synthetic.duckdb", args.nodes)
        copies(f"{args.nodes} nodes", synthetic, server, folder)


if __name__ == "__main__":
    main()
