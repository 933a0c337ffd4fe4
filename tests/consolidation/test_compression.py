"""Compression: UMAP then HDBSCAN, one pattern a cluster with the cluster's own numbers, the ratio checked, and
small inputs that degrade as documented. A malformed model answer fails its cluster only.
"""

from __future__ import annotations

from explorer.clustering import ClusterConfig
from explorer.consolidation.compression import (
    CompressionConfig,
    cluster,
    compress,
    confidence,
    distinct_names,
    ratio_warning,
    success_rate,
)
from explorer.records.consolidation import Pattern
from explorer.testing.model_server import SERVED_MODEL, Reply

from .conftest import experience, grouped, scored, vectors


def test_the_compression_ratio_is_on_target_on_data_that_allows_it(runtime, embedder) -> None:
    """Ten experiences of each of four strategies give four patterns, 10:1 within ±30%."""
    experiences = grouped(4, 10)
    result = compress(scored(experiences), vectors(embedder, experiences), runtime.gateway)
    assert result.method == "umap+hdbscan"
    ratio = len(experiences) / len(result.patterns)
    assert 7 <= ratio <= 13
    assert ratio_warning(len(experiences), len(result.patterns)) is None
    for pattern, rows in zip(result.patterns, result.members, strict=True):
        assert len({experiences[r].strategy for r in rows}) == 1  # a cluster is one strategy: noise left out
        assert pattern.name.lower() == experiences[rows[0]].strategy
        assert 3 <= len(pattern.example_ids) <= 5 and set(pattern.example_ids) <= set(pattern.member_ids)
        assert pattern.usage_count == len(rows) and pattern.success_rate == 1.0
        assert 0 < pattern.confidence <= 1 and pattern.status == "unverified"
        assert pattern.conditions and pattern.actions == (f"apply {experiences[rows[0]].strategy}",)


def test_a_ratio_off_target_is_a_warning_either_side() -> None:
    assert ratio_warning(47, 4) is None  # 47 experiences in 4 patterns, 11.75:1
    assert "below the target" in ratio_warning(12, 4)
    assert "above the target" in ratio_warning(60, 2)
    assert "no pattern" in ratio_warning(5, 0)


def test_small_inputs_degrade_as_documented(embedder) -> None:
    two = grouped(1, 2)
    assert cluster(vectors(embedder, two)).method == "none"  # under the minimum cluster size: no cluster at all
    ten = grouped(2, 5)
    found = cluster(vectors(embedder, ten))
    assert found.method == "hdbscan" and len(found.groups) == 2  # under UMAP's minimum: the embeddings themselves
    unreduced = CompressionConfig(clustering=ClusterConfig(min_samples=2, reduce_from=None))
    big = cluster(vectors(embedder, grouped(3, 4)), unreduced)
    assert big.method == "hdbscan"


def test_unrelated_experiences_are_noise_not_a_pattern(runtime, embedder) -> None:
    experiences = grouped(2, 5) + [
        experience("the printer on the third floor jammed again"),
        experience("lunch was soup with bread"),
    ]
    result = compress(scored(experiences), vectors(embedder, experiences), runtime.gateway)
    assert len(result.patterns) == 2 and result.noise == 2
    assert all(
        experiences[-1].id not in p.member_ids and experiences[-2].id not in p.member_ids for p in result.patterns
    )


def test_success_rate_and_confidence_come_from_the_cluster() -> None:
    members = scored([experience(outcome=o) for o in ("success", "success", "progress", "failure")])
    assert success_rate(members) == 0.625
    assert success_rate(scored([experience(outcome="failure")] * 3)) is None  # error recovery: "N/A"
    assert confidence([1.0, 1.0, 1.0]) == 0.6 and confidence([1.0] * 10) == 0.8333


def test_a_malformed_answer_fails_its_cluster_only(make_runtime, model_server, embedder) -> None:
    def script(request):
        if request.kind == "consolidation_pattern" and "backtracking" in str(request.fields):
            return Reply(content='{"name": "Backtrack", "conditions": "not a list of actions"')
        return None

    server = model_server(script=script)
    runtime = make_runtime(local_model=SERVED_MODEL, api_base=server.url, retries=0)
    experiences = grouped(4, 4)
    result = compress(scored(experiences), vectors(embedder, experiences), runtime.gateway)
    assert result.clusters == 4 and len(result.patterns) == 3 and result.failures == 1
    assert "backtracking" not in {p.name.lower() for p in result.patterns}
    assert "refused" in result.errors[0] and result.usage.calls == 4


def test_patterns_of_one_name_are_told_apart_by_their_conditions() -> None:
    def named(name: str, condition: str) -> Pattern:
        return Pattern(name, "strategy", "d", (condition,), ("a",), (), (), 1.0, 3, 0.5)

    found = distinct_names(
        [
            named("Backtrack", "a cell has no candidate"),
            named("backtrack", "a box lacks a digit"),
            named("Naked single", "one candidate"),
        ]
    )
    assert [p.name for p in found] == [
        "Backtrack (a cell has no candidate)",
        "backtrack (a box lacks a digit)",
        "Naked single",
    ]


def test_clusters_are_asked_at_once_and_kept_in_their_order(make_runtime, model_server, runtime, embedder) -> None:
    server = model_server(latency_s=0.3)
    concurrent = make_runtime(local_model=SERVED_MODEL, api_base=server.url, concurrency=4)
    experiences = grouped(4, 4)
    at_once = compress(scored(experiences), vectors(embedder, experiences), concurrent.gateway)
    one_by_one = compress(scored(experiences), vectors(embedder, experiences), runtime.gateway)
    assert server.peak_in_flight >= 2
    assert [p.name for p in at_once.patterns] == [p.name for p in one_by_one.patterns]
