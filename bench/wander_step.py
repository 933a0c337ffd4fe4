"""Cost of one wander step over 1k, 10k and 100k synthetic nodes (and a tenth as many loci), model time excluded.

    python -m bench.wander_step [--sizes 1000 10000 100000] [--steps 30] [--held]

Nodes are clustered random unit vectors (two nodes of a cluster sit at cosine
~0.5, inside the distance band); a hashing embedder stands in for the model, so
answers come from the offline provider at little cost. Time spent inside
``gateway.ask`` and ``embedder.embed`` is measured and subtracted anyway. Steps
run through ``service.run``, so the file is held only to read and to write, and
every step pays for opening it. Per size it prints the index build (and the
approximate index's, which grounds the model's analogies above
``ANN_MIN_ROWS``), then per step (median / p90 / mean over the measured steps):
the whole step, model time, the step without model time, and that split into
store reads, the in-memory
stages, the write (commit, and the file opened for it) and the buffered writes
(call log, embedding cache: a batch every few steps); then the floor, a NumPy
top-10 over the same corpus matrix measured in the same run, and the ratios of
the step without model time and of the stages to it. ``--held`` keeps the file
open for the whole walk instead, which the product never does: what is left is
what the statements and the computing cost without the file's opening.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.vectors import ANN_MIN_ROWS
from explorer.wander import service, stepping
from explorer.wander.caches import corpus_space
from explorer.wander.config import SessionConfig
from explorer.wander.space import cosines

DIM = 384
CLUSTERS = 50
DOMAINS = ("art", "biology", "law", "music", "physics", "python", "cooking", "history")
WORDS = [
    "memory",
    "cache",
    "garbage",
    "collector",
    "cycle",
    "reference",
    "lifetime",
    "object",
    "graph",
    "queue",
    "tensor",
    "melody",
    "rhythm",
    "statute",
    "verdict",
    "enzyme",
    "protein",
    "recipe",
    "flour",
    "empire",
    "treaty",
    "orbit",
    "photon",
    "lens",
    "brush",
    "canvas",
]


def _centres() -> np.ndarray:
    centres = np.random.default_rng(0).normal(size=(CLUSTERS, DIM)).astype(np.float32)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True)


class ClusterEmbedder:
    """Unit vectors from a text's hash; ``cluster-K …`` texts land near cluster K, like the nodes."""

    name = "bench:cluster-hash"
    dim = DIM

    def __init__(self) -> None:
        self.centres = _centres()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors without a model, so the bench times the walk and not the embedder."""
        rows = []
        for text in texts:
            rng = np.random.default_rng(int(hashlib.sha1(text.encode()).hexdigest()[:12], 16))
            vector = rng.normal(size=DIM).astype(np.float32)
            if text.startswith("cluster-"):
                vector = self.centres[int(text.split()[0].split("-")[1]) % CLUSTERS] + 0.051 * vector
            rows.append(vector / np.linalg.norm(vector))
        return np.asarray(rows, dtype=np.float32)


def _vectors(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    clusters = rng.integers(0, CLUSTERS, n)
    vectors = _centres()[clusters] + 0.051 * rng.normal(size=(n, DIM)).astype(np.float32)
    return clusters, (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def _texts(rng: np.random.Generator, clusters: np.ndarray) -> list[str]:
    return [
        f"cluster-{c} " + " ".join(rng.choice(WORDS, 12)) + ". " + " ".join(rng.choice(WORDS, 10)) + "."
        for c in clusters
    ]


def _fixed(vectors: np.ndarray) -> pa.Array:
    return pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), type=pa.float32()), DIM)


def populate(runtime, nodes: int, loci: int, session_id: str) -> None:
    """Bulk rows straight into DuckDB: inserting 100k nodes a row at a time would take minutes."""
    rng = np.random.default_rng(nodes)
    clusters, vectors = _vectors(rng, nodes)
    table = pa.table(
        {
            "id": [f"{i:08x}-0000-4000-8000-{nodes:012x}" for i in range(nodes)],
            "type": ["raw_chunk"] * nodes,
            "text": _texts(rng, clusters),
            "embedding": _fixed(vectors),
            "domain": [DOMAINS[c % len(DOMAINS)] for c in clusters],
        }
    )
    lclusters, lvectors = _vectors(rng, loci)
    ltable = pa.table(
        {
            "id": [f"{i:08x}-0000-4000-9000-{loci:012x}" for i in range(loci)],
            "session_id": [session_id] * loci,
            "concept": _texts(rng, lclusters),
            "embedding": _fixed(lvectors),
            "source_type": ["SERENDIPITOUS"] * loci,
            "strategy": ["analogy"] * loci,
            "domains": [[DOMAINS[c % len(DOMAINS)]] for c in lclusters],
        }
    )
    with runtime.db.transaction() as con:
        con.register("synthetic_nodes", table)
        con.execute(
            f"INSERT INTO nodes (id, type, text, embedding, domain) "
            f"SELECT id::UUID, type, text, embedding::FLOAT[{DIM}], domain FROM synthetic_nodes"
        )
        con.register("synthetic_loci", ltable)
        con.execute(
            f"INSERT INTO wander_loci (id, session_id, concept, embedding, source_type, strategy, domains) "
            f"SELECT id::UUID, session_id::UUID, concept, embedding::FLOAT[{DIM}], source_type, strategy, domains "
            f"FROM synthetic_loci"
        )


class Timed:
    """Adds up the seconds spent in the callables it wraps (a call inside another one is not counted twice)."""

    def __init__(self):
        self.seconds, self._depth = 0.0, 0

    def wrap(self, fn):
        """``fn``, counting its seconds here."""

        def timed(*args, **kwargs):
            started = time.perf_counter()
            self._depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.seconds += time.perf_counter() - started

        timed.inner = fn
        return timed


def bench(nodes: int, steps: int, folder: Path, held: bool = False) -> None:
    """Time ``steps`` wander steps over a corpus of ``nodes``, and print where the seconds go; ``held``: with the
    file open for the whole walk, which the product never does (read → think → write), to show what opening it
    for each step costs and what the statements cost without it.
    """
    runtime = open_runtime(replace(Settings(), db_path=folder / f"bench-{nodes}.duckdb"), embedder=ClusterEmbedder())
    session = service.create_session(
        runtime,
        SessionConfig(
            seed_concept="cluster-3 seed concept", random_seed=1, human_checkpoint_frequency=0, max_steps=10 * steps
        ),
    )
    populate(runtime, nodes, nodes // 10, session.id)
    model, buffered, think, reads = Timed(), Timed(), Timed(), Timed()
    runtime.gateway.ask = model.wrap(runtime.gateway.ask)
    runtime.embedder.embed = model.wrap(runtime.embedder.embed)
    # the call log and the embedding cache are written in batches, from inside model calls when one is due
    runtime.calls.flush = buffered.wrap(runtime.calls.flush)
    runtime.vectors.flush = buffered.wrap(runtime.vectors.flush)
    stepping.take_step, stepping._read_step = think.wrap(stepping.take_step), reads.wrap(stepping._read_step)
    timers = (model, buffered, think, reads)
    marks: list[tuple[float, ...]] = []

    def mark(*_: object) -> None:
        marks.append((time.perf_counter(), *(t.seconds for t in timers)))

    try:
        started = time.perf_counter()
        with runtime.db.connect() as con:
            space = corpus_space(runtime, con)
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        space.index.nearest(space.index.matrix[:1], 1)  # the approximate index, built on first use
        ann_s = time.perf_counter() - started
        mark()
        with runtime.db.connect() if held else contextlib.nullcontext():  # else held only to read and to write
            service.run(runtime, session.id, steps + 2, progress=mark)
    finally:
        stepping.take_step, stepping._read_step = stepping.take_step.inner, stepping._read_step.inner
    floor = top10_floor(space.index.matrix)
    floor_one_thread = top10_floor(space.index.matrix, product=cosines)
    rows = []
    for before, after in itertools.pairwise(marks[2:]):  # the first steps build the session's loci index
        total, in_model, flushes, thinking, read = (a - b for a, b in zip(after, before, strict=True))
        stages = thinking - in_model
        overhead = total - in_model + flushes
        rows.append((total, in_model - flushes, overhead, read, stages, overhead - read - stages - flushes, flushes))

    def stat(i: int) -> str:
        values = sorted(r[i] * 1000 for r in rows)
        return (
            f"{statistics.median(values):7.1f} / {values[int(0.9 * (len(values) - 1))]:7.1f} / "
            f"{statistics.fmean(values):7.1f}"
        )

    overhead = statistics.median(r[2] for r in rows)
    stages = statistics.median(r[4] for r in rows)
    print(
        f"\n{nodes:>7} nodes, {nodes // 10} loci{' (the file held for the whole walk)' * held}: "
        f"index build {build_s * 1000:.0f} ms, "
        f"approximate index {ann_s * 1000:.0f} ms" + ("" if nodes >= ANN_MIN_ROWS else " (exact below its size)")
    )
    print(f"  {'':<40} median /     p90 /    mean")
    for i, label in enumerate(
        [
            "step",
            "model time",
            "step without model",
            "  store reads",
            "  in-memory stages",
            "  write (commit, next step's read open)",
            "  buffered writes (call log, vectors)",
        ]
    ):
        print(f"  {label:<40} {stat(i)} ms")
    print(f"  {'floor: NumPy top-10 over the matrix':<40} {floor * 1000:7.1f} ms (median)")
    print(f"  {'  on one thread, as a step computes it':<40} {floor_one_thread * 1000:7.1f} ms (median)")
    print(f"  {'step without model / floor':<40} {overhead / floor:7.2f}")
    print(f"  {'in-memory stages / floor':<40} {stages / floor:7.2f}")


def top10_floor(
    matrix: np.ndarray, repeats: int = 30, product: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul
) -> float:
    """Seconds (median) for a plain NumPy top-10 by cosine over ``matrix``: what no step can beat, since each
    step compares here with every node. ``matrix @ query`` uses as many cores as BLAS finds free (7 ms at
    100k on two idle cores, 14 ms with one busy); a step computes on one thread (``space.cosines``).
    """
    queries = np.random.default_rng(7).normal(size=(repeats, matrix.shape[1])).astype(np.float32)
    times = []
    for query in queries / np.linalg.norm(queries, axis=1, keepdims=True):
        started = time.perf_counter()
        sims = product(matrix, query)
        best = np.argpartition(-sims, 9)[:10]
        best[np.argsort(-sims[best])]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    """The wander-step bench at each corpus size asked for."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--held", action="store_true", help="keep the file open for the whole walk (comparison only)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            bench(size, args.steps, Path(folder), args.held)


if __name__ == "__main__":
    main()
