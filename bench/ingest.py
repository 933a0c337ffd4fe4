"""Ingest throughput of the sample corpus, offline, into a fresh database.

    python -m bench.ingest [--limit N]

Prints documents/s, chunks/s and the process's peak memory. Model load is timed
apart from the ingest itself.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from explorer.providers.embeddings import LocalEmbedder
from explorer.reading.ingest import ingest_paths
from explorer.runtime import open_runtime
from explorer.settings import Settings

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def main() -> None:
    """Time ingesting a corpus (the sample data by default) into a fresh database."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--path", type=Path, default=SAMPLE)
    args = parser.parse_args()
    started = time.perf_counter()
    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    load_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        runtime = open_runtime(replace(Settings(), db_path=Path(folder) / "bench.duckdb"), embedder=embedder)
        started = time.perf_counter()
        report = ingest_paths(runtime, [args.path])
        seconds = time.perf_counter() - started
        size_mb = runtime.db.path.stat().st_size / 1e6
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"model load        {load_s:8.1f} s")
    print(f"documents         {report.documents_added:8d}   ({report.documents_added / seconds:.2f}/s)")
    print(f"chunks            {report.chunks_added:8d}   ({report.chunks_added / seconds:.2f}/s)")
    print(f"syntheses         {report.syntheses_added:8d}")
    print(f"entity insights   {report.entity_insights_added:8d}")
    print(f"ingest time       {seconds:8.1f} s")
    print(f"database size     {size_mb:8.1f} MB")
    print(f"peak memory (RSS) {peak_mb:8.0f} MB")
    print(f"errors            {len(report.errors):8d}")


if __name__ == "__main__":
    main()
