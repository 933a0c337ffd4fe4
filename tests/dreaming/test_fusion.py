"""Memory fusion: clusters, the fusion prompt and its rules, and the store after a fusion."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from explorer.dreaming.fusion import FusedMemory, FusionConfig, Rejection, find_clusters, fusable, fuse, fuse_cluster
from explorer.dreaming.graph import relations_lookup
from explorer.dreaming.service import run_fusion
from explorer.prompts.dreaming import FUSION, parse_fusion
from explorer.store import corpus

from .conftest import days_ago, link, memory, store

DUBLIN = [
    "The user lives in Dublin.",
    "The user's flat in Dublin is near the Liffey.",
    "The user moved to Dublin in 2019 for work.",
]


def dormant(text: str = "m", **fields):
    fields.setdefault("prominence", 0.3)
    fields.setdefault("category", "fact")
    return memory(text, **fields)


def chain(nodes, kind="EXTENDS"):
    return [link(a, b, kind) for a, b in pairwise(nodes)]


def clusters_of(nodes, relations, **config):
    return [{n.id for n in c} for c in find_clusters(nodes, relations_lookup(relations), FusionConfig(**config))]


# -- clusters ------------------------------------------------------------------------


def test_three_related_dormant_memories_make_one_cluster() -> None:
    nodes = [dormant(t) for t in DUBLIN]
    assert clusters_of(nodes, chain(nodes)) == [{n.id for n in nodes}]


def test_two_are_too_few_and_singletons_never_count() -> None:
    pair = [dormant(), dormant()]
    assert clusters_of(pair, chain(pair)) == []
    assert clusters_of([dormant() for _ in range(5)], []) == []


@pytest.mark.parametrize("shape", ["star", "triangle", "chain via any relation type"])
def test_any_connected_topology_is_one_cluster(shape) -> None:
    nodes = [dormant() for _ in range(4)]
    relations = {
        "star": [link(nodes[0], n) for n in nodes[1:]],
        "triangle": [
            link(nodes[0], nodes[1]),
            link(nodes[1], nodes[2]),
            link(nodes[2], nodes[0]),
            link(nodes[3], nodes[1]),
        ],
        "chain via any relation type": [
            link(nodes[0], nodes[1], "UPDATES"),
            link(nodes[2], nodes[1], "DERIVES"),
            link(nodes[2], nodes[3]),
        ],
    }[shape]
    assert clusters_of(nodes, relations) == [{n.id for n in nodes}]


def test_components_are_separate_and_largest_come_first() -> None:
    small, big = [dormant() for _ in range(3)], [dormant() for _ in range(5)]
    assert clusters_of(small + big, chain(small) + chain(big)) == [{n.id for n in big}, {n.id for n in small}]


def test_a_mixed_component_is_split_by_category() -> None:
    facts = [dormant(category="fact") for _ in range(3)]
    events = [dormant(category="event") for _ in range(3)]
    lone = dormant(category="preference")
    relations = chain([facts[0], events[0], facts[1], events[1], facts[2], events[2], lone])
    assert sorted(map(sorted, clusters_of(facts + events + [lone], relations))) == sorted(
        [sorted(n.id for n in facts), sorted(n.id for n in events)]
    )


def test_category_is_the_domain_when_a_reading_node_has_none() -> None:
    python = [memory("p", domain="python", prominence=0.3) for _ in range(3)]
    art = [memory("a", domain="art", prominence=0.3) for _ in range(2)]
    assert clusters_of(python + art, chain(python + art)) == [{n.id for n in python}]


def test_prominence_window_is_dormant_to_active_exclusive() -> None:
    edges = [dormant(prominence=0.1), dormant(prominence=0.49)]
    middle = dormant(prominence=0.3)
    active, archived = dormant(prominence=0.5), dormant(prominence=0.09)
    nodes = [edges[0], middle, edges[1], active, archived]
    assert fusable(nodes) == [edges[0], middle, edges[1]]
    # the active memory does not bridge: without it, the two halves are too small
    left, right = [dormant(), dormant()], [dormant(), dormant()]
    assert clusters_of(left + [active] + right, chain(left + [active] + right)) == []


@pytest.mark.parametrize(
    "excluded",
    [
        {"memory_type": "derived"},
        {"memory_type": "static_profile"},
        {"is_latest": False},
        {"memory_type": "superseded", "is_latest": False},
    ],
)
def test_derived_static_and_superseded_memories_are_never_fused(excluded) -> None:
    nodes = [dormant(), dormant(), dormant(**excluded)]
    assert clusters_of(nodes, chain(nodes)) == []


def test_at_most_max_clusters_the_largest() -> None:
    groups = [[dormant(category=f"c{i}") for _ in range(3 + i % 4)] for i in range(10)]
    nodes = [n for g in groups for n in g]
    relations = [r for g in groups for r in chain(g)]
    found = find_clusters(nodes, relations_lookup(relations), FusionConfig())
    assert len(found) == 5 and [len(c) for c in found] == [6, 6, 5, 5, 4]
    assert len(find_clusters(nodes, relations_lookup(relations), FusionConfig(max_clusters=2, min_cluster_size=6))) == 2


# -- fusing one cluster ----------------------------------------------------------------


def cluster():
    return [
        dormant(DUBLIN[0], importance=0.4, confidence=0.9, category="fact"),
        dormant(DUBLIN[1], importance=0.8, confidence=0.6, category="fact"),
        dormant(DUBLIN[2], importance=0.5, confidence=0.95, category="event"),
    ]


def test_fusion_prompt_lists_contents_categories_and_importance(scripted) -> None:
    gateway = scripted(lambda p, f: json.dumps({"summary": "The user moved to Dublin in 2019; flat by the Liffey."}))
    fused = fuse_cluster(cluster(), gateway)
    text = FUSION.render(gateway.calls[0][1])
    for needle in (
        *DUBLIN,
        "(fact, importance 0.40)",
        "(fact, importance 0.80)",
        "(event, importance 0.50)",
        '"summary"',
    ):
        assert needle in text
    assert fused == FusedMemory(
        "The user moved to Dublin in 2019; flat by the Liffey.",
        importance=0.8,
        confidence=0.6,
        category="fact",
        model="scripted",
    )


@pytest.mark.parametrize("answer", ["Dublin, mostly.", '{"summary": ""}', '{"text": "x"}', "[1, 2]"])
def test_an_unusable_answer_is_a_failure(scripted, answer) -> None:
    outcome = fuse_cluster(cluster(), scripted(lambda p, f: answer))
    assert isinstance(outcome, Rejection) and outcome.failure


def test_a_model_error_and_an_empty_cluster_are_failures(scripted) -> None:
    def boom(p, f):
        raise TimeoutError("slow")

    assert fuse_cluster(cluster(), scripted(boom)).failure
    gateway = scripted(lambda p, f: "{}")
    assert fuse_cluster([], gateway).failure and gateway.calls == []


def test_a_summary_not_shorter_than_its_sources_is_refused(scripted) -> None:
    sources = cluster()
    too_long = "x" * sum(len(m.text) for m in sources)
    outcome = fuse_cluster(sources, scripted(lambda p, f: json.dumps({"summary": too_long})))
    assert isinstance(outcome, Rejection) and not outcome.failure and "not shorter" in outcome.reason
    assert isinstance(fuse_cluster(sources, scripted(lambda p, f: json.dumps({"summary": too_long[1:]}))), FusedMemory)


def test_parse_fusion() -> None:
    assert parse_fusion('```json\n{"summary": " Lives in Dublin. "}\n```') == "Lives in Dublin."
    assert parse_fusion("Lives in Dublin.") is None


def test_one_failing_cluster_does_not_stop_the_others(scripted, embedder) -> None:
    first, second = (
        [dormant(f"a{i}", category="a") for i in range(3)],
        [dormant(f"b{i}", category="b") for i in range(4)],
    )

    def script(p, f):
        if "a0" in f["memories"]:
            raise RuntimeError("down")
        return json.dumps({"summary": "b0-b3"})

    result = fuse(first + second, relations_lookup(chain(first) + chain(second)), scripted(script), embedder)
    assert (result.clusters_found, len(result.nodes), result.failures, result.rejected) == (2, 1, 1, 0)
    assert set(result.superseded) == {n.id for n in second}


# -- the service, on a real store ------------------------------------------------------


def test_run_fusion_supersedes_sources_and_keeps_them(make_runtime) -> None:
    summary = "The user moved to Dublin in 2019 for work and lives near the Liffey."
    runtime = make_runtime(
        local_model="gpt-4o-mini", completion_kwargs={"mock_response": json.dumps({"summary": summary})}
    )
    sources = [
        memory(t, category="fact", importance=imp, confidence=conf, generation=gen, created_at=days_ago(40))
        for t, imp, conf, gen in zip(DUBLIN, (0.4, 0.8, 0.5), (0.9, 0.6, 0.95), (0, 2, 1), strict=True)
    ]
    fresh = memory("The user likes tea.", category="fact")
    store(runtime, sources + [fresh], chain(sources) + [link(sources[2], fresh)])
    report = run_fusion(runtime)
    assert report.to_json() | {"errors": []} == {
        "eligible_memories": 3,
        "clusters_found": 1,
        "clusters_fused": 1,
        "clusters_rejected": 0,
        "memories_superseded": 3,
        "dream_ids": [report.dream_ids[0]],
        "failures": 0,
        "model_calls": 1,
        "spent_cents": pytest.approx(report.spent_cents),
        "budget_exhausted": False,
        "errors": [],
    }
    assert report.spent_cents > 0  # litellm prices gpt-4o-mini
    with runtime.db.connect() as con:
        (fused,) = corpus.list_nodes(con, types=["fused"])
        kept = corpus.get_nodes(con, [s.id for s in sources], with_vectors=False)
        relations = [r for r in corpus.list_relations(con) if r.source_id == fused.id]
        found_by_keyword = corpus.list_nodes(con, search="liffey", latest_only=True)
    assert report.dream_ids == [fused.id]  # the report names what it stored
    assert fused.text == summary and fused.learned_from == "fusion" and fused.memory_type == "derived"
    assert (fused.importance, fused.confidence, fused.category, fused.generation) == (0.8, 0.6, "fact", 3)
    assert fused.parent_ids == [s.id for s in sources] and all(t in fused.source_text for t in DUBLIN)
    assert len(kept) == 3  # never deleted
    assert all((k.memory_type, k.is_latest, k.superseded_by) == ("superseded", False, fused.id) for k in kept)
    assert sorted((r.type, r.target_id) for r in relations) == sorted(("DERIVES", s.id) for s in sources)
    assert [n.id for n in found_by_keyword] == [fused.id]  # "Liffey" was only in a source
    again = run_fusion(runtime)  # the sources are no longer latest; the fused memory is derived
    assert (again.eligible_memories, again.clusters_found, again.model_calls) == (0, 0, 0)


def test_run_fusion_refuses_a_long_summary_and_changes_nothing(make_runtime) -> None:
    runtime = make_runtime(
        local_model="gpt-4o-mini", completion_kwargs={"mock_response": json.dumps({"summary": "x" * 500})}
    )
    sources = [memory(t, category="fact", created_at=days_ago(40)) for t in DUBLIN]
    store(runtime, sources, chain(sources))
    report = run_fusion(runtime)
    assert (report.clusters_found, report.clusters_fused, report.clusters_rejected, report.failures) == (1, 0, 1, 0)
    with runtime.db.connect() as con:
        assert corpus.list_nodes(con, types=["fused"]) == []
        assert all(n.is_latest for n in corpus.list_nodes(con))
