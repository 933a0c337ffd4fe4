"""The ONNX runtime of the local model: unit rows of the model's width, the rows torch gives (so a database keeps
its model name across runtimes), chosen by a setting, started without torch, and converted when it is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from explorer.providers.embeddings import LocalEmbedder, load_model, make_embedder
from explorer.providers.onnx_model import GRAPH
from explorer.reading.chunker import chunk_text
from explorer.settings import DEFAULT_EMBEDDING_MODEL, SettingsError, load_settings

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
# Measured on 1,300 texts (a real vault's chunks and the bridges set): the least cosine between the runtimes' rows
# of one text was above 0.99999; torch builds differ by more than that, so this bound leaves room for them only.
SAME_ROW = 0.9999


@pytest.fixture(scope="module")
def sample_texts() -> list[str]:
    """A real document's chunks (many of them close to each other) and some short quotations."""
    fortunes = [json.loads(line)["text"] for line in (SAMPLE / "fortunes" / "fortunes.jsonl").open()]
    return chunk_text((SAMPLE / "python-whatsnew" / "whatsnew-2.0.md").read_text())[:60] + fortunes[:30]


@pytest.fixture(scope="module")
def both_runtimes(sample_texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The sample's rows from each runtime, on one thread (tests run beside each other)."""
    onnx = LocalEmbedder(threads=1, runtime="onnx").embed(sample_texts)
    torch = LocalEmbedder(threads=1, runtime="torch").embed(sample_texts)
    return onnx, torch


def nearest(vectors: np.ndarray, k: int) -> list[set[int]]:
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    return [set(row) for row in np.argsort(-sims, axis=1)[:, :k]]


@pytest.mark.minilm
def test_onnx_rows_are_unit_rows_of_the_model_width(both_runtimes, sample_texts) -> None:
    onnx, _ = both_runtimes
    assert onnx.shape == (len(sample_texts), LocalEmbedder().dim) == (len(sample_texts), 384)
    assert onnx.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(onnx, axis=1), 1.0, rtol=1e-5)


@pytest.mark.minilm
def test_onnx_rows_are_torch_rows(both_runtimes) -> None:
    onnx, torch = both_runtimes
    assert np.sum(onnx * torch, axis=1).min() >= SAME_ROW
    overlaps = [len(a & b) / 10 for a, b in zip(nearest(onnx, 10), nearest(torch, 10), strict=True)]
    assert np.mean(overlaps) >= 0.99


@pytest.mark.minilm
def test_batches_on_several_threads_keep_the_texts_order(sample_texts) -> None:
    texts = sample_texts[:24]
    one_by_one = np.vstack([LocalEmbedder(threads=1).embed([text]) for text in texts])
    together = LocalEmbedder(threads=3, batch_size=4).embed(texts)
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_the_setting_picks_the_runtime(tmp_path) -> None:
    def runtime_of(environ: dict[str, str]) -> str:
        settings = load_settings(environ, tmp_path / "absent.toml")
        embedder = make_embedder(settings.embedding_model, runtime=settings.embedding_runtime)
        assert isinstance(embedder, LocalEmbedder) and embedder.name == DEFAULT_EMBEDDING_MODEL
        return embedder.runtime

    assert runtime_of({}) == "onnx"
    assert runtime_of({"EXPLORER_EMBEDDING_RUNTIME": "torch"}) == "torch"
    with pytest.raises(SettingsError, match="EXPLORER_EMBEDDING_RUNTIME"):
        load_settings({"EXPLORER_EMBEDDING_RUNTIME": "tensorflow"}, tmp_path / "absent.toml")


@pytest.mark.minilm
def test_onnx_starts_without_torch_and_without_network() -> None:
    # A fresh process with every proxy pointing nowhere: any network use would fail.
    code = (
        "import sys\n"
        "from explorer.providers.embeddings import LocalEmbedder\n"
        "v = LocalEmbedder(threads=1).embed(['a cat sat on the mat', 'a kitten rested on the rug', 'tax law'])\n"
        "print(v.shape, bool(v[0] @ v[1] > v[0] @ v[2]), 'torch' in sys.modules)"
    )
    proxies = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    out = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, **proxies), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "(3, 384) True False"


@pytest.mark.minilm
def test_a_missing_graph_is_converted_once_and_said(tmp_path, sample_texts) -> None:
    graph_dir = tmp_path / "graph"
    embedder = LocalEmbedder(threads=1, graph_dir=graph_dir)
    assert embedder.needs_conversion
    said: list[str] = []
    load_model(embedder, lambda done, total, note, phase="": said.append(phase))
    assert said == ["converting the embedding model to ONNX, once"]
    assert (graph_dir / GRAPH).is_file() and not embedder.needs_conversion
    assert [p.name for p in tmp_path.iterdir()] == ["graph"]  # no temporary folder left beside it
    installed = LocalEmbedder(threads=1).embed(sample_texts[:8])
    np.testing.assert_allclose(embedder.embed(sample_texts[:8]), installed, atol=1e-5)
