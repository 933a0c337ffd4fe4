"""Does the faster runtime give the same answers? torch, ONNX and ONNX int8 on the bundled MiniLM, side by side.

    python -m bench.embedding_runtimes [--vault DIR] [--threads N] [--batch-size N] [--json]

Two corpora: the chunks reading makes of a vault of real documentation (``--vault``, default ``/tmp/vault-1k``,
read with the product's chunker) and the 300 entries of the bridges set (``"{title}: {text}"``, as its kNN anchor
embeds them). Each runtime runs in a process of its own, so its peak memory is its own:

- load: seconds from nothing imported to the first row (torch's import is most of it);
- texts/s on each corpus, wall clock, and the CPU seconds it took (a fairer figure on a shared machine);
- peak RSS of the process;
- agreement with torch: the mean and least cosine between the two runtimes' rows of the same text, and the mean
  overlap of each text's 10 nearest neighbours (itself left out), on each corpus.

The int8 graph is made here, in a temporary folder, by onnxruntime's dynamic quantization of the ONNX graph
(int8 weights per channel; the variant that agreed best of those tried), since the product does not adopt it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

RUNTIMES = ("torch", "onnx", "onnx-int8")
NEIGHBOURS = 10


@dataclass(frozen=True)
class Measured:
    """One runtime's figures, as its own process measured them."""

    runtime: str
    load_s: float
    vault_texts_per_s: float
    vault_cpu_s: float
    bridges_texts_per_s: float
    bridges_cpu_s: float
    peak_rss_mb: float


@dataclass(frozen=True)
class Agreement:
    """How close one runtime's rows are to torch's."""

    mean_cosine: float
    least_cosine: float
    vault_top10: float
    bridges_top10: float


def quantize(graph_dir: Path, out_dir: Path) -> Path:
    """The int8 form of the ONNX graph in ``graph_dir``, written to ``out_dir``."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from explorer.providers.onnx_model import GRAPH

    logging.disable(logging.WARNING)  # its advice to pre-process first is for image models' static quantization
    try:
        quantize_dynamic(
            graph_dir / GRAPH,
            out_dir / GRAPH,
            weight_type=QuantType.QInt8,
            per_channel=True,
            # the fused graph's attention outputs carry no inferred type; they are float
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.disable(logging.NOTSET)
    return out_dir


def measure(runtime: str, texts_file: Path, rows_file: Path, threads: int, batch_size: int, int8: Path) -> Measured:
    """In this process: load ``runtime``, embed both corpora, keep the rows in ``rows_file``."""
    corpora = json.loads(texts_file.read_text())
    started = time.perf_counter()
    from explorer.providers.embeddings import LocalEmbedder

    graph = {"onnx-int8": int8}.get(runtime)
    embedder = LocalEmbedder(
        batch_size=batch_size or None,
        threads=threads,
        runtime="torch" if runtime == "torch" else "onnx",
        graph_dir=graph,
    )
    embedder.embed(["warm up"])
    load_s = time.perf_counter() - started
    rows, speeds = {}, {}
    for corpus, texts in corpora.items():
        wall, cpu = time.perf_counter(), time.process_time()
        rows[corpus] = embedder.embed(texts)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        speeds[corpus] = (len(texts) / wall, cpu)
    np.savez(rows_file, **rows)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Measured(runtime, load_s, *speeds["vault"], *speeds["bridges"], peak_mb)


def top_overlap(reference: np.ndarray, other: np.ndarray, k: int = NEIGHBOURS) -> float:
    """The mean share of each row's ``k`` nearest rows under ``reference`` that are also nearest under ``other``."""

    def nearest(vectors: np.ndarray) -> np.ndarray:
        sims = vectors @ vectors.T
        np.fill_diagonal(sims, -np.inf)
        return np.argsort(-sims, axis=1, kind="stable")[:, :k]

    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(nearest(reference), nearest(other), strict=True)]))


def agreement(torch_rows: dict[str, np.ndarray], rows: dict[str, np.ndarray]) -> Agreement:
    """Cosines of the same texts' rows (both corpora together) and the neighbour overlap on each corpus."""
    cosines = np.concatenate([np.sum(torch_rows[c] * rows[c], axis=1) for c in ("vault", "bridges")])
    return Agreement(
        float(cosines.mean()),
        float(cosines.min()),
        top_overlap(torch_rows["vault"], rows["vault"]),
        top_overlap(torch_rows["bridges"], rows["bridges"]),
    )


def corpora(vault: Path) -> dict[str, list[str]]:
    """The texts of both corpora."""
    from bench.bridges import DEV, load_entries
    from bench.scale_corpus import chunks_of

    bridges = [f"{e.title}: {e.text}" for e in load_entries(DEV, "explicit")]
    return {"vault": chunks_of(vault), "bridges": bridges}


def run_all(texts: dict[str, list[str]], threads: int, batch_size: int) -> list[tuple[Measured, Agreement]]:
    """Each runtime in a process of its own, one after the other, then their rows compared with torch's."""
    from explorer.providers.embeddings import LocalEmbedder
    from explorer.providers.onnx_model import convert, onnx_dir

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        texts_file = work / "texts.json"
        texts_file.write_text(json.dumps(texts))
        int8 = quantize(convert(LocalEmbedder().model_dir, onnx_dir()), work)
        measured, rows = [], {}
        for runtime in RUNTIMES:
            rows_file = work / f"{runtime}.npz"
            command = [sys.executable, "-m", "bench.embedding_runtimes", "--measure", runtime, "--rows", str(rows_file)]
            command += ["--texts", str(texts_file), "--threads", str(threads), "--batch-size", str(batch_size)]
            command += ["--int8", str(int8)]
            out = subprocess.run(command, capture_output=True, text=True, check=True)
            measured.append(Measured(**json.loads(out.stdout.strip().splitlines()[-1])))
            with np.load(rows_file) as saved:
                rows[runtime] = {corpus: saved[corpus] for corpus in saved.files}
    return [(m, agreement(rows["torch"], rows[m.runtime])) for m in measured]


def table(results: list[tuple[Measured, Agreement]], sizes: dict[str, int]) -> str:
    """The figures as a Markdown table."""
    lines = [
        f"vault: {sizes['vault']} chunks; bridges: {sizes['bridges']} entries",
        "",
        "| runtime | load s | vault texts/s (CPU s) | bridges texts/s (CPU s) | peak RSS MB "
        "| cosine to torch mean / least | top-10 overlap vault | top-10 overlap bridges |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m, a in results:
        lines.append(
            f"| {m.runtime} | {m.load_s:.2f} | {m.vault_texts_per_s:.1f} ({m.vault_cpu_s:.1f}) "
            f"| {m.bridges_texts_per_s:.1f} ({m.bridges_cpu_s:.1f}) | {m.peak_rss_mb:.0f} "
            f"| {a.mean_cosine:.6f} / {a.least_cosine:.6f} | {a.vault_top10:.3f} | {a.bridges_top10:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, default=Path("/tmp/vault-1k"))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--batch-size", type=int, default=0, help="texts per model call (0: each runtime's own)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--measure", choices=RUNTIMES, help=argparse.SUPPRESS)  # the child's part
    parser.add_argument("--texts", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--int8", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measured = measure(args.measure, args.texts, args.rows, args.threads, args.batch_size, args.int8)
        print(json.dumps(asdict(measured)))
        return
    texts = corpora(args.vault)
    results = run_all(texts, args.threads, args.batch_size)
    if args.json:
        print(json.dumps([{**asdict(m), **asdict(a)} for m, a in results], indent=2))
        return
    batches = args.batch_size or "each runtime's own (torch 64, onnx 16)"
    print(f"threads {args.threads}, batch size {batches}\n")
    print(table(results, {corpus: len(rows) for corpus, rows in texts.items()}))


if __name__ == "__main__":
    main()
