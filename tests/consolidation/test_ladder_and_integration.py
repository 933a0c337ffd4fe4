"""The abstraction ladder (4 levels, traceable to instances) and integration (redundant and low-utility patterns
pruned with no broken reference, alike items connected with a relationship type).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.consolidation.integration import IntegrationConfig, integrate, prune, utility
from explorer.consolidation.ladder import Ladder, LadderConfig, build_ladder
from explorer.consolidation.verification import vertical_consistency
from explorer.records.consolidation import RELATIONSHIPS, LadderItem, Pattern
from explorer.testing.model_server import SERVED_MODEL, Reply

from .conftest import GROUP_WORDS, experience


def patterns_of(embedder, count: int, per_pattern: int = 3, **fields):
    """``count`` patterns, each over its own ``per_pattern`` experiences, and the experiences by id."""
    experiences, patterns = {}, []
    names = list(GROUP_WORDS) + [f"strategy {n}" for n in range(20)]
    for index in range(count):
        words = GROUP_WORDS.get(names[index], [names[index], "extra", "words", "here"])
        members = [
            experience(f"{' '.join(words[k : k + 4])} case {index}", strategy=names[index]) for k in range(per_pattern)
        ]
        experiences |= {e.id: e for e in members}
        text = f"{names[index]}: {' '.join(words)}"
        patterns.append(
            Pattern(
                name=names[index],
                type="technique",
                description=text,
                conditions=(words[0],),
                actions=(f"apply {names[index]}",),
                example_ids=tuple(e.id for e in members),
                member_ids=tuple(e.id for e in members),
                success_rate=fields.get("success_rate", 0.9),
                usage_count=per_pattern,
                confidence=0.7,
                embedding=embedder.embed([text])[0],
            )
        )
    return patterns, experiences


def test_five_patterns_make_a_four_level_ladder_traceable_to_instances(runtime, embedder) -> None:
    """5 patterns, 4 levels, level 0 at least as many as the patterns."""
    patterns, experiences = patterns_of(embedder, 5)
    result = build_ladder(patterns, experiences, runtime.gateway, embedder)
    ladder = result.ladder
    assert ladder.depth == 4 and not result.failures and not result.warnings
    assert len(ladder.levels[0]) >= len(patterns)
    assert [len(level) for level in ladder.levels] == [15, 5, 3, 2]
    for depth in range(1, 4):
        below = {item.id for item in ladder.levels[depth - 1]}
        assert {s for item in ladder.levels[depth] for s in item.subsumes} == below  # each rung covers the one below
    assert set().union(*(ladder.instances_under(top) for top in ladder.levels[3])) == set(experiences)
    assert vertical_consistency(ladder).passed
    assert all(item.name and item.statement and item.embedding is not None for item in ladder.levels[2])


def test_ten_patterns_add_the_meta_cognitive_level_and_the_height_is_configurable(runtime, embedder) -> None:
    patterns, experiences = patterns_of(embedder, 10, per_pattern=1)
    assert build_ladder(patterns, experiences, runtime.gateway, embedder).ladder.depth == 5
    three = LadderConfig(levels=3, max_levels=3)  # no room for the meta-cognitive level
    assert build_ladder(patterns, experiences, runtime.gateway, embedder, three).ladder.depth == 3
    with pytest.raises(ValueError, match="3–5 levels"):
        LadderConfig(levels=6)


def test_failed_abstractions_leave_the_minimal_ladder(make_runtime, model_server, embedder) -> None:
    server = model_server(script=lambda r: Reply(content="I cannot") if r.kind == "consolidation_abstraction" else None)
    runtime = make_runtime(local_model=SERVED_MODEL, api_base=server.url, retries=0)
    patterns, experiences = patterns_of(embedder, 4)
    result = build_ladder(patterns, experiences, runtime.gateway, embedder)
    assert result.ladder.depth == 2 and result.failures == 2
    assert "minimal ladder" in result.warnings[-1]


def test_redundant_patterns_are_pruned_keeping_the_most_useful_and_its_evidence(embedder) -> None:
    patterns, experiences = patterns_of(embedder, 3)
    twin = replace(patterns[0], id="00000000-0000-4000-8000-00000000000a", success_rate=0.5, member_ids=("x",))
    ladder = Ladder(
        [
            [LadderItem(0, "", e.description, id=i) for i, e in experiences.items()] + [LadderItem(0, "", "x", id="x")],
            [LadderItem(1, p.name, p.description, p.member_ids, p.embedding, id=p.id) for p in [*patterns, twin]],
            [LadderItem(2, "all", "all of them", tuple(p.id for p in [*patterns, twin]), id="top")],
        ]
    )
    result = prune(ladder, [*patterns, twin], IntegrationConfig())
    assert result.pruned_redundant == 1 and result.pruned_low_utility == 0
    kept = {p.id: p for p in result.patterns}
    assert twin.id not in kept and "x" in kept[patterns[0].id].member_ids  # the keeper took the twin's evidence
    assert kept[patterns[0].id].usage_count == patterns[0].usage_count + twin.usage_count
    assert twin.id not in result.ladder.levels[2][0].subsumes
    assert vertical_consistency(result.ladder).passed  # no broken reference


def test_patterns_under_the_utility_threshold_go_with_what_only_they_covered(embedder) -> None:
    patterns, experiences = patterns_of(embedder, 3)
    weak = replace(patterns[2], success_rate=0.0, confidence=0.0, usage_count=1)
    assert utility(weak) < 0.2 <= utility(patterns[0])
    assert utility(replace(weak, success_rate=None)) >= 0.25  # error recovery is not pruned for being one
    ladder = Ladder(
        [
            [LadderItem(0, "", e.description, id=i) for i, e in experiences.items()],
            [LadderItem(1, p.name, p.description, p.member_ids, p.embedding, id=p.id) for p in [*patterns[:2], weak]],
            [LadderItem(2, "weak only", "above the weak one", (weak.id,), id="w")],
        ]
    )
    result = prune(ladder, [*patterns[:2], weak], IntegrationConfig())
    assert result.pruned_low_utility == 1 and weak.id not in {p.id for p in result.patterns}
    assert not set(weak.member_ids) & {i.id for i in result.ladder.levels[0]}
    assert result.ladder.depth == 2  # the abstraction over the weak pattern alone went with it


def test_alike_items_are_connected_with_a_relationship(runtime, embedder) -> None:
    patterns, experiences = patterns_of(embedder, 2)
    near = replace(
        patterns[0],
        id="00000000-0000-4000-8000-00000000000b",
        description=patterns[0].description + " twice",
        embedding=embedder.embed([patterns[0].description + " in a narrower case with more words"])[0],
    )
    ladder = Ladder(
        [
            [LadderItem(0, "", e.description, id=i) for i, e in experiences.items()],
            [LadderItem(1, p.name, p.description, p.member_ids, p.embedding, id=p.id) for p in [*patterns, near]],
        ]
    )
    similarity = float(near.embedding @ patterns[0].embedding)
    assert 0.6 <= similarity < 0.8
    result = integrate(ladder, [*patterns, near], runtime.gateway)
    (connection,) = result.connections
    assert {connection.from_id, connection.to_id} == {patterns[0].id, near.id}
    assert connection.relationship in RELATIONSHIPS and connection.strength == pytest.approx(similarity, abs=1e-4)
    assert set(connection.evidence) == set(patterns[0].member_ids)  # the instances both cover
