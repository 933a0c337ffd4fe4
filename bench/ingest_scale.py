"""Ingest at scale, against the embedding model alone: ``python -m bench.ingest --docs 1000,5000,10000``.

For each embedding runtime (``--runtimes``, e.g. ``torch,onnx``: the ``EXPLORER_EMBEDDING_RUNTIME`` each process
is started with) and each vault size, all measured in one run on one machine:

- **embedding alone**: one process loads the model and embeds the chunks of the largest vault in note order,
  64 at a time, and notes the seconds at which the chunks of the first N notes are done (model load apart);
- **ingest**: ``explorer ingest VAULT --enrich later --json`` into a fresh database file, as a person runs it: the
  whole process's seconds (start, model load, reading, embedding, placing, writing), its chunks/s and peak memory,
  and the ratio of those seconds to embedding alone (the goal: at most 1.5);
- **an edited note**: one note of the vault edited, and ``explorer ingest`` run again on the whole vault: the
  whole process's seconds, and the engine's own (``--json``'s report has none, so the process is timed; the
  model load it includes is printed apart from embedding alone);
- **agreement**: for the largest vault, each runtime's top-10 nearest chunks of 1,000 chunks against the first
  runtime's (the same chunk texts, compared by text): the mean overlap.

The vaults are notes of real documentation (:mod:`bench.vault_corpus`), the first N of one order, so a larger
vault holds the smaller ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bench.vault_corpus import write_vault

EXPLORER = [sys.executable, "-m", "explorer"]
QUERIES = 1000  # chunks whose neighbours are compared between runtimes
TOP = 10


@dataclass(frozen=True)
class Run:
    """One process: its wall seconds and peak resident memory, and what it printed on stdout."""

    seconds: float
    peak_mb: float
    stdout: str


def run(command: list[str], runtime: str) -> Run:
    """Run ``command`` with the embedding runtime set, timing it and reading its own peak memory (``wait4``)."""
    env = {**os.environ, "EXPLORER_EMBEDDING_RUNTIME": runtime}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}")
    return Run(seconds, usage.ru_maxrss / 1024, text)


def vaults(sizes: list[int], folder: Path) -> dict[int, Path]:
    """A vault of each size under ``folder``: the largest written once, each smaller one its first notes."""
    largest = folder / f"vault-{max(sizes)}"
    written = write_vault(max(sizes), largest)
    if written < max(sizes):
        raise SystemExit(f"only {written} notes can be made here: install python3.11-doc and git-doc")
    made = {max(sizes): largest}
    for size in sorted(set(sizes) - {max(sizes)}):
        made[size] = folder / f"vault-{size}"
        for note in largest.rglob("*.md"):
            if int(note.name[:5]) < size:
                copy = made[size] / note.relative_to(largest)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(note, copy)
    return made


def embed_alone(vault: Path, sizes: list[int]) -> dict:
    """In this process (run as ``--embed-alone``): the model's load seconds, then the seconds to embed the chunks
    of the first N notes of ``vault``, for each N of ``sizes``, and the chunks counted.
    """
    from explorer.reading.chunker import chunk_sections
    from explorer.reading.loaders import Section, SourceText, load_file
    from explorer.runtime import open_runtime
    from explorer.settings import load_settings

    notes = sorted(vault.rglob("*.md"), key=lambda note: note.name)
    chunks: list[str] = []
    ends = {}
    for number, note in enumerate(notes, 1):
        for source in load_file(note):
            if isinstance(source, SourceText):
                chunks += [c.text for c in chunk_sections(source.sections or [Section(source.text)])]
        if number in sizes:
            ends[number] = len(chunks)
    with tempfile.TemporaryDirectory() as folder:
        settings = replace(load_settings(dict(os.environ)), db_path=Path(folder) / "x.duckdb")
        model = open_runtime(settings).embedder.inner  # the embedder the product makes of the settings
        started = time.perf_counter()
        model.embed(["warm up"])
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        seconds = {}
        for start in range(0, len(chunks), 64):
            model.embed(chunks[start : start + 64])
            for size, end in ends.items():
                if start < end <= start + 64:
                    seconds[size] = time.perf_counter() - started
    return {"load_s": load_s, "seconds": seconds, "chunks": ends}


def edit_one(vault: Path) -> None:
    """Add a sentence to the vault's middle note, as a person editing it would."""
    notes = sorted(vault.rglob("*.md"), key=lambda note: note.name)
    note = notes[len(notes) // 2]
    note.write_text(note.read_text(encoding="utf-8") + "\nEdited: one more sentence on this matter.\n", "utf-8")


def chunk_vectors(db: Path) -> dict[str, np.ndarray]:
    """Every chunk's vector in a database, by its text."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT text, embedding FROM nodes WHERE type = 'raw_chunk'").fetchall()
    return {text: np.asarray(vector, dtype=np.float32) for text, vector in rows}


def agreement(first: dict[str, np.ndarray], other: dict[str, np.ndarray]) -> float:
    """Mean overlap of the top-10 neighbours of :data:`QUERIES` chunks, the first runtime's against another's."""
    texts = sorted(set(first) & set(other))
    a = np.vstack([first[t] for t in texts])
    b = np.vstack([other[t] for t in texts])
    rows = np.random.default_rng(0).choice(len(texts), min(QUERIES, len(texts)), replace=False)
    overlap = []
    for row in rows:
        near_a = set(np.argsort(-(a @ a[row]))[1 : TOP + 1])
        near_b = set(np.argsort(-(b @ b[row]))[1 : TOP + 1])
        overlap.append(len(near_a & near_b) / TOP)
    return float(np.mean(overlap))


def measure(sizes: list[int], runtimes: list[str], folder: Path) -> None:
    """Every measurement of the module's note, printed as a table a runtime and size a row."""
    made = vaults(sizes, folder / "vaults")
    print(f"vaults: {', '.join(f'{size:,} notes' for size in sorted(made))} (bench.vault_corpus)")
    largest = made[max(sizes)]
    print(
        f"{'runtime':<8}{'notes':>7}{'chunks':>8}{'embed s':>9}{'ingest s':>10}{'chunks/s':>10}{'ratio':>7}"
        f"{'peak MB':>9}{'edit s':>8}{'load s':>8}"
    )
    vectors = {}
    for turn, runtime in enumerate(runtimes):
        alone = json.loads(run([*EXPLORER[:2], "bench.ingest_scale", str(largest), *map(str, sizes)], runtime).stdout)
        for size in sorted(sizes):
            db = folder / f"{turn}-{runtime}-{size}.duckdb"
            vault = folder / f"{turn}-{runtime}-{size}"
            shutil.copytree(made[size], vault)
            ingest = run([*EXPLORER, "ingest", str(vault), "--enrich", "later", "--json", "--db", str(db)], runtime)
            chunks = json.loads(ingest.stdout)["chunks_added"]
            edit_one(vault)
            edited = run([*EXPLORER, "ingest", str(vault), "--json", "--db", str(db)], runtime)
            embed_s = alone["seconds"][str(size)]
            rate, ratio = chunks / ingest.seconds, ingest.seconds / embed_s
            print(
                f"{runtime:<8}{size:>7,}{chunks:>8,}{embed_s:>9.1f}{ingest.seconds:>10.1f}{rate:>10.1f}{ratio:>7.2f}"
                f"{ingest.peak_mb:>9.0f}{edited.seconds:>8.1f}{alone['load_s']:>8.1f}",
                flush=True,
            )
            if size == max(sizes):
                vectors[runtime] = chunk_vectors(db)
    for runtime in runtimes[1:]:
        overlap = agreement(vectors[runtimes[0]], vectors[runtime])
        print(f"top-{TOP} neighbour overlap, {runtime} against {runtimes[0]}, {max(sizes):,} notes: {overlap:.3f}")


if __name__ == "__main__":  # the embedding-alone process: python -m bench.ingest_scale VAULT SIZE...
    print(json.dumps(embed_alone(Path(sys.argv[1]), [int(size) for size in sys.argv[2:]])))
