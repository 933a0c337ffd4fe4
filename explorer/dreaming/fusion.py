"""Memory fusion (docs/dreaming.md#memory-fusion): fading, related memories merged into one.

Clusters are connected components of the relation graph among current memories in the prominence window
``[DORMANT, ACTIVE)`` (static-profile and derived memories are left alone: fusing a fusion would compound its
losses), split by category, at least ``min_cluster_size`` strong, largest first. Each cluster is summarised by the
model from as many of its most central memories (most relations within it) as fit ``prompt_words`` (a demo
cluster listed whole made a 48,025-token prompt, which no local model reads); the rest are left as they were, for
a later night, and counted. The summary is kept only if it is shorter than its sources together. The fused memory
takes the highest importance, the lowest confidence and the most common category of its sources; the sources are
then superseded by it, never deleted.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from explorer.dreaming.graph import GetRelations, category_of, other_end
from explorer.dreaming.prominence import ACTIVE, DORMANT
from explorer.prompts import fitting, format_passages
from explorer.prompts.dreaming import FUSION
from explorer.providers.budget import Budget
from explorer.providers.embeddings import Embedder
from explorer.providers.gateway import Gateway, Usage
from explorer.records import Node, Progress, Relation, begin, in_phase

CREATED_BY = "fusion"


@dataclass(frozen=True)
class FusionConfig:
    """Which fading memories may be fused (the prominence window) and how many clusters one night fuses."""

    min_cluster_size: int = 3
    max_clusters: int = 5
    min_prominence: float = DORMANT  # inclusive
    max_prominence: float = ACTIVE  # exclusive
    # The words of memories one fusion prompt holds: about 2,000 tokens, so that with the template and the answer it
    # fits the 4,096-token context a small local model is run with (README, "A real local model").
    prompt_words: int = 1500


DEFAULT_FUSION = FusionConfig()


@dataclass(frozen=True)
class FusedMemory:
    """The model's summary of a cluster with what the fused memory inherits from its sources."""

    summary: str
    importance: float
    confidence: float
    category: str
    model: str


@dataclass(frozen=True)
class Rejection:
    """Why a cluster was not fused, so the night's report can tell a failing model from a refused summary."""

    reason: str
    failure: bool  # True: the model failed; False: its summary was refused (not shorter)


@dataclass
class FusionResult:
    """The fused memories, their relations and what they supersede, for the service to write in one transaction;
    and what was refused or failed.
    """

    eligible: int = 0
    clusters_found: int = 0
    nodes: list[Node] = field(default_factory=list)  # the fused memories
    relations: list[Relation] = field(default_factory=list)
    superseded: dict[str, str] = field(default_factory=dict)  # source id → fused id
    rejected: int = 0
    failures: int = 0
    left_out: int = 0  # memories of the fused clusters their prompts could not hold: left as they were
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)


def fusable(memories: Sequence[Node], config: FusionConfig = DEFAULT_FUSION) -> list[Node]:
    """Current, fading memories that are neither static profile nor derived."""
    return [
        m
        for m in memories
        if m.is_latest
        and m.memory_type not in ("static_profile", "derived", "superseded")
        and config.min_prominence <= m.prominence < config.max_prominence
    ]


def find_clusters(
    memories: Sequence[Node], get_relations: GetRelations, config: FusionConfig = DEFAULT_FUSION
) -> list[list[Node]]:
    """Same-category groups of related fusable memories, largest first, at most ``max_clusters``."""
    eligible = {m.id: m for m in fusable(memories, config)}
    seen: set[str] = set()
    clusters: list[list[Node]] = []
    for start in eligible:
        if start in seen:
            continue
        seen.add(start)
        component, queue = [], deque([start])
        while queue:
            node_id = queue.popleft()
            component.append(eligible[node_id])
            for relation in get_relations(node_id):
                neighbour = other_end(relation, node_id)
                if neighbour in eligible and neighbour not in seen:
                    seen.add(neighbour)
                    queue.append(neighbour)
        by_category: dict[str, list[Node]] = {}
        for node in component:
            by_category.setdefault(category_of(node), []).append(node)
        clusters += [group for group in by_category.values() if len(group) >= config.min_cluster_size]
    clusters.sort(key=len, reverse=True)  # stable: ties keep the order memories came in
    return clusters[: config.max_clusters]


def prompt_share(cluster: Sequence[Node], get_relations: GetRelations, words: int) -> list[Node]:
    """The memories one fusion prompt holds, in the cluster's order: whole, the most central first (related to
    the most of the others; ties in the cluster's order), as many as fit ``words`` together, one that would overrun
    passed over for the next.
    """
    members = {m.id for m in cluster}
    degree = {m.id: sum(other_end(r, m.id) in members for r in get_relations(m.id)) for m in cluster}
    central = sorted(cluster, key=lambda m: -degree[m.id])
    held = {central[i].id for i in fitting([m.text for m in central], words)}
    return [m for m in cluster if m.id in held]


def fusion_fields(cluster: Sequence[Node]) -> dict[str, str]:
    """The fusion prompt's fields: every memory of the cluster, labelled with its category and importance."""
    return {
        "memories": format_passages(
            [m.text for m in cluster], [f"{category_of(m)}, importance {m.importance:.2f}" for m in cluster]
        )
    }


def fuse_cluster(
    cluster: Sequence[Node], gateway: Gateway, usage: Usage | None = None, budget: Budget | None = None
) -> FusedMemory | Rejection:
    """The cluster's fused memory, or why there is none."""
    if not cluster:
        return Rejection("empty cluster", failure=True)
    answer = gateway.ask(FUSION, fusion_fields(cluster), purpose="fusion", budget=budget)
    if usage is not None:
        usage.add(answer)
    summary = answer.value
    if summary is None or not answer.ok:
        return Rejection(f"fusion failed ({answer.error})", failure=True)
    combined = sum(len(m.text) for m in cluster)
    if len(summary) >= combined:
        return Rejection(
            f"summary of {len(summary)} characters is not shorter than its sources ({combined})", failure=False
        )
    categories = Counter(category_of(m) for m in cluster)
    return FusedMemory(
        summary,
        importance=max(m.importance for m in cluster),
        confidence=min(m.confidence for m in cluster),
        category=categories.most_common(1)[0][0],
        model=answer.model,
    )


def fused_node(
    fused: FusedMemory, cluster: Sequence[Node], embedding: np.ndarray, left_out: int = 0
) -> tuple[Node, list[Relation]]:
    """The fused memory as a node, linked to its sources, with their text kept for keyword search; its metadata
    says how many of the cluster's memories its prompt could not hold (``left_out``), when any.
    """
    domains = Counter(m.domain for m in cluster if m.domain)
    years = [m.year for m in cluster if m.year is not None]
    node = Node(
        type="fused",
        text=fused.summary,
        embedding=embedding,
        year=max(years) if years else None,
        domain=domains.most_common(1)[0][0] if domains else None,
        category=fused.category,
        generation=1 + max(m.generation for m in cluster),
        parent_ids=[m.id for m in cluster],
        importance=fused.importance,
        confidence=fused.confidence,
        memory_type="derived",
        learned_from="fusion",
        source_text="\n\n".join(m.text for m in cluster),
        metadata={"model": fused.model, "sources": len(cluster)} | ({"left_out": left_out} if left_out else {}),
    )
    return node, [Relation(node.id, m.id, "DERIVES", created_by=CREATED_BY) for m in cluster]


def fuse(
    memories: Sequence[Node],
    get_relations: GetRelations,
    gateway: Gateway,
    embedder: Embedder,
    config: FusionConfig = DEFAULT_FUSION,
    budget: Budget | None = None,
    progress: Progress | None = None,
) -> FusionResult:
    """Find the clusters and fuse each, up to ``gateway.concurrency`` at once, kept in cluster order; one
    cluster's failure does not stop the others.
    """
    result = FusionResult(eligible=len(fusable(memories, config)))
    begin(progress, "finding clusters")
    clusters = find_clusters(memories, get_relations, config)
    result.clusters_found = len(clusters)

    def merge(cluster: Sequence[Node]) -> tuple[list[Node], FusedMemory | Rejection | Exception, Usage]:
        usage, held = Usage(), prompt_share(cluster, get_relations, config.prompt_words)
        if len(held) < config.min_cluster_size:
            words = f"{config.prompt_words} words"
            return held, Rejection(f"only {len(held)} of its memories fit a prompt of {words}", failure=False), usage
        try:
            return held, fuse_cluster(held, gateway, usage, budget), usage
        except Exception as exc:  # one cluster's trouble must not stop the others
            return held, exc, usage

    for number, (cluster, (held, outcome, usage)) in enumerate(
        zip(clusters, gateway.map(merge, clusters, in_phase(progress, "fusing")), strict=True), 1
    ):
        result.usage.merge(usage)
        try:
            if isinstance(outcome, Exception):
                raise outcome
            if isinstance(outcome, Rejection):
                result.failures += outcome.failure
                result.rejected += not outcome.failure
                result.errors.append(f"cluster {number}: {outcome.reason}")
                continue
            left_out = len(cluster) - len(held)
            node, relations = fused_node(outcome, held, embedder.embed([outcome.summary])[0], left_out)
        except Exception as exc:  # one cluster's trouble must not stop the others
            result.failures += 1
            result.errors.append(f"cluster {number}: {type(exc).__name__}: {exc}")
            continue
        result.nodes.append(node)
        result.relations += relations
        result.superseded.update({m.id: node.id for m in held})
        result.left_out += left_out
    return result
