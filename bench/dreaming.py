"""Dreaming over a 10k-node synthetic memory graph: one REM cycle of 100 dreams,
one REM exploration and one fusion pass, through the service (store included).

    python -m bench.dreaming [--nodes 10000] [--dreams 100] [--degree 3] [--offline]

Model latency (the gateway and the embedding model) is timed apart and left
out of "own time": by default the model answers instantly (fixed, valid
answers) and texts are embedded by hashing, so what is left is the engine's own
time (store reads and writes, the embedding cache, activation, nearest-neighbour
search, sampling, parsing). ``--offline`` uses the built-in
offline provider and the local embedding model instead (much slower; their
time is still reported apart).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from explorer.dreaming import service
from explorer.prompts import split_passages
from explorer.providers.embeddings import HashingEmbedder, LocalEmbedder
from explorer.providers.gateway import Answer
from explorer.records import Node, Relation
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import corpus

DIM = 384


class InstantModel:
    """Valid answers at once, each derived from its prompt's fields."""

    def ask(self, prompt, fields, **_):
        """A parsed answer in no time, so the bench measures the dreaming around the model, not the model."""
        if prompt.kind == "rem_judge":
            count = len(split_passages(fields["candidates"]))
            text = json.dumps(
                {
                    "judgements": [
                        {
                            "candidate": i,
                            "novelty": 4 if i == 1 else 2,
                            "plausibility": 4 if i == 1 else 2,
                            "usefulness": 4,
                            "connection": "linked" if i == 1 else "NO_CONNECTION",
                            "confidence": 0.7,
                        }
                        for i in range(1, count + 1)
                    ]
                }
            )
        elif prompt.kind == "rem_question":
            text = "What binds " + " and ".join(p[:12] for p in split_passages(fields["passages"])) + "?"
        elif prompt.kind == "rem_synthesis":
            text = "A synthesis answering " + fields["question"]
        elif prompt.kind == "dream_relation":
            text = "It extends what is known: " + fields["synthesis"]
        elif prompt.kind == "fusion":
            text = json.dumps({"summary": split_passages(fields["memories"])[0][:40]})
        else:
            raise LookupError(prompt.kind)
        return Answer(prompt.parse(text), text, "instant", "offline", attempts=1)

    def map(self, work, items, progress=None):
        """One item after another: an instant model gains nothing from threads."""
        return [work(item) for item in items]


class Timed:
    """Times every call to one method of the wrapped object."""

    def __init__(self, inner, method: str):
        self._inner, self._method, self.seconds, self.calls = inner, method, 0.0, 0

    def __getattr__(self, name):
        attribute = getattr(self._inner, name)
        if name != self._method:
            return attribute

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return attribute(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        return timed


def synthetic_graph(nodes: int, degree: float, rng: np.random.Generator) -> tuple[list[Node], list[Relation]]:
    """A memory graph of the size asked, with random vectors, years, ages and relations of every type."""
    now = datetime.now(UTC)
    vectors = rng.normal(size=(nodes, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    graph = [
        Node(
            type="raw_chunk",
            text=f"memory {i} on topic {i % 40}: " + " ".join(f"w{rng.integers(5000)}" for _ in range(30)),
            embedding=vectors[i],
            year=2000 + int(rng.integers(21)),
            domain=f"domain{i % 20}",
            importance=float(rng.uniform(0.1, 1.0)),
            created_at=now - timedelta(days=float(rng.uniform(0, 200))),
        )
        for i in range(nodes)
    ]
    kinds = rng.choice(["EXTENDS", "DERIVES", "UPDATES"], p=[0.6, 0.3, 0.1], size=int(nodes * degree / 2))
    pairs = rng.integers(nodes, size=(len(kinds), 2))
    relations = [
        Relation(graph[a].id, graph[b].id, str(kind), created_by="bench", confidence=float(rng.uniform(0.5, 1)))
        for (a, b), kind in zip(pairs, kinds, strict=True)
        if a != b
    ]
    return graph, relations


def main() -> None:
    """Time each dreaming mechanism on a synthetic graph and print where its seconds go."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--dreams", type=int, default=100)
    parser.add_argument("--degree", type=float, default=3.0, help="average relations per node")
    parser.add_argument("--offline", action="store_true", help="the offline provider and local embedder as the model")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = replace(Settings(), db_path=Path(folder) / "bench.duckdb")
        embedder = Timed(LocalEmbedder() if args.offline else HashingEmbedder(dim=DIM), "embed")
        base = open_runtime(settings, embedder=embedder)  # the embedding cache wraps the timed model
        gateway = Timed(base.gateway if args.offline else InstantModel(), "ask")
        runtime = replace(base, gateway=gateway)

        started = time.perf_counter()
        graph, relations = synthetic_graph(args.nodes, args.degree, np.random.default_rng(0))
        with runtime.db.transaction() as con:
            corpus.insert_nodes(con, graph)
            corpus.insert_relations(con, relations)
            for node in graph:
                corpus.update_node_fields(con, node.id, created_at=node.created_at)
        print(
            f"graph             {len(graph):8d} nodes, {len(relations)} relations "
            f"(built and stored in {time.perf_counter() - started:.1f} s)"
        )

        for name, run in (
            ("rem cycle", lambda: service.run_rem(runtime, dreams=args.dreams, seed=1)),
            ("exploration", lambda: service.run_exploration(runtime, seed=1)),
            ("fusion", lambda: service.run_fusion(runtime)),
        ):
            gateway.seconds = embedder.seconds = 0.0
            gateway.calls = embedder.calls = 0
            started = time.perf_counter()
            report = run()
            total = time.perf_counter() - started
            own = total - gateway.seconds - embedder.seconds
            print(f"\n{name}: {json.dumps({k: v for k, v in report.to_json().items() if k != 'errors'})}")
            print(f"  total           {total:8.2f} s")
            print(f"  model           {gateway.seconds:8.2f} s   ({gateway.calls} calls)")
            print(f"  embedding       {embedder.seconds:8.2f} s   ({embedder.calls} calls to the embedding model)")
            print(f"  own time        {own:8.2f} s   (excluding model latency)")
            if name == "rem cycle":
                print(
                    f"  per dream       {own / args.dreams * 1000:8.1f} ms own time, "
                    f"{gateway.calls / args.dreams:.1f} model calls"
                )


if __name__ == "__main__":
    main()
