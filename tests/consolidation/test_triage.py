"""Triage really filters: routine, repeated work goes, breakthroughs stay, near-duplicates become one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.consolidation.triage import TriageConfig, importance, novelty, triage

from .conftest import experience, grouped, vectors


def routine(count: int, session: str = "s1") -> list:
    """The same slow progress move again and again: what a session is mostly made of."""
    return [
        experience(
            "scanned row two for candidates and found nothing new",
            outcome="progress",
            session_id=session,
            strategy="scan",
            duration_s=9.0,
        )
        for _ in range(count)
    ]


def test_importance_follows_the_spec_weights(embedder) -> None:
    first = experience("placed a digit in a cell with one candidate", duration_s=2.0)
    failed = experience("guessed a digit and had to undo it", outcome="failure", duration_s=2.0)
    scores = importance([first, failed], vectors(embedder, [first, failed]))
    # success: 0.4 × 1 + 0.3 × novelty 1 + 0.2 × 0 + 0.1 × 0.5 (at the median duration)
    assert scores[0] == pytest.approx(0.75)
    # failure: 0.4 × 0 + 0.3 × novelty + 0.2 × 1 + 0.1 × 0.5
    assert scores[1] == pytest.approx(0.3 * novelty(vectors(embedder, [first, failed]))[1] + 0.25, abs=1e-5)


def test_low_importance_experiences_go(embedder) -> None:
    """50 experiences, 30 of them of low importance (slow progress moves repeating what was
    done before); at most 20 kept, all at least 0.5.
    """
    useful = grouped(4, 5, duration_s=3.0)
    repeats = [
        replace(useful[i % 20], id=f"00000000-0000-4000-8000-{i:012d}", outcome="progress", duration_s=9.0)
        for i in range(30)
    ]
    experiences = useful + repeats
    result = triage(experiences, vectors(embedder, experiences), TriageConfig(min_importance=0.5))
    assert len(result.kept) <= 20
    assert all(s.importance >= 0.5 for s in result.kept)
    assert result.low_importance == 30
    scores = importance(experiences, vectors(embedder, experiences))
    assert min(scores) < 0.3 < max(scores)  # the scale spans the default threshold: it can filter


def test_the_default_threshold_drops_repeated_progress_and_keeps_successes(embedder) -> None:
    experiences = grouped(2, 3, duration_s=3.0) + routine(5)
    result = triage(experiences, vectors(embedder, experiences))
    kept = {s.experience.id for s in result.kept}
    assert all(e.id in kept for e in experiences[:6])
    assert sum(e.id in kept for e in experiences[6:]) <= 1
    assert result.low_importance + result.duplicates >= 4


def test_every_breakthrough_is_kept_even_a_repeated_unimportant_one(embedder) -> None:
    eureka = experience(
        "propagating constraints first solved the easy puzzles",
        kind="insight",
        insight_type="breakthrough",
        impact="low",
        outcome="progress",
        duration_s=60.0,
    )
    again = replace(eureka, id="00000000-0000-4000-8000-000000000001")
    experiences = [*routine(3), eureka, again]
    result = triage(experiences, vectors(embedder, experiences), TriageConfig(min_importance=0.9))
    kept = {s.experience.id for s in result.kept}
    assert {eureka.id, again.id} <= kept


def test_near_duplicates_become_one_representative_that_counts_them(embedder) -> None:
    twins = [experience("cell r3c5 had one candidate so seven was placed", session_id=f"s{i}") for i in range(4)]
    other = experience("the guess at r2c9 led to a contradiction and was undone", outcome="failure")
    experiences = [*twins, other]
    result = triage(experiences, vectors(embedder, experiences))
    assert result.duplicates == 3
    (representative,) = [s for s in result.kept if s.experience in twins]
    assert set(representative.represents) == {t.id for t in twins}


def test_each_session_keeps_at_most_its_cap(embedder) -> None:
    experiences = grouped(3, 4, session_id="long") + grouped(1, 2, seed=5, session_id="short")
    result = triage(experiences, vectors(embedder, experiences), TriageConfig(max_per_session=5))
    sessions = [s.experience.session_id for s in result.kept]
    assert sessions.count("long") == 5 and sessions.count("short") == 2
    assert result.over_cap == 7
    assert [s.row for s in result.kept] == sorted(s.row for s in result.kept)  # in the order they happened


def test_successes_or_errors_can_be_left_out(embedder) -> None:
    experiences = [experience("placed seven in r3c5"), experience("undid the guess at r2c9", outcome="failure")]
    no_errors = triage(experiences, vectors(embedder, experiences), TriageConfig(include_errors=False))
    assert [s.experience.outcome for s in no_errors.kept] == ["success"] and no_errors.excluded == 1
