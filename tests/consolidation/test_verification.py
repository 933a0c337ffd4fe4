"""Verification: the five checks fail on what breaks them, and the status follows their severity."""

from __future__ import annotations

from dataclasses import replace

from explorer.consolidation.ladder import Ladder
from explorer.consolidation.pipeline import invalidate_contradicted
from explorer.consolidation.verification import VerificationConfig, horizontal_coherence, verify
from explorer.records.consolidation import LadderItem

from .test_ladder_and_integration import patterns_of


def ladder_over(patterns, experiences) -> Ladder:
    """Instances, the patterns, one category per two patterns and a principle over all."""
    techniques = [LadderItem(1, p.name, p.description, p.member_ids, p.embedding, id=p.id) for p in patterns]
    categories = [
        LadderItem(2, f"category {k}", "techniques alike", tuple(t.id for t in techniques[k : k + 2]), id=f"c{k}")
        for k in range(0, len(techniques), 2)
    ]
    principle = LadderItem(3, "principle", "all of it", tuple(c.id for c in categories), id="p")
    instances = [LadderItem(0, "", e.description, id=i) for i, e in experiences.items()]
    return Ladder([instances, techniques, categories, [principle]])


def test_a_consistent_ladder_is_verified(runtime, embedder) -> None:
    patterns, experiences = patterns_of(embedder, 4)
    result = verify(ladder_over(patterns, experiences), patterns, embedder, runtime.gateway)
    assert result.verification.status == "verified" and result.verification.score >= 0.8
    assert [c.name for c in result.verification.checks] == [
        "vertical_consistency",
        "horizontal_coherence",
        "groundedness",
        "non_contradiction",
        "utility_threshold",
    ]
    assert all(c.passed for c in result.verification.checks)


def test_an_inconsistent_ladder_fails_vertical_consistency(runtime, embedder) -> None:
    """A higher level that does not abstract the lower one fails the verification."""
    patterns, experiences = patterns_of(embedder, 4)
    ladder = ladder_over(patterns, experiences)
    stray = LadderItem(2, "stray", "abstracts nothing below it", ("no-such-item",), id="s")
    ladder.levels[2] = [*ladder.levels[2], stray]
    result = verify(ladder, patterns, embedder, runtime.gateway)
    checks = {c.name: c for c in result.verification.checks}
    assert result.verification.status == "failed"
    assert not checks["vertical_consistency"].passed and "stray" in checks["vertical_consistency"].message
    assert not checks["groundedness"].passed  # it reaches no instance either
    assert result.verification.errors and result.verification.score < 1


def test_an_item_below_no_higher_item_breaks_vertical_consistency(runtime, embedder) -> None:
    patterns, experiences = patterns_of(embedder, 4)
    ladder = ladder_over(patterns, experiences)
    ladder.levels[3] = [replace(ladder.levels[3][0], subsumes=("c0",))]  # c2 is left out
    check = verify(ladder, patterns, embedder, runtime.gateway).verification.checks[0]
    assert not check.passed and "under no item of level 3" in check.message


def test_contradicting_patterns_are_flagged_and_kept(runtime, embedder) -> None:
    patterns, experiences = patterns_of(embedder, 2)
    do = replace(patterns[0], conditions=("a cell has one candidate left",), actions=("place the digit at once",))
    dont = replace(
        patterns[1], conditions=("a cell has one candidate left",), actions=("do not place the digit at once",)
    )
    result = verify(ladder_over([do, dont], experiences), [do, dont], embedder, runtime.gateway)
    checks = {c.name: c for c in result.verification.checks}
    assert not checks["non_contradiction"].passed and result.contradictions == [(do.id, dont.id)]
    assert result.verification.status == "warnings"  # flagged for a person, not a failed run
    strict = verify(
        ladder_over([do, dont], experiences),
        [do, dont],
        embedder,
        runtime.gateway,
        VerificationConfig(strict_mode=True),
    )
    assert strict.verification.status == "failed"
    weaker, stronger = sorted([replace(do, utility=0.3), replace(dont, utility=0.6)], key=lambda p: p.utility)
    kept = invalidate_contradicted([stronger, weaker], result.contradictions)
    assert [(p.id, p.status) for p in kept] == [(stronger.id, stronger.status), (weaker.id, "invalidated")]
    assert invalidate_contradicted([stronger, weaker], []) == [stronger, weaker]


def test_low_utility_and_uneven_rungs_warn(runtime, embedder) -> None:
    patterns, experiences = patterns_of(embedder, 4)
    weak = [replace(patterns[0], success_rate=0.0, confidence=0.0, usage_count=0), *patterns[1:]]
    result = verify(ladder_over(weak, experiences), weak, embedder, runtime.gateway)
    checks = {c.name: c for c in result.verification.checks}
    assert not checks["utility_threshold"].passed and checks["utility_threshold"].score == 0.75
    assert result.verification.status == "warnings"
    wide, small = patterns_of(embedder, 2, per_pattern=1)
    big, big_experiences = patterns_of(embedder, 1, per_pattern=12)
    uneven = ladder_over([*wide, *big], small | big_experiences)
    assert not horizontal_coherence(uneven).passed
