"""How long the ``explorer`` command takes to start, as whole processes: what an agent or a script calling it in a
loop waits for each time.

    python -m bench.cli [--runs 15]

Times ``explorer --help``, ``explorer wander list --json`` on a small prepared database (a few fortunes read offline
with the hashing embedder, three sessions) and ``python -c pass``, the interpreter's own start, the runs of the
three interleaved so a change in the machine's load falls on all of them alike. Prints each one's median and 90th
percentile, the median as a multiple of ``python -c pass``'s (the figure that carries from a loaded machine to a
quiet one) and the median CPU time it used (user and system, which the load stretches less than the wall time).
Goals (what an agent or a script calling it in a loop can bear): ``--help`` at most 0.3 s, ``wander list --json`` at
most 0.6 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORTUNES = Path(__file__).resolve().parents[1] / "sample_data" / "fortunes" / "fortunes.jsonl"
EXPLORER = Path(sys.executable).with_name("explorer")  # the console script people run
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("EXPLORER_")},
    "EXPLORER_EMBEDDING_MODEL": "hashing",  # no model to load while preparing; listing sessions loads none anyway
}


def _explorer(*args: str) -> list[str]:
    return [str(EXPLORER), *args] if EXPLORER.exists() else [sys.executable, "-m", "explorer", *args]


def prepare(folder: Path) -> Path:
    """A small database as a person's first hour leaves it: a few documents read, three sessions started."""
    db = folder / "bench.duckdb"
    corpus = folder / "fortunes.jsonl"
    corpus.write_text("".join(FORTUNES.read_text(encoding="utf-8").splitlines(keepends=True)[:12]), encoding="utf-8")
    subprocess.run(_explorer("ingest", str(corpus), "--db", str(db)), env=ENV, check=True, capture_output=True)
    for seed in ("memory", "garbage collection", "a lemon cake"):
        steps = ("wander", "new", "--seed-concept", seed, "--db", str(db))
        subprocess.run(_explorer(*steps), env=ENV, check=True, capture_output=True)
    return db


def timed(command: list[str]) -> tuple[float, float]:
    """Seconds one process takes from start to exit, and the CPU seconds it used (user and system), which a
    loaded machine stretches far less than the wall time (its output thrown away; a failure ends the benchmark).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def p90(values: list[float]) -> float:
    """The 90th percentile (the slowest runs a caller in a loop meets)."""
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def main() -> None:
    """Time each command ``--runs`` times, interleaved, and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="Runs of each command (default: 15).")
    parser.add_argument("--json", action="store_true", help="Print the figures as one JSON object.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = prepare(Path(folder))
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "explorer --help": _explorer("--help"),
            "explorer wander list --json": _explorer("wander", "list", "--json", "--db", str(db)),
        }
        for command in commands.values():
            timed(command)  # a warm-up: the files in the page cache, the bytecode written
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                wall, cpu = timed(command)
                walls[name].append(wall)
                cpus[name].append(cpu)
    floor = statistics.median(walls["python -c pass"])
    figures = {
        name: {
            "median_s": statistics.median(walls[name]),
            "p90_s": p90(walls[name]),
            "ratio": statistics.median(walls[name]) / floor,
            "cpu_s": statistics.median(cpus[name]),
        }
        for name in commands
    }
    if args.json:
        print(json.dumps({"runs": args.runs, "figures": figures}, indent=2))
        return
    print(f"{'command':<28} {'median':>8} {'p90':>8} {'× python -c pass':>17} {'CPU':>8}   ({args.runs} runs each)")
    for name, f in figures.items():
        print(f"{name:<28} {f['median_s']:>7.3f}s {f['p90_s']:>7.3f}s {f['ratio']:>16.1f}× {f['cpu_s']:>7.3f}s")


if __name__ == "__main__":
    main()
