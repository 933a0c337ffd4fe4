"""Seconds to a walk's first step and to a night's first dream on a fresh base, as a person runs them.

    python -m bench.first_steps [--base FILE] [--vault DIR | --notes N] [--seed-concept TEXT] [--repeat 1]

A fresh base is what a fast ingest leaves (``enrich="later"``): chunks embedded, placed and linked, no syntheses
or entity insights yet. The base is read from ``--vault`` (default /tmp/vault-10k; ``--notes N`` writes a vault
of N notes with :mod:`bench.vault_corpus` instead) into a new file, or taken as it is with ``--base FILE``
(left untouched: every measurement runs on a copy of it, so each starts from the same fresh base).

Each command runs as a whole process, offline (the built-in provider and the local embedding model):
``explorer wander new`` then ``explorer wander run --steps 1``; ``explorer dream rem --dreams 1``; and
``explorer dream cycle --dreams 1``. Then the same once more in a process of this module that says what part was
starting Python with the engine imported, what part loading the model, and what part the engine's own work.
The goal: each within 10 s on a fresh 10,000-note base, model load included.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

VAULT = Path("/tmp/vault-10k")
GOAL_S = 10.0


def build_base(vault: Path, path: Path) -> Path:
    """A fresh base of ``vault`` at ``path``: read with enrichment left for later."""
    from explorer.reading.ingest import ingest_paths
    from explorer.runtime import open_runtime
    from explorer.settings import Settings

    started = time.perf_counter()
    runtime = open_runtime(replace(Settings(), db_path=path))
    report = ingest_paths(runtime, [vault], enrich="later")
    runtime.flush()
    print(
        f"base: {report.documents_added} documents, {report.chunks_added} chunks read in "
        f"{time.perf_counter() - started:.0f} s into {path}"
    )
    return path


@contextmanager
def copy_of(base: Path) -> Iterator[Path]:
    """A copy of the base (its write-ahead log too), removed afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / base.name
        shutil.copy(base, copy)
        wal = base.with_name(base.name + ".wal")
        if wal.exists():
            shutil.copy(wal, copy.with_name(copy.name + ".wal"))
        yield copy


def _explorer(*args: str) -> tuple[float, dict]:
    """Seconds a whole ``explorer`` process took, and its JSON answer."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "explorer", *args, "--json"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"explorer {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout) if done.stdout.strip() else {}


def seed_concept(base: Path) -> str:
    """A document's title from the middle of the base: where a person starts a walk, a note they know."""
    import duckdb

    with duckdb.connect(str(base), read_only=True) as con:
        count = con.execute("SELECT count(*) FROM documents").fetchone()[0]
        row = con.execute("SELECT title FROM documents ORDER BY id LIMIT 1 OFFSET ?", [count // 2]).fetchone()
    return str(row[0])


def as_a_person(base: Path, concept: str) -> dict[str, float]:
    """Each command's whole-process seconds, on a copy of the base each."""
    figures = {}
    with copy_of(base) as db:
        created, answer = _explorer("wander", "new", "--seed-concept", concept, "--seed", "1", "--db", str(db))
        stepped, _ = _explorer("wander", "run", answer["session_id"], "--steps", "1", "--db", str(db))
        figures["wander new"], figures["wander run --steps 1"] = created, stepped
        figures["walk's first step"] = created + stepped
    for command in ("rem", "cycle"):
        with copy_of(base) as db:
            figures[f"dream {command} --dreams 1"], _ = _explorer(
                "dream", command, "--dreams", "1", "--seed", "1", "--db", str(db)
            )
    return figures


def in_parts(base: Path, concept: str) -> dict[str, float]:
    """The same, in a process of this module each, split into start (imports), model load and the engine's work."""
    figures = {}
    for what in ("walk", "rem", "cycle"):
        with copy_of(base) as db:
            started = time.perf_counter()
            command = ["-m", "bench.first_steps", "--part", what, "--base", str(db), "--seed-concept", concept]
            done = subprocess.run(
                [sys.executable, *command],
                capture_output=True,
                text=True,
                check=True,
            )
            parts = json.loads(done.stdout.strip().splitlines()[-1])
            parts["whole process"] = time.perf_counter() - started
            figures |= {f"{what}: {name}": value for name, value in parts.items()}
    return figures


def part(what: str, db: Path, concept: str) -> None:
    """Run one of them here, timing its parts; print them as JSON (the last line)."""
    started = time.perf_counter()
    from explorer.dreaming import service as dreaming
    from explorer.providers.embeddings import load_model
    from explorer.runtime import open_runtime
    from explorer.settings import Settings
    from explorer.wander import service as wander
    from explorer.wander.config import SessionConfig

    runtime = open_runtime(replace(Settings(), db_path=db))
    imported = time.perf_counter()
    load_model(runtime.embedder)
    runtime.embedder.embed(["warm up"])
    loaded = time.perf_counter()
    if what == "walk":
        session = wander.create_session(runtime, SessionConfig(seed_concept=concept, random_seed=1))
        wander.run(runtime, session.id, 1)
    elif what == "rem":
        dreaming.run_rem(runtime, dreams=1, seed=1)
    else:
        dreaming.run_cycle(runtime, dreams=1, seed=1)
    runtime.flush()
    done = time.perf_counter()
    print(json.dumps({"start": imported - started, "model load": loaded - imported, "engine": done - loaded}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, help="a fresh base to measure on (left untouched)")
    parser.add_argument("--vault", type=Path, default=VAULT, help="the notes to read into a fresh base")
    parser.add_argument("--notes", type=int, help="write a vault of this many notes (bench.vault_corpus) and read it")
    parser.add_argument("--seed-concept", help="where the walk starts (default: a document's title in the base)")
    parser.add_argument("--repeat", type=int, default=1, help="measure this many times (the best is reported)")
    parser.add_argument("--part", choices=("walk", "rem", "cycle"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:
        part(args.part, args.base, args.seed_concept)
        return
    with tempfile.TemporaryDirectory() as folder:
        base = args.base
        if base is None:
            vault = args.vault
            if args.notes:
                from bench.vault_corpus import write_vault

                vault = Path(folder) / "vault"
                write_vault(args.notes, vault)
            base = build_base(vault, Path(folder) / "fresh.duckdb")
        concept = args.seed_concept or seed_concept(base)
        print(f"walks start at {concept!r}")
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            for name, seconds in (as_a_person(base, concept) | in_parts(base, concept)).items():
                best[name] = min(seconds, best.get(name, seconds))
    width = max(map(len, best))
    for name, seconds in best.items():
        goal = "" if ":" in name or name.startswith("wander") else ("  ok" if seconds <= GOAL_S else "  over 10 s")
        print(f"{name:<{width}}  {seconds:7.1f} s{goal}")


if __name__ == "__main__":
    main()
