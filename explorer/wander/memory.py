"""Stage 9: compress hot memory into warm memory.

Hot memory is the session's residues not yet compressed. When it holds more
than ``hot_memory_limit``, all but the newest ``hot_memory_keep`` become warm
rows: one ``theme_cluster`` per density cluster of the themes the residues name (HDBSCAN over every
mention, so a theme named again and again is dense, and a theme near none of the others is noise, left out), one
``failed_path`` per run of consecutive dull encounters (the walk is later steered
away from them), and one ``summary`` whose ``through_step`` marks what is compressed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from explorer.clustering import ClusterConfig, density_clusters
from explorer.records.wander import ClusterType, Locus, Residue, WarmMemory
from explorer.text import shorten
from explorer.wander.config import WanderTuning

Embed = Callable[[Sequence[str]], np.ndarray]
# Two mentions make a theme; a walk compresses a few dozen, which HDBSCAN clusters at once without a reduction.
THEME_CLUSTERS = ClusterConfig(min_cluster_size=2, reduce_from=None)


def _unit(matrix: np.ndarray) -> np.ndarray | None:
    if not len(matrix):
        return None
    mean = np.asarray(matrix, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None


def theme_clusters(mentions: np.ndarray) -> list[list[int]]:
    """Density clusters of theme mentions (a row of vectors per mention, so a theme named by several residues
    weighs as often as it is named): the rows of each cluster; noise belongs to none.
    """
    return density_clusters(mentions, THEME_CLUSTERS).groups


def compress(
    hot: Sequence[tuple[int, Residue]],
    loci: dict[str, Locus],
    embed: Embed,
    *,
    session_id: str,
    now: datetime,
    tuning: WanderTuning,
) -> list[WarmMemory]:
    """Warm rows for the oldest hot residues, or nothing while hot memory is within its limit."""
    if len(hot) <= tuning.hot_memory_limit:
        return []
    old = list(hot[: len(hot) - tuning.hot_memory_keep])
    expires = now + timedelta(days=tuning.warm_ttl_days)
    rows: list[WarmMemory] = []

    def warm(kind: ClusterType, content: dict[str, Any], vector: np.ndarray | None) -> None:
        rows.append(
            WarmMemory(
                session_id=session_id,
                cluster_type=kind,
                content=content,
                embedding=vector,
                strength=1.0,
                last_accessed_at=now,
                created_at=now,
                expires_at=expires,
            )
        )

    named = [(r.id, t) for _, r in old for t in dict.fromkeys(x.lower() for x in r.themes)]  # one per mention
    themes = [t for t, _ in Counter(t for _, t in named).most_common()]
    if themes:
        vectors = embed(themes)
        index = {t: i for i, t in enumerate(themes)}
        of_mention = [index[t] for _, t in named]
        for members in theme_clusters(vectors[of_mention]):
            cluster = sorted({of_mention[m] for m in members})  # most named first
            residues = list(dict.fromkeys(named[m][0] for m in members))
            if len(residues) >= 2:
                warm(
                    "theme_cluster",
                    {"themes": [themes[i] for i in cluster], "residue_ids": residues, "count": len(residues)},
                    _unit(vectors[cluster]),
                )

    run: list[tuple[int, Residue]] = []
    for item in [*old, None]:  # None ends the last run
        if item is not None and (item[1].interestingness or 0.0) < tuning.failed_path_interest:
            run.append(item)
            continue
        if run:
            path = [loci[r.to_locus_id] for _, r in run if r.to_locus_id in loci]
            path_vectors = [locus.embedding for locus in path if locus.embedding is not None]
            warm(
                "failed_path",
                {
                    "steps": [s for s, _ in run],
                    "locus_ids": [locus.id for locus in path],
                    "concepts": [shorten(locus.concept, 12) for locus in path],
                    "mean_interestingness": round(float(np.mean([r.interestingness or 0.0 for _, r in run])), 4),
                },
                _unit(np.vstack(path_vectors)) if path_vectors else None,
            )
            run = []

    interests = [r.interestingness for _, r in old if r.interestingness is not None]
    best = max(old, key=lambda item: item[1].interestingness or 0.0)[1]
    theme_vectors = [r.themes_embedding for _, r in old if r.themes_embedding is not None]
    warm(
        "summary",
        {
            "from_step": old[0][0],
            "through_step": old[-1][0],
            "steps": len(old),
            "top_themes": themes[:8],
            "mean_interestingness": round(float(np.mean(interests)), 4) if interests else None,
            "best_possibility": best.possibility,
            "best_residue_id": best.id,
        },
        _unit(np.vstack(theme_vectors)) if theme_vectors else None,
    )
    return rows
