"""Phase 3, compression: clusters of similar experiences, one pattern each (docs/consolidation.md#phase-3-compression).

The embeddings are clustered by :func:`explorer.clustering.density_clusters`: reduced to 5 dimensions with
UMAP, then HDBSCAN (at least 3 experiences a cluster); what HDBSCAN calls noise joins no pattern. UMAP pulls a
lone point into its nearest cluster, so a member whose similarity to the rest of its cluster, in the embeddings
themselves, is under ``min_member_similarity`` is made noise again (and a cluster left too small dissolves).

Small inputs: UMAP needs more points than its neighbourhood and its dimensions, so under 12 experiences HDBSCAN
clusters the unit embeddings themselves (fast at that size, and Euclidean distance between unit vectors orders
pairs as cosine does); under 3 there is no cluster and no pattern, and the pipeline keeps the experiences as
they are.

Each cluster's pattern is named and described by the model (conditions, actions); the numbers are the
cluster's own: its success rate, how often it was used (near-duplicates triage folded into a member count),
a confidence from HDBSCAN's membership strengths shrunk for small clusters, and 3–5 examples, the members
nearest the cluster's centre. The compression ratio (experiences in, patterns out) is checked against 10:1
±30%; outside it is a warning, not a failure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from explorer.clustering import ClusterConfig, Clusters, density_clusters
from explorer.consolidation.asking import Tally, ask_each
from explorer.consolidation.triage import Scored
from explorer.prompts import format_passages
from explorer.prompts.consolidation import PATTERN, PatternAnswer
from explorer.providers.budget import Budget
from explorer.providers.gateway import Gateway
from explorer.records import Progress
from explorer.records.consolidation import Pattern


@dataclass(frozen=True)
class CompressionConfig:
    """Compression's defaults, and how the clustering is done."""

    target_ratio: float = 10.0
    tolerance: float = 0.3  # the ratio may be 30% off its target before a warning
    # At least 3 experiences a cluster; HDBSCAN's density from the 2nd neighbour, since at 3 (its
    # default) a few dozen experiences are all noise; a UMAP reduction from 12 experiences on.
    clustering: ClusterConfig = ClusterConfig(min_cluster_size=3, min_samples=2)
    min_member_similarity: float = 0.2  # a member this far from the rest of its cluster, unreduced, is noise
    min_examples: int = 3
    max_examples: int = 5
    max_shown: int = 12  # members shown to the model, the most central first


DEFAULT_COMPRESSION = CompressionConfig()


@dataclass
class CompressionResult(Tally):
    """The patterns (in cluster order), the rows of each pattern's cluster, and what was left out or failed."""

    patterns: list[Pattern] = field(default_factory=list)
    members: list[list[int]] = field(default_factory=list)  # rows into the triaged list, one list per pattern
    method: str = "none"
    clusters: int = 0
    noise: int = 0


def cluster(vectors: np.ndarray, config: CompressionConfig = DEFAULT_COMPRESSION) -> Clusters:
    """Density clusters of the rows of ``vectors`` (unit embeddings), members unlike the rest of theirs left out."""
    found = density_clusters(vectors, config.clustering)
    return replace(found, labels=outliers_as_noise(found.labels, vectors, config))


def outliers_as_noise(
    labels: np.ndarray, vectors: np.ndarray, config: CompressionConfig = DEFAULT_COMPRESSION
) -> np.ndarray:
    """``labels`` with members unlike the rest of their cluster in the original space made noise (UMAP pulls a lone
    point into the nearest cluster), and clusters left under the minimum size dissolved.
    """
    labels = labels.copy()
    for label in set(labels.tolist()) - {-1}:
        rows = np.flatnonzero(labels == label)
        others = vectors[rows].sum(axis=0) - vectors[rows]  # each member's centre of the rest, not vouching for itself
        others /= np.maximum(np.linalg.norm(others, axis=1, keepdims=True), 1e-9)
        labels[rows[(vectors[rows] * others).sum(axis=1) < config.min_member_similarity]] = -1
        if (labels == label).sum() < config.clustering.min_cluster_size:
            labels[labels == label] = -1
    return labels


def success_rate(members: Sequence[Scored]) -> float | None:
    """Successes, progress counting half, over all members; ``None`` for a cluster of mostly failures (an
    error-recovery pattern, which has none).
    """
    outcomes = Counter(m.experience.outcome for m in members)
    if outcomes["failure"] * 2 > len(members):
        return None
    return round((outcomes["success"] + 0.5 * outcomes["progress"]) / len(members), 4)


def confidence(strengths: Sequence[float]) -> float:
    """HDBSCAN's mean membership strength, shrunk for small clusters (3 members: ×0.6, 10: ×0.83)."""
    n = len(strengths)
    return round(float(np.mean(strengths)) * n / (n + 2), 4) if n else 0.0


def central(rows: Sequence[int], vectors: np.ndarray) -> list[int]:
    """``rows`` from the nearest the centre of their cluster to the farthest."""
    centre = vectors[list(rows)].mean(axis=0)
    return [rows[i] for i in np.argsort(-(vectors[list(rows)] @ centre), kind="stable")]


def pattern_fields(members: Sequence[Scored]) -> dict[str, str]:
    """The pattern prompt's fields: the members as numbered passages (kind, outcome), the strategies they used
    and how they turned out.
    """
    strategies = Counter(m.experience.strategy for m in members if m.experience.strategy)
    outcomes = Counter(m.experience.outcome for m in members)
    return {
        "experiences": format_passages(
            [m.experience.description for m in members],
            [f"{m.experience.kind}, {m.experience.outcome}" for m in members],
        ),
        "strategies": "; ".join(f"{name} ×{n}" for name, n in strategies.most_common()) or "none named",
        "outcomes": ", ".join(f"{outcomes[o]} {o}" for o in ("success", "failure", "progress") if outcomes[o]),
    }


def make_pattern(
    answer: PatternAnswer, members: Sequence[Scored], strengths: Sequence[float], config: CompressionConfig
) -> Pattern:
    """The pattern of one cluster (``members`` the most central first): the model's words, the cluster's numbers."""
    shown = members[: max(config.min_examples, min(config.max_examples, len(members)))]
    return Pattern(
        name=answer.name,
        type=answer.type,
        description=answer.description,
        conditions=answer.conditions,
        actions=answer.actions,
        example_ids=tuple(m.experience.id for m in shown),
        member_ids=tuple(m.experience.id for m in members),
        success_rate=success_rate(members),
        usage_count=sum(len(m.represents) for m in members),
        confidence=confidence(strengths),
    )


def distinct_names(patterns: Sequence[Pattern]) -> list[Pattern]:
    """The patterns, those that share a name told apart by their first condition ("Backtrack (a cell has no
    candidate)"): each cluster's pattern is named on its own, and two clusters of one strategy get its name twice.
    """
    counts = Counter(p.name.lower() for p in patterns)
    return [
        replace(p, name=f"{p.name} ({p.conditions[0]})") if counts[p.name.lower()] > 1 and p.conditions else p
        for p in patterns
    ]


def compress(
    kept: Sequence[Scored],
    vectors: np.ndarray,
    gateway: Gateway,
    config: CompressionConfig = DEFAULT_COMPRESSION,
    budget: Budget | None = None,
    progress: Progress | None = None,
) -> CompressionResult:
    """Patterns from the triaged experiences (``vectors``: their embeddings, row for row), one model call per
    cluster, made concurrently; a cluster whose answer fails has no pattern, the others are unaffected.
    """
    found = cluster(vectors, config)
    groups = [central(rows, vectors) for rows in found.groups]
    result = CompressionResult(method=found.method, clusters=len(groups), noise=found.noise)
    asked = ask_each(
        gateway,
        PATTERN,
        [pattern_fields([kept[r] for r in rows[: config.max_shown]]) for rows in groups],
        [f"cluster {n} ({len(rows)} experiences)" for n, rows in enumerate(groups, 1)],
        budget,
        progress,
    )
    result.count(asked)
    for rows, answer in zip(groups, asked.values, strict=True):
        if answer is not None:
            strengths = [float(found.strengths[r]) for r in rows]
            result.patterns.append(make_pattern(answer, [kept[r] for r in rows], strengths, config))
            result.members.append(sorted(rows))
    result.patterns = distinct_names(result.patterns)
    return result


def ratio_warning(experiences: int, patterns: int, config: CompressionConfig = DEFAULT_COMPRESSION) -> str | None:
    """Why the compression ratio is off its target (10:1 ±30%), or ``None`` when it is on it."""
    low, high = config.target_ratio * (1 - config.tolerance), config.target_ratio * (1 + config.tolerance)
    if not patterns:
        return f"no pattern from {experiences} experiences: nothing was compressed"
    ratio = experiences / patterns
    if low <= ratio <= high:
        return None
    side = "below" if ratio < low else "above"
    return f"compression ratio {ratio:.1f}:1 is {side} the target {config.target_ratio:g}:1 (±{config.tolerance:.0%})"
