"""Ingest at scale, against the embedding model alone: ``python -m bench.ingest --docs 1000,5000,10000``.

For each embedding runtime (``--runtimes``, e.g. ``torch,onnx``: the ``EXPLORER_EMBEDDING_RUNTIME`` each process
is started with) and each vault size N, all measured in one run on one machine:

- **embedding alone**: one process loads the model and embeds the chunks of the largest vault in note order,
  64 at a time, and notes the seconds at which the chunks of the first N notes are done (model load apart);
- **ingest**: the vault grows as a person's does, into one database file: its first notes, then the next ones up
  to each N, each stage read by ``explorer ingest VAULT --enrich later --json`` as a person runs it (a stage's
  process reads only the new files). The seconds to N notes are those of every stage so far, whole processes
  (start, model load, listing what is stored, reading, embedding, placing, writing): chunks/s, the ratio to
  embedding alone by the same runtime and by the first one named (torch: the goal is at most 1.5 times what
  sentence-transformers on torch takes to embed the chunks alone), the largest peak memory of a stage, and the
  stage's own seconds (which show whether adding notes costs more as the base grows);
- **an edited note**: one note of the N edited, and ``explorer ingest`` run again on the whole vault, which reads
  that note again (and enriches it at once): the whole process's seconds;
- **agreement**: at the largest N, each runtime's top-10 nearest chunks of 1,000 chunks against the first
  runtime's (the same chunk texts, compared by text): the mean overlap.

The vault is notes of real documentation (:mod:`bench.vault_corpus`) in one order, so each stage adds the next
notes of it.
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


def grow(vault: Path, source: Path, size: int) -> None:
    """Copy into ``vault`` the notes of ``source`` numbered below ``size`` that it lacks (the next stage)."""
    for note in source.rglob("*.md"):
        copy = vault / note.relative_to(source)
        if int(note.name[:5]) < size and not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(note, copy)


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


def edit_one(vault: Path, size: int) -> None:
    """Add a sentence to the middle note of the vault's first ``size``, as a person editing it would."""
    notes = sorted(vault.rglob("*.md"), key=lambda note: note.name)
    note = notes[size // 2]
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
    sizes = sorted(sizes)
    source = folder / "vault"
    if (written := write_vault(sizes[-1], source)) < sizes[-1]:
        raise SystemExit(f"only {written} notes can be made here: install python3.11-doc and git-doc")
    print(f"vault: {sizes[-1]:,} notes of real documentation (bench.vault_corpus), read in stages to {sizes}")
    print(
        f"{'runtime':<8}{'notes':>7}{'chunks':>8}{'embed s':>9}{'ingest s':>10}{'chunks/s':>10}{'ratio':>7}"
        f"{'÷' + runtimes[0]:>8}{'stage s':>9}{'peak MB':>9}{'edit s':>8}{'load s':>8}"
    )
    vectors = {}
    first: dict[str, float] = {}  # the first runtime's embedding-alone seconds, by size
    for turn, runtime in enumerate(runtimes):
        alone = json.loads(run([*EXPLORER[:2], "bench.ingest_scale", str(source), *map(str, sizes)], runtime).stdout)
        db, vault = folder / f"{turn}-{runtime}.duckdb", folder / f"{turn}-{runtime}"
        seconds, chunks, peak = 0.0, 0, 0.0
        for size in sizes:
            grow(vault, source, size)
            stage = run([*EXPLORER, "ingest", str(vault), "--enrich", "later", "--json", "--db", str(db)], runtime)
            seconds, chunks, peak = (
                seconds + stage.seconds,
                chunks + json.loads(stage.stdout)["chunks_added"],
                max(peak, stage.peak_mb),
            )
            edit_one(vault, size)
            edited = run([*EXPLORER, "ingest", str(vault), "--json", "--db", str(db)], runtime)
            embed_s = alone["seconds"][str(size)]
            first.setdefault(str(size), embed_s)  # the first runtime's
            rate, ratio, to_first = chunks / seconds, seconds / embed_s, seconds / first[str(size)]
            print(
                f"{runtime:<8}{size:>7,}{chunks:>8,}{embed_s:>9.1f}{seconds:>10.1f}{rate:>10.1f}{ratio:>7.2f}"
                f"{to_first:>8.2f}{stage.seconds:>9.1f}{peak:>9.0f}{edited.seconds:>8.1f}{alone['load_s']:>8.1f}",
                flush=True,
            )
        vectors[runtime] = chunk_vectors(db)
    for runtime in runtimes[1:]:
        overlap = agreement(vectors[runtimes[0]], vectors[runtime])
        print(f"top-{TOP} neighbour overlap, {runtime} against {runtimes[0]}, {sizes[-1]:,} notes: {overlap:.3f}")


if __name__ == "__main__":  # the embedding-alone process: python -m bench.ingest_scale VAULT SIZE...
    print(json.dumps(embed_alone(Path(sys.argv[1]), [int(size) for size in sys.argv[2:]])))
