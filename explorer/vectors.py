"""An in-memory cosine index over unit vectors.

Why not SQL: brute-force top-k over 100k×384 vectors costs ~90 ms in DuckDB and
~6 ms in NumPy on a matrix held in memory, and the wander step's budget is
20 ms. The store remains the source of truth; indexes are rebuilt from it.

Why an approximate index as well: a step that asks for the nearest items to
several queries (the analogies a model proposed) would pay a full pass over the
matrix for each. Above ``ANN_MIN_ROWS`` an inverted-file index (faiss IVF-Flat:
the vectors in the ``ANN_PROBES`` cells nearest a query, compared exactly)
answers in well under a millisecond; it is built on first use (about half a
second at 100k rows) and dropped when the index grows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import faiss

ANN_MIN_ROWS = 20_000  # below this, an exact pass costs about a millisecond: no index pays for itself
ANN_PROBES = 32  # cells searched per query, of about sqrt(rows): ~10% of the vectors at 100k
ANN_SAMPLE_PER_CELL = 64  # training sample per cell: enough for stable cells, 4x faster than faiss's default


class VectorIndex:
    """Ids and unit vectors, growable, with exclusion-aware top-k."""

    def __init__(self, dim: int, capacity: int = 1024):
        self.dim = dim
        self._matrix = np.zeros((max(capacity, 1), dim), dtype=np.float32)
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        self._ann: faiss.IndexIVFFlat | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._position

    @property
    def ids(self) -> list[str]:
        """The item ids in row order, so a row number found by a mask or a product names its item."""
        return self._ids

    @property
    def matrix(self) -> np.ndarray:
        """The filled rows only (the buffer keeps spare rows for growth), one unit vector per id."""
        return self._matrix[: len(self._ids)]

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Index new items as they appear (a locus just met); an id already indexed keeps its first vector."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        fresh = [(i, v) for i, v in zip(ids, vectors, strict=True) if i not in self._position]
        if not fresh:
            return
        needed = len(self._ids) + len(fresh)
        if needed > len(self._matrix):
            grown = np.zeros((max(needed, 2 * len(self._matrix)), self.dim), dtype=np.float32)
            grown[: len(self._ids)] = self.matrix
            self._matrix = grown
        self._ann = None
        for item_id, vector in fresh:
            self._position[item_id] = len(self._ids)
            self._matrix[len(self._ids)] = vector
            self._ids.append(item_id)

    def row(self, item_id: str) -> int | None:
        """The item's row in :attr:`matrix` (None: not indexed), to line it up with per-row data or masks."""
        return self._position.get(item_id)

    def vector(self, item_id: str) -> np.ndarray:
        """An indexed item's vector, without a database read."""
        return self._matrix[self._position[item_id]]

    def similarities(self, query: np.ndarray) -> np.ndarray:
        """The cosine of every indexed item to ``query`` (all unit vectors), in row order."""
        return self.matrix @ np.asarray(query, dtype=np.float32)

    def nearest(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the ``k`` items nearest each query (unit vectors, one per row) and their cosines, best
        first; a row of -1 where fewer were found. Exact below ``ANN_MIN_ROWS``, approximate above (an item
        outside the cells searched can be missed: callers that filter the rows fall back to an exact pass when
        none is left).
        """
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, len(self._ids))
        if k <= 0:
            return np.full((len(queries), 0), -1, dtype=np.int64), np.zeros((len(queries), 0), np.float32)
        if len(self._ids) < ANN_MIN_ROWS:
            sims = np.einsum("ij,kj->ki", self.matrix, queries)
            best = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            order = np.argsort(-np.take_along_axis(sims, best, axis=1), axis=1, kind="stable")
            rows = np.take_along_axis(best, order, axis=1)
            return rows, np.take_along_axis(sims, rows, axis=1)
        sims, rows = self._inverted_file().search(queries, k)
        return rows, sims

    def _inverted_file(self) -> faiss.IndexIVFFlat:
        if self._ann is None:
            import faiss  # 50 ms on every start of every command, and only a corpus above ANN_MIN_ROWS needs it

            cells = int(math.sqrt(len(self._ids)))
            quantizer = faiss.IndexFlatIP(self.dim)
            ann = faiss.IndexIVFFlat(quantizer, self.dim, cells, faiss.METRIC_INNER_PRODUCT)
            ann.cp.max_points_per_centroid = ANN_SAMPLE_PER_CELL
            matrix = np.ascontiguousarray(self.matrix)
            ann.train(matrix)
            ann.add(matrix)
            ann.nprobe = min(ANN_PROBES, cells)
            self._ann = ann
        return self._ann

    def top_k(
        self, query: np.ndarray, k: int, *, exclude: Iterable[str] = (), allowed: np.ndarray | None = None
    ) -> list[tuple[str, float]]:
        """The ``k`` most similar items as (id, cosine), best first.

        ``exclude`` drops ids (an item never finds itself); ``allowed`` is a
        boolean mask over the index rows for filters such as an entity name.
        """
        if not self._ids or k <= 0:
            return []
        sims = self.similarities(query).copy()
        if allowed is not None:
            sims[~allowed[: len(sims)]] = -np.inf
        for item_id in exclude:
            position = self._position.get(item_id)
            if position is not None:
                sims[position] = -np.inf
        k = min(k, len(sims))
        best = np.argpartition(-sims, k - 1)[:k]
        best = best[np.argsort(-sims[best], kind="stable")]
        return [(self._ids[i], float(sims[i])) for i in best if np.isfinite(sims[i])]
