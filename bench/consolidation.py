"""Consolidation of 100 and 1,000 experiences through the service (store included), against the
targets of docs/consolidation.md#targets.

    python -m bench.consolidation [--sizes 100 1000] [--seed 0]

The experiences are a synthetic agent's log: sessions of 50 moves, strategy applications and insights over
twenty strategies, each met in three situations of its own words (so the log repeats itself, as a solver's
does), outcomes and durations drawn at random, a breakthrough now and then. They are imported first (capture:
the time per experience is reported), then consolidated. Texts are embedded by hashing and the model is the
built-in offline provider, whose time is measured apart: "own" is a phase's time with the model's left out.
UMAP's first fit in a process (1 s from numba's on-disk cache, about 12 s compiling) is spent once before
measuring and reported apart. Peak memory is Python's heap during the run (tracemalloc, numpy included) and the
process's peak resident size (imports included: 360-460 MB before the first run, most of it the libraries);
``--cycles`` consolidates again and again and prints the resident size after each, so a leak would show.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
import tracemalloc
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from explorer.consolidation import service
from explorer.providers.embeddings import HashingEmbedder
from explorer.runtime import open_runtime
from explorer.settings import Settings

PHASE_OF = {
    "consolidation_pattern": "compression",
    "consolidation_abstraction": "abstraction",
    "consolidation_relation": "integration",
    "consolidation_contradiction": "verification",
}
TARGETS_S = {"triage": 5, "compression": 15, "abstraction": 10, "integration": 5, "verification": 10, "total": 60}
VOCABULARY = [
    *("cell", "row", "column", "box", "digit", "candidate", "single", "pair", "triple", "wing", "chain", "loop"),
    *("colour", "fish", "swordfish", "unit", "line", "intersection", "pointing", "claiming", "hidden", "naked"),
    *("guess", "backtrack", "contradiction", "elimination", "placement", "forced", "unique", "rectangle"),
    *("corner", "pencil", "mark", "scan", "count", "parity", "region", "cage", "sum", "edge"),
]


def log_lines(count: int, seed: int) -> list[str]:
    """``count`` experiences of a synthetic solver, as JSON lines."""
    rng = random.Random(seed)
    strategies = {f"strategy {n}": [rng.sample(VOCABULARY, 6) for _ in range(3)] for n in range(20)}
    lines = []
    for index in range(count):
        name = rng.choice(list(strategies))
        words = " ".join(rng.choice(strategies[name]))  # one of its three situations: solvers repeat themselves
        entry: dict[str, Any] = {"session_id": f"session-{index // 50}", "strategy": name}
        if rng.random() < 0.03:
            entry |= {"kind": "insight", "insight_type": "breakthrough", "impact": "high"}
        else:
            kind = rng.choice(["move", "move", "strategy"])
            entry |= {"kind": kind, "outcome": rng.choice(["success", "success", "progress", "failure"])}
        entry |= {
            "description": f"{words} at r{rng.randint(1, 9)}c{rng.randint(1, 9)}",
            "duration_s": rng.uniform(1, 9),
        }
        entry["confidence"] = round(rng.uniform(0.3, 1.0), 2)
        lines.append(json.dumps(entry))
    return lines


class TimedModel:
    """The offline provider, timed: seconds spent answering, by phase."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def answer(self, prompt: Any, fields: dict[str, Any]) -> str:
        """The offline answer, its time counted against the phase that asked."""
        started = time.perf_counter()
        try:
            return self.inner.answer(prompt, fields)
        finally:
            self.seconds[PHASE_OF[prompt.kind]] += time.perf_counter() - started
            self.calls[PHASE_OF[prompt.kind]] += 1


def resident_mb(field: str) -> float:
    """The process's resident memory now (``VmRSS``) or at its peak (``VmHWM``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def warm_up() -> float:
    """Seconds UMAP's first fit takes in a new process (numba compiles it), spent once before measuring."""
    import numpy as np

    from explorer.consolidation.compression import cluster

    started = time.perf_counter()
    vectors = np.random.default_rng(0).normal(size=(40, 384)).astype(np.float32)
    cluster(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return time.perf_counter() - started


def measure(count: int, seed: int, folder: Path) -> dict[str, Any]:
    """One consolidation of ``count`` experiences on a fresh store: capture, each phase, memory."""
    embedder = HashingEmbedder()
    settings = replace(Settings(), db_path=folder / f"bench-{count}-{seed}.duckdb", embedding_model=embedder.name)
    runtime = open_runtime(settings, embedder=embedder)
    log = folder / f"log-{count}-{seed}.jsonl"
    log.write_text("\n".join(log_lines(count, seed)) + "\n", encoding="utf-8")
    started = time.perf_counter()
    imported = service.import_log(runtime, log)
    capture_s = time.perf_counter() - started
    model = TimedModel(runtime.gateway.offline)
    runtime.gateway.offline = model
    tracemalloc.start()
    started = time.perf_counter()
    report = service.run_consolidation(runtime, "imported").to_json()
    total_s = time.perf_counter() - started
    heap_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    own = {phase: seconds - model.seconds.get(phase, 0.0) for phase, seconds in report["seconds"].items()}
    return {
        "experiences": imported.experiences_added,
        "capture_ms_per_experience": 1000 * capture_s / max(1, imported.experiences_added),
        "triaged": report["triaged"],
        "patterns": len(report["patterns"]),
        "ratio": report["compression_ratio"],
        "levels": report["ladder_levels"],
        "connections": report["connections"],
        "status": report["status"],
        "score": report["verification"]["score"] if report["verification"] else None,
        "own_s": own,
        "model_s": dict(model.seconds),
        "model_calls": dict(model.calls),
        "total_own_s": total_s - sum(model.seconds.values()),
        "total_s": total_s,
        "heap_peak_mb": heap_peak / 2**20,
        "rss_peak_mb": resident_mb("VmHWM"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cycles", type=int, default=1, help="Consolidate each size this many times (leaks show).")
    args = parser.parse_args()
    compile_s = warm_up()
    baseline = resident_mb("VmRSS")
    print(f"UMAP's first fit (numba compiling, once a process): {compile_s:.1f} s; resident after it {baseline:.0f} MB")
    resident = []
    with tempfile.TemporaryDirectory() as folder:
        for cycle in range(args.cycles):
            results = [measure(size, args.seed + cycle, Path(folder)) for size in args.sizes]
            resident.append(resident_mb("VmRSS"))
    if args.cycles > 1:
        print("resident after each cycle: " + ", ".join(f"{mb:.0f} MB" for mb in resident))
    for r in results:  # the last cycle's
        print(
            f"\n{r['experiences']} experiences → {r['triaged']} after triage → {r['patterns']} patterns "
            f"(ratio {r['ratio']}:1), {r['levels']} levels, {r['connections']} connections, {r['status']} "
            f"(score {r['score']}); capture {r['capture_ms_per_experience']:.2f} ms an experience"
        )
        print(f"{'phase':<13}{'own s':>8}{'model s':>9}{'calls':>7}{'target s':>10}")
        for phase, seconds in r["own_s"].items():
            model_s, calls = r["model_s"].get(phase, 0.0), r["model_calls"].get(phase, 0)
            print(f"{phase:<13}{seconds:>8.2f}{model_s:>9.2f}{calls:>7}{TARGETS_S[phase]:>10}")
        model_s = r["total_s"] - r["total_own_s"]
        print(f"{'total':<13}{r['total_own_s']:>8.2f}{model_s:>9.2f}{'':>7}{TARGETS_S['total']:>10}")
        heap, rss = r["heap_peak_mb"], r["rss_peak_mb"]
        print(f"peak memory: heap {heap:.0f} MB during the run, process {rss:.0f} MB at its peak (target 500)")


if __name__ == "__main__":
    main()
