"""REM exploration: seeds, candidates, the judge, isolation, and the stored discoveries."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from explorer.dreaming.exploration import (
    ExplorationConfig,
    accepted,
    directly_related,
    explore,
    in_window,
    judge_fields,
    sample_seeds,
)
from explorer.dreaming.graph import relations_lookup
from explorer.dreaming.service import recent_discoveries, recent_verdicts, run_exploration
from explorer.prompts.dreaming import REM_JUDGE, parse_judge
from explorer.reading.ingest import ingest_paths
from explorer.store import corpus

from .conftest import days_ago, link, memory, store

NO_NOISE = ExplorationConfig(seed_noise_sigma=0.0, noise_sigma=0.0)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def judge_all(score: float = 4, connection: str = "they share a root", confidence: float | None = 0.8):
    """A judge script that gives every candidate in the prompt the same verdict."""

    def script(prompt, fields):
        count = fields["candidates"].count("\n\n") + 1
        return json.dumps(
            {
                "judgements": [
                    {
                        "candidate": i,
                        "novelty": score,
                        "plausibility": score,
                        "usefulness": score,
                        "connection": connection,
                        "confidence": confidence,
                    }
                    for i in range(1, count + 1)
                ]
            }
        )

    return script


# -- seeds ---------------------------------------------------------------------------


def test_no_memories_no_seeds() -> None:
    assert sample_seeds([], ExplorationConfig(), rng()) == []


def test_one_category_is_capped() -> None:
    memories = [memory(f"m{i}", domain="python", prominence=0.5) for i in range(10)]
    assert len(sample_seeds(memories, ExplorationConfig(), rng())) == 2
    assert len(sample_seeds(memories, ExplorationConfig(max_seeds_per_category=3), rng())) == 3


def test_seeds_are_spread_over_categories() -> None:
    memories = [memory(f"{c}{i}", category=c, prominence=0.5) for c in "abcd" for i in range(5)]
    seeds = sample_seeds(memories, ExplorationConfig(), rng(3))
    categories = [s.category for s in seeds]
    assert len(seeds) == 6 and max(categories.count(c) for c in "abcd") <= 2 and len(set(categories)) >= 3


def test_category_falls_back_to_domain_then_type() -> None:
    memories = [memory("x", domain="art", prominence=0.5) for _ in range(3)] + [
        memory("y", type="synthesis", prominence=0.5) for _ in range(3)
    ]
    seeds = sample_seeds(memories, ExplorationConfig(max_seeds_per_category=1), rng())
    assert sorted((str(s.domain), s.type) for s in seeds) == [("None", "synthesis"), ("art", "raw_chunk")]


def test_without_noise_the_heaviest_come_first() -> None:
    memories = [
        memory(f"m{i}", category=f"c{i}", importance=imp, prominence=prom)
        for i, (imp, prom) in enumerate([(0.2, 0.5), (0.9, 0.7), (0.5, 0.5), (0.9, 0.2)])
    ]
    seeds = sample_seeds(memories, ExplorationConfig(seed_noise_sigma=0.0, max_seeds=3), rng())
    assert [s.text for s in seeds] == ["m1", "m2", "m3"]  # weights 0.63, 0.25, 0.18 (0.1 left out)


def test_noise_lets_lighter_memories_through_but_weight_still_wins() -> None:
    heavy, light = memory("heavy", importance=0.9, prominence=0.6), memory("light", importance=0.6, prominence=0.6)
    config = ExplorationConfig(max_seeds=1)
    picks = [sample_seeds([heavy, light], config, rng(seed))[0].text for seed in range(300)]
    assert 0 < picks.count("light") < picks.count("heavy")


def test_window_keeps_current_memories_between_the_bounds() -> None:
    inside = [memory(prominence=p) for p in (0.05, 0.3, 0.8)]
    outside = [memory(prominence=p) for p in (0.04, 0.81, 1.0)] + [memory(prominence=0.3, is_latest=False)]
    assert in_window(inside + outside) == inside


# -- the judge -----------------------------------------------------------------------


def test_judge_prompt_holds_seed_candidates_and_known_relations() -> None:
    seed = memory("Seed: the GIL serialises bytecode execution.", domain="python")
    near = memory("Neighbour: threads in CPython share one interpreter lock.")
    far_a = memory("Candidate A: asyncio runs coroutines on one thread.", domain="python")
    far_b = memory("Candidate B: multiprocessing sidesteps the lock with processes.", category="concurrency")
    get = relations_lookup([link(seed, near), link(near, far_a, "DERIVES")])
    fields = judge_fields(seed, [far_a, far_b], get, {n.id: n.text for n in (seed, near, far_a, far_b)})
    text = REM_JUDGE.render(fields)
    for needle in (
        seed.text,
        far_a.text,
        far_b.text,
        "(python)",
        "(concurrency)",
        "EXTENDS → Neighbour",
        "← DERIVES Neighbour",
        "novelty (1-5)",
        "plausibility (1-5)",
        "usefulness (1-5)",
        "at least 3.0",
        "NO_CONNECTION",
    ):
        assert needle in text, needle
    assert REM_JUDGE.temperature == 0.3


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            '{"judgements": [{"candidate": 2, "novelty": 4, "plausibility": 3, "usefulness": 5, '
            '"connection": "both cache", "confidence": 0.7}]}',
            [(2, 4.0, 3.0, 5.0, "both cache", 0.7)],
        ),
        (
            '```json\n[{"novelty": 9, "plausibility": "2", "usefulness": 0, "connection": "x"}]\n```',
            [(1, 5.0, 2.0, 1.0, "x", None)],
        ),  # scores clamped to 1-5, position stands in for a missing number
        (
            '{"novelty": 2, "plausibility": 2, "usefulness": 2, "connection": "NO_CONNECTION"}',
            [(1, 2.0, 2.0, 2.0, None, None)],
        ),
    ],
)
def test_judge_answers_parse(text, expected) -> None:
    answer = parse_judge(text)
    assert [
        (j.candidate, j.novelty, j.plausibility, j.usefulness, j.connection, j.confidence) for j in answer.judgements
    ] == expected


def test_bare_no_connection_means_none_connects() -> None:
    answer = parse_judge("NO_CONNECTION.")
    assert answer.no_connection and answer.judgements == ()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "They are clearly connected.",
        "{}",
        '{"judgements": []}',
        '{"judgements": [{"candidate": 1, "novelty": "high", "plausibility": 3, "usefulness": 3}]}',
        '{"judgements": [{"candidate": 1, "novelty": 4}]}',
    ],
)
def test_unusable_judge_answers_do_not_parse(text) -> None:
    assert parse_judge(text) is None


def test_acceptance_needs_a_connection_and_the_minimum_average() -> None:
    seed, a, b, c = memory("s"), memory("a"), memory("b"), memory("c")
    answer = parse_judge(
        json.dumps(
            {
                "judgements": [
                    {"candidate": 1, "novelty": 3, "plausibility": 3, "usefulness": 3, "connection": "just enough"},
                    {"candidate": 2, "novelty": 3, "plausibility": 3, "usefulness": 2.9, "connection": "not quite"},
                    {"candidate": 3, "novelty": 5, "plausibility": 5, "usefulness": 5, "connection": "NO_CONNECTION"},
                    {
                        "candidate": 7,
                        "novelty": 5,
                        "plausibility": 5,
                        "usefulness": 5,
                        "connection": "no such candidate",
                    },
                ]
            }
        )
    )
    found = accepted(answer, seed, [a, b, c], ExplorationConfig())
    assert [(d.neighbor_id, d.connection, d.confidence) for d in found] == [(a.id, "just enough", 0.6)]


# -- exploring -----------------------------------------------------------------------


def small_graph():
    """Seed — near — (far1, far2): the far ones are two hops from the seed."""
    seed = memory("seed", id="seed", category="a", prominence=0.4, importance=0.9)
    near = memory("near", id="near", category="b", prominence=0.9)
    far1, far2 = (
        memory("far one", id="far1", category="b", prominence=0.9),
        memory("far two", id="far2", category="c", prominence=0.9),
    )
    relations = [link(seed, near), link(near, far1), link(near, far2, "UPDATES")]
    return [seed, near, far1, far2], relations


def test_one_judge_call_per_seed_covers_every_candidate(scripted) -> None:
    memories, relations = small_graph()
    gateway = scripted(judge_all())
    result = explore(memories, relations_lookup(relations), gateway, NO_NOISE, rng=rng())
    assert gateway.kinds() == ["rem_judge"]  # only the seed is in the window
    candidates = gateway.calls[0][1]["candidates"]
    assert "far one" in candidates and "far two" in candidates and "near" not in candidates
    assert (result.seeds_explored, result.candidates_judged, result.failures) == (1, 2, 0)
    assert sorted((d.seed_id, d.neighbor_id) for d in result.discoveries) == [("seed", "far1"), ("seed", "far2")]
    relation = result.discoveries[0].relation()
    assert (relation.type, relation.created_by, relation.description, relation.confidence) == (
        "EXTENDS",
        "rem_exploration",
        "they share a root",
        0.8,
    )
    assert relation.scores == {"novelty": 4.0, "plausibility": 4.0, "usefulness": 4.0}


def test_candidates_cap_applies_after_known_links_are_set_aside(scripted) -> None:
    seed = memory("seed", id="seed", prominence=0.4)
    hub = [memory(f"direct {i}", id=f"d{i}", prominence=0.9) for i in range(10)]
    beyond = [memory(f"beyond {i}", id=f"b{i}", prominence=0.9) for i in range(10)]
    relations = [link(seed, h) for h in hub] + [link(h, b) for h, b in zip(hub, beyond, strict=True)]
    gateway = scripted(judge_all(score=1, connection="NO_CONNECTION"))
    result = explore(
        [seed, *hub, *beyond],
        relations_lookup(relations),
        gateway,
        ExplorationConfig(noise_sigma=0.0, max_candidates_per_seed=8, result_threshold=0.0),
        rng=rng(),
    )
    assert result.candidates_judged == 8 and result.discoveries == []
    assert "direct" not in gateway.calls[0][1]["candidates"]


def test_seed_with_only_known_neighbours_makes_no_call(scripted) -> None:
    seed, a, b = memory("seed", prominence=0.4), memory("a", prominence=0.9), memory("b", prominence=0.9)
    gateway = scripted(judge_all())
    result = explore([seed, a, b], relations_lookup([link(seed, a), link(b, seed)]), gateway, NO_NOISE, rng=rng())
    assert gateway.calls == [] and result.seeds_explored == 1 and result.candidates_judged == 0


def test_a_link_recorded_on_either_side_counts_as_known() -> None:
    one_way = {"x": [link("x", "y")], "y": []}
    assert directly_related("y", "x", lambda i: one_way.get(i, []))
    assert not directly_related("x", "z", lambda i: one_way.get(i, []))


def test_superseded_memories_conduct_but_are_not_candidates(scripted) -> None:
    seed = memory("seed", prominence=0.4)
    old = memory("old version", is_latest=False, memory_type="superseded", prominence=0.4)
    beyond, gone = memory("beyond", prominence=0.9), memory("gone", is_latest=False, prominence=0.9)
    gateway = scripted(judge_all())
    result = explore(
        [seed, old, beyond, gone],
        relations_lookup([link(seed, old), link(old, beyond), link(old, gone)]),
        gateway,
        NO_NOISE,
        rng=rng(),
    )
    assert [d.neighbor_id for d in result.discoveries] == [beyond.id]


def two_seed_graph():
    memories, relations = small_graph()
    other = memory("other seed", id="other", category="z", prominence=0.3, importance=0.9)
    relations += [link(other, "far2"), link("far2", "x1")]
    x1 = memory("x one", id="x1", category="z", prominence=0.9)
    return memories + [other, x1], relations


def test_one_failing_seed_does_not_stop_the_others(scripted) -> None:
    memories, relations = two_seed_graph()

    def script(prompt, fields):
        if fields["seed"] == "seed":
            raise RuntimeError("model down")
        return judge_all()(prompt, fields)

    result = explore(memories, relations_lookup(relations), scripted(script), NO_NOISE, rng=rng())
    assert (result.seeds_explored, result.failures) == (2, 1)
    assert {d.seed_id for d in result.discoveries} == {"other"} and result.discoveries
    assert "model down" in result.errors[0]


def test_an_unparseable_judge_answer_is_a_failure(scripted) -> None:
    memories, relations = two_seed_graph()
    result = explore(
        memories, relations_lookup(relations), scripted(lambda p, f: "These look related to me."), NO_NOISE, rng=rng()
    )
    assert (result.failures, result.candidates_judged, result.discoveries) == (2, 0, [])


def test_errors_inside_the_algorithm_are_isolated_per_seed(scripted) -> None:
    memories, relations = two_seed_graph()
    # a third seed on its own island, whose relations cannot be read
    island = memory("island seed", id="island", category="q", prominence=0.3, importance=0.9)
    shore = memory("shore", id="shore", category="q", prominence=0.9)
    relations += [link(island, shore)]

    def get(node_id):
        if node_id == "island":
            raise KeyError("relation store unavailable")
        return relations_lookup(relations)(node_id)

    result = explore(memories + [island, shore], get, scripted(judge_all()), NO_NOISE, rng=rng())
    assert result.failures == 1 and "relation store unavailable" in result.errors[0]
    assert {d.seed_id for d in result.discoveries} == {"seed", "other"}


def test_all_rejected_is_a_valid_empty_outcome(scripted) -> None:
    memories, relations = small_graph()
    result = explore(memories, relations_lookup(relations), scripted(lambda p, f: "NO_CONNECTION"), NO_NOISE, rng=rng())
    assert (result.failures, result.candidates_judged, result.discoveries) == (0, 2, [])


def test_nothing_eligible_nothing_done(scripted) -> None:
    gateway = scripted(judge_all())
    result = explore([memory(prominence=1.0)], relations_lookup([]), gateway, ExplorationConfig(), rng=rng())
    assert (result.eligible, result.seeds_explored, result.candidates_judged, result.failures) == (0, 0, 0, 0)
    assert gateway.calls == []


def test_same_seed_same_exploration(scripted) -> None:
    memories, relations = two_seed_graph()
    config = ExplorationConfig()  # exploration's own noise
    runs = [
        explore(memories, relations_lookup(relations), scripted(judge_all()), config, rng=rng(11)).discoveries
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


# -- the service, on a real store ------------------------------------------------------


def test_run_exploration_stores_discoveries_with_their_description(make_runtime) -> None:
    verdict = {
        "judgements": [
            {
                "candidate": 1,
                "novelty": 4,
                "plausibility": 5,
                "usefulness": 3,
                "connection": "Both are ways around the interpreter lock.",
                "confidence": 0.75,
            }
        ]
    }
    runtime = make_runtime(local_model="gpt-4o-mini", completion_kwargs={"mock_response": json.dumps(verdict)})
    texts = [
        "The GIL lets one thread run Python bytecode at a time.",
        "Threads in CPython share a single interpreter.",
        "multiprocessing starts processes, each with its own interpreter.",
        "asyncio interleaves coroutines on one thread.",
    ]
    nodes = [memory(t, domain="python", created_at=days_ago(45)) for t in texts]
    relations = [
        link(nodes[0], nodes[1], created_by="reading"),
        link(nodes[1], nodes[2], created_by="reading"),
        link(nodes[1], nodes[3], created_by="reading"),
    ]
    store(runtime, nodes, relations)
    report = run_exploration(runtime, seed=5)
    assert report.seed == 5 and report.eligible_memories == 4 and report.seeds_explored == 2  # two per category
    assert report.discoveries >= 1 and report.failures == 0 and report.model_calls >= 1
    with runtime.db.connect() as con:
        found = [r for r in corpus.list_relations(con) if r.created_by == "rem_exploration"]
    assert len(found) == report.discoveries
    before = {frozenset((r.source_id, r.target_id)) for r in relations}
    for relation in found:
        assert relation.type == "EXTENDS" and relation.confidence == 0.75
        assert relation.description == "Both are ways around the interpreter lock."
        assert relation.scores == {"novelty": 4.0, "plausibility": 5.0, "usefulness": 3.0}
        assert frozenset((relation.source_id, relation.target_id)) not in before
    views = recent_discoveries(runtime)
    assert {(v.seed.id, v.neighbor.id) for v in views} == {(r.source_id, r.target_id) for r in found}
    assert all(v.seed.text in texts and v.neighbor.text in texts for v in views)
    with runtime.db.connect() as con:
        touched = corpus.get_nodes(con, [found[0].source_id], with_vectors=False)[0]
    assert touched.access_count == 1  # a discovery is a use of both memories


def test_run_exploration_on_a_fresh_corpus_finds_nothing_to_seed(runtime) -> None:
    store(runtime, [memory("just read", domain="python"), memory("also just read", domain="python")])
    report = run_exploration(runtime, seed=1)
    assert (report.eligible_memories, report.seeds_explored, report.model_calls) == (0, 0, 0)


FOLDOC = Path(__file__).parents[1] / "data" / "foldoc_sample.jsonl"


def test_a_night_on_real_entries_keeps_some_links_and_stores_every_verdict(runtime) -> None:
    ingest_paths(runtime, [FOLDOC])
    report = run_exploration(runtime, seed=3, as_of=datetime.now(UTC) + timedelta(days=45))
    assert report.seeds_explored > 0 and report.failures == 0
    verdicts = recent_verdicts(runtime, limit=500)
    assert len(verdicts) == report.candidates_judged  # kept or refused, every verdict is stored
    kept = [v for v in verdicts if v.verdict.kept]
    assert len(kept) == report.candidates_kept and 0 < len(kept) < len(verdicts)  # the judge discriminates
    assert 0 < report.discoveries <= len(kept)  # a pair two seeds both kept is one link
    for view in verdicts:
        verdict = view.verdict
        assert verdict.reason.startswith("Kept: " if verdict.kept else "Not kept: ")
        assert verdict.evidence and "stronger than" in verdict.evidence
        assert view.seed.document_id != view.candidate.document_id
        assert (view.seed.domain != view.candidate.domain) and (verdict.connection is not None) == verdict.kept


def test_a_pair_is_judged_once_a_night(scripted) -> None:
    """Two seeds that are each other's closest neighbours (two paths join them): the second does not ask again
    about the first, and takes its next neighbours instead.
    """
    a, b = memory("alpha", id="a", prominence=0.4), memory("beta", id="b", prominence=0.4)
    hubs = [memory(f"hub {i}", id=f"h{i}", prominence=0.9) for i in range(3)]
    others = [memory(f"other {i}", id=f"o{i}", prominence=0.9) for i in range(2)]
    relations = [link(hubs[0], a), link(hubs[0], b), link(hubs[1], a), link(hubs[1], b)]
    relations += [link(hubs[0], others[0]), link(hubs[2], b), link(hubs[2], others[1])]
    gateway = scripted(judge_all())
    config = ExplorationConfig(noise_sigma=0.0, seed_noise_sigma=0.0, max_seeds=2, max_candidates_per_seed=2)
    result = explore([a, b, *hubs, *others], relations_lookup(relations), gateway, config, rng=rng())
    pairs = [frozenset((v.seed_id, v.candidate_id)) for v in result.verdicts]
    assert result.seeds_explored == 2 and len(pairs) == 4
    assert len(set(pairs)) == len(pairs)  # no pair twice
