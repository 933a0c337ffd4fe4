"""Offline answers to the prompts of the night, each derived from its input."""

from __future__ import annotations

from explorer.prompts import format_passages
from explorer.prompts.dreaming import DREAM_RELATION, FUSION, REM_JUDGE, REM_QUESTION, REM_SYNTHESIS

SEED = "The global interpreter lock lets only one thread execute Python bytecode at a time."
RELATED = "Because of the global interpreter lock, CPU-bound Python threads rarely run in parallel."
UNRELATED = "Watercolour painters wet the paper before laying down a wash of pigment."
PASSAGES = [
    "Python 2.5 adds the with statement for managing resources such as files and locks.",
    "Context managers make the with statement work: they define __enter__ and __exit__.",
    "Python 3.5 introduces async with, so asynchronous context managers can manage resources.",
]


def test_judge_scores_follow_similarity_and_quote_both_sides(runtime) -> None:
    answer = runtime.gateway.ask(
        REM_JUDGE,
        {
            "seed": SEED,
            "seed_category": "python",
            "seed_relations": "(none)",
            "candidates": format_passages([UNRELATED, RELATED], ["art", "python"]),
            "candidate_relations": "(none)",
            "min_score": 3.0,
        },
    )
    assert answer.ok and answer.tier == "offline"
    unrelated, related = sorted(answer.value.judgements, key=lambda j: j.candidate)
    assert related.plausibility > unrelated.plausibility and related.usefulness > unrelated.usefulness
    assert unrelated.connection is None and unrelated.average < 3.0
    assert related.connection and related.average >= 3.0 and "interpreter lock" in related.connection
    assert 0 < related.confidence <= 1


def test_question_asks_about_what_the_passages_share(runtime) -> None:
    answer = runtime.gateway.ask(REM_QUESTION, {"passages": format_passages(PASSAGES, ["2006", "2006", "2015"])})
    assert answer.ok and answer.value.endswith("?")
    assert "statement" in answer.value or "context managers" in answer.value or "resources" in answer.value


def test_synthesis_is_short_and_drawn_from_the_passages(runtime) -> None:
    answer = runtime.gateway.ask(
        REM_SYNTHESIS,
        {
            "question": "How did managing resources change?",
            "passages": format_passages(PASSAGES),
            "related": format_passages([SEED]),
        },
    )
    assert answer.ok and len(answer.value.split()) <= 150
    assert any(p[:40] in answer.value for p in PASSAGES)


def test_dream_relation_says_nothing_for_a_repetition(runtime) -> None:
    same = runtime.gateway.ask(DREAM_RELATION, {"synthesis": PASSAGES[0], "related": format_passages(PASSAGES)})
    assert same.ok and same.value == ""
    new = runtime.gateway.ask(
        DREAM_RELATION, {"synthesis": SEED + " " + PASSAGES[2], "related": format_passages(PASSAGES)}
    )
    assert new.ok and new.value and "NOTHING" not in new.value


def test_fusion_is_an_extract_shorter_than_its_sources(runtime) -> None:
    fields = {"memories": format_passages(PASSAGES, ["python, importance 0.50"] * 3)}
    answer = runtime.gateway.ask(FUSION, fields)
    assert answer.ok and len(answer.value) < sum(map(len, PASSAGES))
    assert any(p.split(":")[0][:30] in answer.value for p in PASSAGES)
    assert runtime.gateway.ask(FUSION, fields).value == answer.value  # deterministic


def evidence(number: int, affinity: float, percentile: float, meaning: float, terms: str) -> str:
    return (
        f"[{number}] affinity {affinity:.2f} (stronger than {percentile:.1f}% of pairs here); "
        f"meaning {meaning:.2f}; shared distinctive terms: {terms}"
    )


def test_judge_decides_on_the_measured_evidence_and_gives_every_verdict_a_reason(runtime) -> None:
    fields = {
        "seed": SEED,
        "seed_category": "python",
        "seed_relations": "(none)",
        # the unrelated text comes with strong evidence and the related one with weak: evidence decides
        "candidates": format_passages([UNRELATED, RELATED], ["art", "python"]),
        "candidate_relations": "(none)",
        "candidate_evidence": "\n".join(
            [
                evidence(1, 0.82, 99.8, 0.45, "interpreter, lock, threads"),
                evidence(2, 0.52, 96.0, 0.48, "none"),
            ]
        ),
        "min_score": 3.0,
    }
    answer = runtime.gateway.ask(REM_JUDGE, fields)
    strong, weak = sorted(answer.value.judgements, key=lambda j: j.candidate)
    assert strong.average >= 3.0 and strong.connection and strong.reason.startswith("Kept: stronger than 99.8%")
    assert "interpreter" in strong.reason and "interpreter" in strong.connection
    assert weak.average < 3.0 and weak.connection is None
    assert weak.reason == "Not kept: only stronger than 96.0% of pairs here, with no term in common."
