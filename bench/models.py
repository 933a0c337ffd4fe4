"""Model-bound throughput against a local OpenAI-compatible server that answers after a fixed latency.

    python -m bench.models [--latency 1.0] [--concurrency 8] [--dreams 60]

A real model takes seconds per call; the engine's own time is then noise, and
what counts is how many calls are in flight at once. For each model-bound phase
(reading a document: implants, entities, insights; a REM cycle) this runs the phase sequentially (concurrency 1) and at
``--concurrency``, through the real gateway, litellm and HTTP, and prints the
calls per second of each and their ratio (the target: at least 6× at
concurrency 8 with a 1 s model). Then it times ``explorer dream rem --dreams 60``
end to end, as a user runs it (target: at most 25 s).

    python -m bench.models --real     # a real small model, end to end: see bench/real_model.py
    python -m bench.models --context  # each prompt kind's tokens on the demo corpus: the n_ctx a model needs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from explorer.dreaming import service as dreaming
from explorer.providers.embeddings import HASHING, HashingEmbedder
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.testing.model_server import SERVED_MODEL, ModelServer, Reply, Request

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
WHATSNEW = sorted((SAMPLE / "python-whatsnew").glob("*.md"))
SEQUENTIAL_DOCS = WHATSNEW[:1]  # one call at a time: one document is enough to measure the rate
CONCURRENT_DOCS = WHATSNEW[1:9]  # read together, as ingest batches them


def quick(request: Request) -> Reply:
    """A valid answer for each prompt kind, made at once from the prompt's own words: the fake model's own CPU
    time would otherwise be measured with the product's (the server shares this process and its GIL).
    """
    fields = request.fields or {}
    words = " ".join(str(next(iter(fields.values()), "the topic")).split()[:12]).strip(".,;:") or "the topic"
    paragraph = f"This passage extends what is known about {words}, and it adds one new and specific detail."
    answers = {
        "entities": json.dumps(
            {"entities": [{"entity": words.split()[0].strip("[]().,:"), "learning": "it is discussed here in detail"}]}
        ),
        "rem_question": f"What binds {words} to the other passages?",
    }
    return Reply(answers.get(request.kind or "", paragraph))


def hashing_runtime(path: Path, **settings: Any) -> Runtime:
    """A runtime on the database at ``path`` with the hashing embedder (no model to load: the benches measure the
    model calls) and ``settings`` over the defaults; offline unless they name a model to serve it.
    """
    configured = replace(Settings(), db_path=path, embedding_model=HASHING, **settings)
    return open_runtime(configured, embedder=HashingEmbedder())


def prepared(folder: Path) -> Path:
    """A database holding the fortunes, read offline (fast), for the phases to dream and explore over."""
    path = folder / "bench.duckdb"
    runtime = hashing_runtime(path)
    report = ingest_paths(runtime, [SAMPLE / "fortunes"])
    runtime.flush()
    print(f"prepared: {report.chunks_added} chunks read offline")
    return path


def served(path: Path, server: ModelServer, concurrency: int) -> Runtime:
    return hashing_runtime(path, local_model=SERVED_MODEL, api_base=server.url, concurrency=concurrency, timeout_s=30.0)


def throughput(server: ModelServer, run: Callable[[], object]) -> tuple[int, float]:
    """(calls the server answered, seconds) for one run of a phase."""
    before = len(server.requests)
    started = time.perf_counter()
    run()
    return len(server.requests) - before, time.perf_counter() - started


def phases(path: Path, server: ModelServer, concurrency: int, dreams: int) -> dict[str, Callable[[], object]]:
    """Each phase, on a runtime at ``concurrency``; the sequential runs do less work (rates are compared)."""
    runtime = served(path, server, concurrency)
    sequential = concurrency == 1
    return {
        "reading": lambda: ingest_paths(runtime, SEQUENTIAL_DOCS if sequential else CONCURRENT_DOCS),
        "rem cycle": lambda: dreaming.run_rem(runtime, dreams=2 if sequential else dreams // 2, seed=1),
    }


def main() -> None:
    """Print each phase's calls per second, sequential and concurrent, then time the 60-dream command (or run
    the real-model bench, ``--real`` or ``--context``).
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the server takes per answer")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--dreams", type=int, default=60, help="dreams for the end-to-end command")
    parser.add_argument("--real", action="store_true", help="a real small model end to end (bench/real_model.py)")
    parser.add_argument("--context", action="store_true", help="each prompt kind's tokens on the demo corpus")
    parser.add_argument("--corpus", nargs="+", choices=("demo", "docs"), default=["demo", "docs"], help="with --real")
    parser.add_argument("--modes", nargs="+", choices=("off", "auto"), default=["off", "auto"], help="with --real")
    parser.add_argument("--steps", type=int, default=10, help="the walk's steps, with --real")
    args = parser.parse_args()
    if args.real or args.context:
        from bench import real_model

        if args.real:
            real_model.real(args.corpus, args.modes, steps=args.steps)
        else:
            real_model.context()
        return
    with tempfile.TemporaryDirectory() as folder, ModelServer(latency_s=args.latency, script=quick) as server:
        path = prepared(Path(folder))
        os.environ.update(server.env())  # litellm's OpenAI client wants a key, whatever the server
        print(f"model: {args.latency:g} s per answer, concurrency {args.concurrency}")
        print(f"  {'phase':<12} {'sequential':>16} {'concurrent':>16} {'ratio':>7}")
        slow = phases(path, server, 1, args.dreams)
        fast = phases(path, server, args.concurrency, args.dreams)
        for name in slow:
            calls_1, seconds_1 = throughput(server, slow[name])
            calls_n, seconds_n = throughput(server, fast[name])
            rate_1, rate_n = calls_1 / seconds_1, calls_n / seconds_n
            print(
                f"  {name:<12} {rate_1:6.2f} calls/s ({calls_1:3d}) {rate_n:6.2f} calls/s ({calls_n:3d}) "
                f"{rate_n / rate_1:6.1f}x"
            )
        env = dict(os.environ, EXPLORER_DB=str(path), EXPLORER_EMBEDDING_MODEL=HASHING)
        env["EXPLORER_CONCURRENCY"] = str(args.concurrency)
        command = [sys.executable, "-m", "explorer", "dream", "rem", "--dreams", str(args.dreams), "--seed", "3"]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        last = (done.stdout or done.stderr).strip().splitlines()[-1:] or ["(no output)"]
        print(f"explorer dream rem --dreams {args.dreams}: {seconds:.1f} s (exit {done.returncode}): {last[0]}")


if __name__ == "__main__":
    main()
