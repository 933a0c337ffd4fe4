"""The in-memory vector index: exact nearest items on small indexes, an approximate index on large ones."""

from __future__ import annotations

import numpy as np
import pytest

from explorer import vectors
from explorer.vectors import VectorIndex


def clustered(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around 40 centres, as embeddings of a corpus on a few dozen subjects lie."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, dim))
    points = centres[rng.integers(0, 40, n)] + 0.6 * rng.normal(size=(n, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def index_of(matrix: np.ndarray) -> VectorIndex:
    index = VectorIndex(matrix.shape[1], capacity=len(matrix))
    index.add([f"item-{i}" for i in range(len(matrix))], matrix)
    return index


def exact(matrix: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(queries @ matrix.T), axis=1, kind="stable")[:, :k]


def test_nearest_on_a_small_index_is_exact_best_first() -> None:
    matrix = clustered(500, 16)
    queries = clustered(5, 16, seed=1)
    rows, sims = index_of(matrix).nearest(queries, 7)
    assert rows.shape == sims.shape == (5, 7)
    assert (rows == exact(matrix, queries, 7)).all()
    assert np.allclose(sims, np.take_along_axis(queries @ matrix.T, rows, axis=1), atol=1e-5)
    assert (np.diff(sims, axis=1) <= 1e-6).all()


def test_nearest_on_a_large_index_finds_what_an_exact_search_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "ANN_MIN_ROWS", 5_000)  # the approximate index, on a corpus a test can afford
    matrix = clustered(20_000, 32)
    index = index_of(matrix)
    queries = clustered(50, 32, seed=2)
    rows, sims = index.nearest(queries, 10)
    truth = exact(matrix, queries, 10)
    recall = np.mean([len(set(found) & set(true)) / 10 for found, true in zip(rows, truth, strict=True)])
    assert recall >= 0.95, recall
    assert (rows[:, 0] == truth[:, 0]).mean() >= 0.95
    found = rows >= 0
    assert np.allclose(sims[found], (queries @ matrix.T)[np.nonzero(found)[0], rows[found]], atol=1e-4)
    # an item added later is found: the approximate index is built again for the grown index
    index.add(["newcomer"], queries[:1])
    assert index.ids[index.nearest(queries[:1], 1)[0][0, 0]] == "newcomer"


def test_nearest_on_an_empty_index_finds_nothing() -> None:
    rows, sims = VectorIndex(8).nearest(np.ones((2, 8), np.float32) / np.sqrt(8), 3)
    assert rows.shape == (2, 0) and sims.shape == (2, 0)
