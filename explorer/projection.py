"""The stable map: every node, locus, crystal and resonance at a fixed 2-d point.

The corpus is fitted once with UMAP (cosine, a fixed seed); the points are stored
and every drawing reads them. Whatever arrives later (new chunks, dreams, a
session's loci, crystals, resonances) is *placed* without refitting: at the
corpus node it stands on when there is one (a locus on a node, a crystal at its
locus), otherwise at the similarity-weighted mean of its nearest fitted nodes.
Placement is deterministic, costs milliseconds and needs no compiled code, so
drawing a page never waits for UMAP; a refit happens only when asked for.

Why not UMAP's own ``transform``: measured on the sample corpus
(``python -m bench.figures --db DB``: 1,624 nodes fitted, 407 placed) it keeps
about as many of a new point's ten nearest neighbours near it on the map (48%,
against 47% here), but it needs the fitted model kept (pickled with its search
index, whose fit took 4.9 s against 2.1 s), and its first call in each process
compiles numba code: 7.4 s (1.4 s warm), against 37 ms for the 407 here.

A refit (asked for when many nodes arrived after the fit) lays the map out afresh, so
its layout is aligned to the old one before it is stored: the rotation or reflection,
uniform scale and shift that bring the nodes both layouts share closest to where they
were (orthogonal Procrustes). Clusters still move where the new fit moved them
against each other, but the map as a whole does not turn, flip or jump; the report
says how far the old points moved on average, with and without the alignment.

Why the nearest neighbours are computed here (exactly, in NumPy) and handed to
UMAP: UMAP's own search (pynndescent) compiles code that numba cannot cache,
which cost 60-150 s on the first fit of 4096 points or more in every process;
with the neighbours given and UMAP's functions compiled with numba's on-disk
cache, a first fit in a new process costs seconds.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from explorer.records import Progress, begin
from explorer.runtime import Runtime
from explorer.store import events as events_store
from explorer.store import projection as projection_store
from explorer.store.projection import StoredPoint
from explorer.umap_loader import import_umap


@dataclass(frozen=True)
class ProjectionConfig:
    """UMAP's parameters for the fit and the neighbours used to place new points."""

    n_neighbors: int = 15
    min_dist: float = 0.1
    seed: int = 0
    place_k: int = 8  # fitted neighbours a new point is placed among
    place_temperature: float = 0.05  # softmax temperature over their cosine similarities
    stale_share: float = 0.5  # placed nodes / fitted nodes above which a refit is suggested


@dataclass
class ProjectionReport:
    """What one update did. ``needs_fit``: there is nothing to place against yet."""

    version: int = 0
    fitted: int = 0
    placed: dict[str, int] = field(default_factory=dict)
    removed: int = 0
    seconds: float = 0.0
    needs_fit: bool = False
    # after a refit: how far the nodes already on the map moved on average (map units), aligned and as fitted
    mean_displacement: float | None = None
    mean_displacement_unaligned: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as `explorer map --json` prints it."""
        return asdict(self)


@dataclass(frozen=True)
class ProjectionStatus:
    """Whether the map is fitted, what has been placed on it since, what is still missing, and so whether a
    refit would be worth its minutes.
    """

    version: int
    fitted_nodes: int
    placed_nodes: int
    placed_other: int
    missing: dict[str, int]
    stale_share: float

    @property
    def fitted(self) -> bool:
        """Whether there is a fit to place new points against (a map can be drawn)."""
        return self.fitted_nodes > 0

    @property
    def stale(self) -> bool:
        """So many nodes arrived after the fit that the map no longer reflects the corpus well."""
        return self.fitted and self.placed_nodes > self.stale_share * self.fitted_nodes

    def to_json(self) -> dict[str, Any]:
        """The status with its derived verdicts, as `explorer map --json` prints it under ``status``."""
        return {**asdict(self), "fitted": self.fitted, "stale": self.stale}


# -- pure parts ---------------------------------------------------------------


def exact_knn(vectors: np.ndarray, k: int, block_bytes: int = 128 << 20) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` nearest rows by cosine (itself first), as UMAP expects:
    (indices int64, cosine distances float32), in blocks that bound memory.
    """
    n = len(vectors)
    k = min(k, n)
    indices = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float32)
    step = max(16, block_bytes // max(1, 4 * n))
    for start in range(0, n, step):
        sims = vectors[start : start + step] @ vectors.T
        rows = np.arange(len(sims))
        sims[rows, start + rows] = np.inf  # a row is its own nearest neighbour, even with duplicates
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        top = np.take_along_axis(sims, part, axis=1)
        order = np.argsort(-top, axis=1, kind="stable")
        indices[start : start + step] = np.take_along_axis(part, order, axis=1)
        top = np.take_along_axis(top, order, axis=1)
        top[:, 0] = 1.0
        distances[start : start + step] = np.clip(1.0 - top, 0.0, 2.0)
    return indices, distances


def fit_layout(vectors: np.ndarray, config: ProjectionConfig = ProjectionConfig()) -> np.ndarray:
    """2-d UMAP coordinates of unit ``vectors`` (rows), deterministic for a given seed."""
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2))
    if n < 5:  # too few for a neighbour graph: the first two principal axes
        centred = vectors - vectors.mean(axis=0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        xy = centred @ vt[:2].T if len(vt) >= 2 else np.column_stack([centred @ vt[0], np.zeros(n)])
        return np.asarray(xy, dtype=np.float64) * 10.0
    umap = import_umap()
    k = max(2, min(config.n_neighbors, n - 1))
    knn = exact_knn(np.asarray(vectors, dtype=np.float32), k)
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=k,
        min_dist=config.min_dist,
        metric="cosine",
        random_state=config.seed,
        precomputed_knn=(knn[0], knn[1], None),
        init="spectral" if n > 2 * k else "random",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n_jobs overridden by random_state; no search index kept
        xy = reducer.fit_transform(vectors)
    return np.asarray(xy, dtype=np.float64)


def place_by_neighbours(
    anchor_vectors: np.ndarray, anchor_xy: np.ndarray, vectors: np.ndarray, k: int = 8, temperature: float = 0.05
) -> np.ndarray:
    """Points for ``vectors``: the softmax(cosine / temperature)-weighted mean of their
    ``k`` most similar anchors' points. Deterministic for the same inputs; the same vector in another batch can
    land a little elsewhere when its k-th and next anchors nearly tie (BLAS sums a batch's products in its own
    order, so they can differ in the last bits).
    """
    if len(vectors) == 0:
        return np.zeros((0, 2))
    if len(anchor_vectors) == 0:
        raise ValueError("no anchors to place points against")
    k = min(k, len(anchor_vectors))
    out = np.empty((len(vectors), 2))
    step = max(16, (64 << 20) // max(1, 4 * len(anchor_vectors)))
    for start in range(0, len(vectors), step):
        sims = np.asarray(vectors[start : start + step], dtype=np.float32) @ anchor_vectors.T
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        top = np.take_along_axis(sims, part, axis=1).astype(np.float64)
        weights = np.exp((top - top.max(axis=1, keepdims=True)) / temperature)
        weights /= weights.sum(axis=1, keepdims=True)
        out[start : start + step] = np.einsum("nk,nkd->nd", weights, anchor_xy[part])
    return out


@dataclass(frozen=True)
class Alignment:
    """A similarity transform of the plane, ``scale * xy @ rotation + shift`` (the rotation may be a reflection)."""

    rotation: np.ndarray
    scale: float
    shift: np.ndarray

    def apply(self, xy: np.ndarray) -> np.ndarray:
        """The points moved by the transform."""
        return self.scale * (np.asarray(xy, dtype=np.float64) @ self.rotation) + self.shift


def procrustes(moving: np.ndarray, fixed: np.ndarray) -> Alignment:
    """The rotation or reflection, uniform scale and shift that bring the ``moving`` points closest to the
    ``fixed`` ones, row for row (least squares: orthogonal Procrustes, the SVD of the centred points' cross
    product). Points that all coincide can only be shifted; no points, nothing to do.
    """
    moving = np.asarray(moving, dtype=np.float64)
    fixed = np.asarray(fixed, dtype=np.float64)
    if moving.shape != fixed.shape or moving.ndim != 2:
        raise ValueError(f"points to align must pair up: {moving.shape} and {fixed.shape}")
    dim = moving.shape[1]
    if len(moving) == 0:
        return Alignment(np.eye(dim), 1.0, np.zeros(dim))
    moving_centre, fixed_centre = moving.mean(axis=0), fixed.mean(axis=0)
    a, b = moving - moving_centre, fixed - fixed_centre
    spread = float((a**2).sum())
    if spread == 0:
        return Alignment(np.eye(dim), 1.0, fixed_centre - moving_centre)
    u, singular, vt = np.linalg.svd(a.T @ b)
    rotation = u @ vt
    scale = float(singular.sum()) / spread
    return Alignment(rotation, scale, fixed_centre - scale * moving_centre @ rotation)


def mean_displacement(before: np.ndarray, after: np.ndarray) -> float:
    """How far the points moved on average (Euclidean, row for row)."""
    if len(before) == 0:
        return 0.0
    return float(np.linalg.norm(np.asarray(after) - np.asarray(before), axis=1).mean())


def align_to(
    ids: list[str], xy: np.ndarray, old_ids: list[str], old_xy: np.ndarray
) -> tuple[np.ndarray, tuple[float, float]]:
    """A new layout of ``ids`` aligned to the old one on the nodes both hold, and the old points' mean
    displacement (aligned, and as fitted).
    """
    row = {node: i for i, node in enumerate(ids)}
    pairs = [(row[node], j) for j, node in enumerate(old_ids) if node in row]
    new_rows = np.array([i for i, _ in pairs], dtype=np.int64)
    old_rows = np.array([j for _, j in pairs], dtype=np.int64)
    before = old_xy[old_rows]
    unaligned = mean_displacement(before, xy[new_rows])
    aligned = procrustes(xy[new_rows], before).apply(xy)
    return aligned, (round(mean_displacement(before, aligned[new_rows]), 4), round(unaligned, 4))


# -- orchestration ------------------------------------------------------------


def update_projection(
    runtime: Runtime,
    *,
    refit: bool = False,
    config: ProjectionConfig = ProjectionConfig(),
    progress: Progress | None = None,
) -> ProjectionReport:
    """Fit the map if it was never fitted (or ``refit``), then place everything not on it yet.

    The fit runs with no connection held (other processes keep the file), then
    its points replace the old ones in one transaction, with an event that
    records the parameters. A refit is aligned to the map it replaces (see the
    module's notes) and reports how far the old points moved.
    """
    started = time.perf_counter()
    with runtime.db.connect() as con:
        version = projection_store.current_version(con)
        has_anchors = version > 0 and bool(projection_store.point_counts(con).get(("node", "umap")))
        ids, vectors = projection_store.all_node_vectors(con) if (refit or not has_anchors) else ([], None)
        old_ids, old_xy = projection_store.node_xy(con) if vectors is not None else ([], np.zeros((0, 2)))
    fitted = 0
    moved: tuple[float, float] | None = None
    if vectors is not None and ids:
        # the first fit in a process imports UMAP and compiles it (a minute or so on a busy machine)
        begin(progress, "fitting the map", note=f"{len(ids)} nodes")
        xy = fit_layout(vectors, config)
        if old_ids:
            xy, moved = align_to(ids, xy, old_ids, old_xy)
        version += 1
        with runtime.db.transaction() as con:
            projection_store.clear_points(con)
            projection_store.save_points(
                con, [StoredPoint("node", i, x, y, version, "umap") for i, (x, y) in zip(ids, xy, strict=True)]
            )
            events_store.emit(
                con,
                "projection.fitted",
                {
                    "version": version,
                    "nodes": len(ids),
                    "config": asdict(config),
                    "seconds": round(time.perf_counter() - started, 2),
                    **({"mean_displacement": moved[0], "mean_displacement_unaligned": moved[1]} if moved else {}),
                },
            )
        fitted = len(ids)
    begin(progress, "placing new points on the map")
    report = place_new(runtime, config)
    report.fitted = fitted
    if moved:
        report.mean_displacement, report.mean_displacement_unaligned = moved
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def place_new(runtime: Runtime, config: ProjectionConfig = ProjectionConfig()) -> ProjectionReport:
    """Place every item that has no point yet, beside what the fit placed; never fits.

    Cheap when nothing is missing (a few counts), so surfaces call it before drawing.
    """
    started = time.perf_counter()
    report = ProjectionReport()
    with runtime.db.transaction() as con:
        report.removed = projection_store.delete_orphans(con)
        report.version = projection_store.current_version(con)
        missing = projection_store.missing_counts(con)
        if not any(missing.values()):
            report.seconds = round(time.perf_counter() - started, 3)
            return report
        _, anchors, anchor_xy = projection_store.fitted_anchors(con)
        if len(anchors) == 0:
            report.needs_fit = True
            return report
        known: dict[tuple[str, str], tuple[float, float]] = {}
        points: list[StoredPoint] = []

        def place(kind: str, ids: list[str], vectors: np.ndarray, exact: dict[str, tuple[str, str]]) -> None:
            """Items whose anchor item has a point take that point; the rest are placed by neighbours."""
            if not ids:
                return
            wanted = {target for target in exact.values() if target not in known}
            for (k, i), p in projection_store.load_points(con, ids=[t[1] for t in wanted]).items():
                known[(k, i)] = (p.x, p.y)
            rest = []
            for row, item in enumerate(ids):
                target = exact.get(item)
                if target in known:
                    x, y = known[target]
                    points.append(StoredPoint(kind, item, x, y, report.version, target[0]))
                    known[(kind, item)] = (x, y)
                else:
                    rest.append(row)
            if rest:
                xy = place_by_neighbours(anchors, anchor_xy, vectors[rest], config.place_k, config.place_temperature)
                for row, (x, y) in zip(rest, xy, strict=True):
                    points.append(StoredPoint(kind, ids[row], x, y, report.version, "neighbours"))
                    known[(kind, ids[row])] = (x, y)
            report.placed[kind] = len(ids)

        ids, vectors = projection_store.unplaced(con, "node")
        place("node", ids, vectors, {})
        ids, vectors = projection_store.unplaced(con, "locus")
        place(
            "locus", ids, vectors, {lid: ("node", nid) for lid, nid in projection_store.locus_nodes(con, ids).items()}
        )
        ids, vectors = projection_store.unplaced(con, "crystal")
        place(
            "crystal",
            ids,
            vectors,
            {cid: ("locus", lid) for cid, lid in projection_store.crystal_loci(con, ids).items()},
        )
        ids, vectors = projection_store.unplaced(con, "resonance")
        place("resonance", ids, vectors, {})
        projection_store.save_points(con, points)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def projection_status(runtime: Runtime, config: ProjectionConfig = ProjectionConfig()) -> ProjectionStatus:
    """How the map stands, from counts alone (no vectors read), so surfaces can offer a fit or a refit."""
    with runtime.db.connect() as con:
        counts = projection_store.point_counts(con)
        return ProjectionStatus(
            version=projection_store.current_version(con),
            fitted_nodes=counts.get(("node", "umap"), 0),
            placed_nodes=sum(n for (kind, by), n in counts.items() if kind == "node" and by != "umap"),
            placed_other=sum(n for (kind, _), n in counts.items() if kind != "node"),
            missing=projection_store.missing_counts(con),
            stale_share=config.stale_share,
        )


def load_points(runtime: Runtime, kind: str | None = None) -> dict[tuple[str, str], StoredPoint]:
    """The stored points by (kind, id), so every drawing puts each item where the map put it."""
    with runtime.db.connect() as con:
        return projection_store.load_points(con, kind)
