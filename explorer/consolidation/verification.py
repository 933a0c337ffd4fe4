"""Verification (docs/consolidation.md#verification): five checks of the consolidated knowledge, a score, a status.

- vertical consistency (an error when broken): every item above the instances subsumes at least one item, all
  of them on the rung just below; every item below a rung is subsumed by one on it; no rung wider than the one
  below it.
- horizontal coherence (a warning): items of one rung are of a like degree of abstraction, measured by how
  many instances each covers: within a factor ``spread`` of the rung's median.
- groundedness (an error): every item traces down to at least one instance.
- non-contradiction (a warning): patterns whose conditions are alike (``condition_similarity``) are asked
  whether they call for conflicting actions; a contradiction is flagged and both patterns kept.
- utility threshold (a warning): every pattern reaches the minimum utility.

The score is the mean of the five checks' scores (each the share of what passed). The status is ``failed``
when an error-level check fails (or, in strict mode, any check), ``verified`` when all pass and the score
reaches ``min_score`` (0.8), ``warnings`` otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from statistics import median

from explorer.consolidation.asking import Tally, ask_each
from explorer.consolidation.integration import DEFAULT_INTEGRATION, utility
from explorer.consolidation.ladder import Ladder
from explorer.prompts.consolidation import CONTRADICTION
from explorer.providers.budget import Budget
from explorer.providers.embeddings import Embedder
from explorer.providers.gateway import Gateway
from explorer.records.consolidation import Check, Pattern, Verification, VerificationStatus
from explorer.wording import counted


@dataclass(frozen=True)
class VerificationConfig:
    """Verification's defaults, and how alike conditions must be to be checked for a conflict."""

    min_score: float = 0.8
    strict_mode: bool = False  # a warning fails the verification too
    spread: float = 4.0  # how far an item's coverage may be from its rung's median, as a factor
    condition_similarity: float = 0.8
    min_utility: float = DEFAULT_INTEGRATION.min_utility


DEFAULT_VERIFICATION = VerificationConfig()


@dataclass
class VerificationResult(Tally):
    """The verification, and the model calls the contradiction check took."""

    verification: Verification
    contradictions: list[tuple[str, str]] = field(default_factory=list)  # pattern id pairs


def _share(good: int, total: int) -> float:
    return round(good / total, 4) if total else 1.0


def vertical_consistency(ladder: Ladder) -> Check:
    """Each rung subsumes exactly the rung below it, and is no wider."""
    problems: list[str] = []
    checked = good = 0
    for depth in range(1, ladder.depth):
        lower = {item.id for item in ladder.levels[depth - 1]}
        covered: set[str] = set()
        for item in ladder.levels[depth]:
            checked += 1
            strays = [s for s in item.subsumes if s not in lower]
            if not item.subsumes or strays:
                problems.append(f"level {depth} item {item.name!r} does not subsume level {depth - 1}")
            else:
                good += 1
            covered |= set(item.subsumes) & lower
        orphans = lower - covered
        checked += len(lower)
        good += len(lower) - len(orphans)
        if orphans:
            problems.append(
                f"{counted(len(orphans), 'item')} of level {depth - 1} {'is' if len(orphans) == 1 else 'are'} "
                f"under no item of level {depth}"
            )
        if len(ladder.levels[depth]) > len(ladder.levels[depth - 1]):
            problems.append(f"level {depth} is wider than level {depth - 1}")
    message = problems[0] if problems else "every rung subsumes the one below it"
    return Check("vertical_consistency", not problems, _share(good, checked), message, "error", tuple(problems))


def horizontal_coherence(ladder: Ladder, spread: float = DEFAULT_VERIFICATION.spread) -> Check:
    """Items of a rung cover a like number of instances (within ``spread`` of the rung's median)."""
    problems: list[str] = []
    checked = good = 0
    for depth in range(1, ladder.depth):
        spans = {item.name: len(ladder.instances_under(item)) for item in ladder.levels[depth]}
        middle = median(spans.values()) if spans else 0
        for name, span in spans.items():
            checked += 1
            if middle and not middle / spread <= span <= middle * spread:
                problems.append(f"level {depth} item {name!r} covers {span} instances, the rung's median {middle:g}")
            else:
                good += 1
    message = problems[0] if problems else "items of each rung are of a like degree of abstraction"
    return Check("horizontal_coherence", not problems, _share(good, checked), message, "warning", tuple(problems))


def groundedness(ladder: Ladder) -> Check:
    """Every item above the instances traces down to at least one instance."""
    items = [item for level in ladder.levels[1:] for item in level]
    loose = [f"level {i.level} item {i.name!r} reaches no instance" for i in items if not ladder.instances_under(i)]
    message = loose[0] if loose else "every abstraction traces down to instances"
    return Check("groundedness", not loose, _share(len(items) - len(loose), len(items)), message, "error", tuple(loose))


def utility_threshold(patterns: Sequence[Pattern], minimum: float = DEFAULT_VERIFICATION.min_utility) -> Check:
    """Every pattern reaches the minimum utility."""
    low = [f"pattern {p.name!r} has utility {utility(p):.2f}" for p in patterns if utility(p) < minimum]
    message = low[0] if low else f"every pattern reaches utility {minimum:g}"
    score = _share(len(patterns) - len(low), len(patterns))
    return Check("utility_threshold", not low, score, message, "warning", tuple(low))


def non_contradiction(
    patterns: Sequence[Pattern],
    embedder: Embedder,
    gateway: Gateway,
    config: VerificationConfig = DEFAULT_VERIFICATION,
    budget: Budget | None = None,
) -> tuple[Check, VerificationResult]:
    """Patterns with alike conditions, asked whether their actions conflict (the pairs asked at once)."""
    found = VerificationResult(Verification("verified", 1.0, ()))
    if len(patterns) < 2:
        return Check("non_contradiction", True, 1.0, "no contradictions found", "warning"), found
    vectors = embedder.embed([" ".join(p.conditions) for p in patterns])
    alike = vectors @ vectors.T
    pairs = [(a, b) for a, b in combinations(range(len(patterns)), 2) if alike[a, b] >= config.condition_similarity]

    asked = ask_each(
        gateway,
        CONTRADICTION,
        [{"first": patterns[a].text, "second": patterns[b].text} for a, b in pairs],
        [f"contradiction check {patterns[a].name!r} – {patterns[b].name!r}" for a, b in pairs],
        budget,
    )
    found.count(asked)
    details = []
    for (a, b), answer in zip(pairs, asked.values, strict=True):
        if answer is not None and answer.contradicts:
            found.contradictions.append((patterns[a].id, patterns[b].id))
            details.append(f"patterns {patterns[a].name!r} and {patterns[b].name!r} contradict: {answer.reason}")
    involved = {i for pair in found.contradictions for i in pair}
    message = f"found {counted(len(details), 'contradiction')}" if details else "no contradictions found"
    score = _share(len(patterns) - len(involved), len(patterns))
    return Check("non_contradiction", not details, score, message, "warning", tuple(details)), found


def verify(
    ladder: Ladder,
    patterns: Sequence[Pattern],
    embedder: Embedder,
    gateway: Gateway,
    config: VerificationConfig = DEFAULT_VERIFICATION,
    budget: Budget | None = None,
) -> VerificationResult:
    """The five checks over the integrated ladder and its patterns."""
    contradiction, result = non_contradiction(patterns, embedder, gateway, config, budget)
    checks = (
        vertical_consistency(ladder),
        horizontal_coherence(ladder, config.spread),
        groundedness(ladder),
        contradiction,
        utility_threshold(patterns, config.min_utility),
    )
    score = round(sum(c.score for c in checks) / len(checks), 4)
    failed = [c for c in checks if not c.passed]
    status: VerificationStatus
    if any(c.severity == "error" for c in failed) or (config.strict_mode and failed):
        status = "failed"
    elif not failed and score >= config.min_score:
        status = "verified"
    else:
        status = "warnings"
    result.verification = Verification(status, score, checks)
    return result
