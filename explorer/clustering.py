"""Density clusters of embedded items: HDBSCAN, on a UMAP reduction when there are enough of them.

Why density clusters: a theme of a walk or a pattern of experiences is a dense region of meaning. HDBSCAN finds
as many of them as the data holds and leaves out what belongs to none (noise), where a greedy pass over a
similarity threshold puts every item somewhere and lets a chain of near items join unrelated ones.

Why a reduction first: HDBSCAN on raw 384-dimensional vectors takes about 99 s for 10k points, on a 5-dimensional
UMAP reduction 0.8 s. UMAP needs more points than its neighbourhood and its dimensions, and costs
seconds to import, so a caller with few items (a walk's themes) clusters the unit vectors themselves: Euclidean
distance between unit vectors orders pairs as cosine does.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from explorer.umap_loader import import_umap


@dataclass(frozen=True)
class ClusterConfig:
    """How dense a cluster must be, and when the vectors are reduced first."""

    min_cluster_size: int = 3
    min_samples: int | None = None  # HDBSCAN's density from this neighbour; None: the cluster size (its default)
    components: int = 5  # UMAP's reduction
    neighbours: int = 15  # UMAP's neighbourhood (fewer when there are fewer points)
    reduce_from: int | None = 12  # from this many points on, cluster a UMAP reduction; None: never
    epochs: int | None = None  # UMAP's optimisation epochs; None: its own (500 up to 10,000 points, 200 above)
    init: str = "spectral"  # UMAP's starting layout: "spectral" (its own) or "pca"
    seed: int = 0  # UMAP's random state: the same vectors give the same clusters


DEFAULT_CLUSTERS = ClusterConfig()


@dataclass(frozen=True)
class Clusters:
    """HDBSCAN's labels (-1: noise) and membership strengths, and how they were found."""

    labels: np.ndarray
    strengths: np.ndarray
    method: str  # "umap+hdbscan", "hdbscan" (no reduction) or "none" (too few to cluster)

    @property
    def groups(self) -> list[list[int]]:
        """The rows of each cluster, clusters in label order."""
        return [[int(i) for i in np.flatnonzero(self.labels == label)] for label in sorted(set(self.labels) - {-1})]

    @property
    def noise(self) -> int:
        """How many rows joined no cluster."""
        return int((self.labels == -1).sum())


def density_clusters(vectors: np.ndarray, config: ClusterConfig = DEFAULT_CLUSTERS) -> Clusters:
    """Density clusters of the rows of ``vectors`` (unit embeddings); fewer rows than a cluster needs: none."""
    count = len(vectors)
    if count < max(2, config.min_cluster_size):
        return Clusters(np.full(count, -1), np.zeros(count), "none")
    import hdbscan  # imported here: a second at import, and only clustering needs it

    points, method = np.asarray(vectors, dtype=np.float64), "hdbscan"
    if config.reduce_from is not None and count >= config.reduce_from:
        reducer = import_umap().UMAP(
            n_components=config.components,
            n_neighbors=min(config.neighbours, count - 1),
            min_dist=0.0,
            metric="cosine",
            random_state=config.seed,
            n_epochs=config.epochs,
            init=config.init,
            n_jobs=1,  # a random state makes UMAP run on one thread anyway; saying so spares its warning
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # duplicate points, a spectral layout it cannot find: it falls back
            points, method = reducer.fit_transform(points), "umap+hdbscan"
    model = hdbscan.HDBSCAN(
        min_cluster_size=config.min_cluster_size, min_samples=config.min_samples or config.min_cluster_size
    )
    labels = model.fit_predict(points)
    return Clusters(np.asarray(labels), np.asarray(model.probabilities_), method)
