"""Phase 5, integration and pruning (docs/consolidation.md#phase-5-integration-and-pruning).

On every rung above the instances: items at least 0.8 alike are one (the one of highest utility is kept and
takes over what the other subsumed and whatever subsumed it), patterns under utility 0.2 go (with the
instances only they covered, and abstractions left covering nothing), and the remaining pairs at least 0.6
alike are connected, the model saying how: prerequisite, alternative, refinement or complement.

Pruning comes before connecting (the original design connects first): a connection to an item about to be pruned would
cost a model call and then have to be dropped or moved, and the ladder must keep no broken reference.

Utility: 0.5 × success rate + 0.3 × usage (per 100 uses, at most 1) + 0.2 × confidence; an
error-recovery pattern (no success rate) counts 0.5 for it, so a lesson from failures is not pruned for
being one. An abstraction's utility is the mean of what it subsumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from explorer.consolidation.asking import Tally, ask_each
from explorer.consolidation.ladder import Ladder
from explorer.prompts.consolidation import RELATION
from explorer.providers.budget import Budget
from explorer.providers.gateway import Gateway
from explorer.records import Progress
from explorer.records.consolidation import LadderItem, LadderLink, Pattern

NO_SUCCESS_RATE = 0.5  # an error-recovery pattern's effectiveness in its utility


@dataclass(frozen=True)
class IntegrationConfig:
    """Integration's thresholds."""

    cross_connect: float = 0.6  # similarity from which two items are connected
    redundancy: float = 0.8  # similarity from which two items are one
    min_utility: float = 0.2  # patterns under it are removed


DEFAULT_INTEGRATION = IntegrationConfig()


@dataclass
class IntegrationResult(Tally):
    """The pruned ladder and patterns, the connections found, and what was pruned or failed."""

    ladder: Ladder
    patterns: list[Pattern]
    connections: list[LadderLink] = field(default_factory=list)
    pruned_redundant: int = 0
    pruned_low_utility: int = 0


def utility(pattern: Pattern) -> float:
    """The utility of a pattern, 0–1 (the module's docstring says how)."""
    effectiveness = NO_SUCCESS_RATE if pattern.success_rate is None else pattern.success_rate
    return round(effectiveness * 0.5 + min(pattern.usage_count / 100, 1.0) * 0.3 + pattern.confidence * 0.2, 4)


def item_utility(ladder: Ladder, patterns: Sequence[Pattern]) -> dict[str, float]:
    """Every item's utility above the instances: a pattern's own, an abstraction's the mean of what it subsumes."""
    values = {p.id: utility(p) for p in patterns}
    for level in ladder.levels[2:]:
        for item in level:
            under = [values[i] for i in item.subsumes if i in values]
            values[item.id] = round(float(np.mean(under)), 4) if under else 0.0
    return values


def _similarity(a: LadderItem, b: LadderItem) -> float:
    if a.embedding is None or b.embedding is None:
        return 0.0
    return float(np.dot(a.embedding, b.embedding))


def _merge_redundant(ladder: Ladder, values: dict[str, float], threshold: float) -> dict[str, str]:
    """Items at least ``threshold`` alike, each mapped to the one of highest utility that absorbs it."""
    absorbed: dict[str, str] = {}
    for level in ladder.levels[1:]:
        kept: list[LadderItem] = []
        for item in sorted(level, key=lambda i: -values.get(i.id, 0.0)):  # stable: ties keep the ladder's order
            keeper = next((k for k in kept if _similarity(item, k) >= threshold), None)
            if keeper is None:
                kept.append(item)
            else:
                absorbed[item.id] = keeper.id
    return absorbed


def _rebuild(ladder: Ladder, absorbed: dict[str, str], removed: set[str]) -> Ladder:
    """The ladder with absorbed items folded into their keepers and removed ones gone, from the bottom up: an
    instance no pattern covers any longer and an abstraction left covering nothing go too.
    """
    levels: list[list[LadderItem]] = [list(level) for level in ladder.levels]
    gone = set(removed)
    for depth in range(1, len(levels)):
        merged: dict[str, list[str]] = {}
        for item in levels[depth]:
            target = absorbed.get(item.id, item.id)
            merged.setdefault(target, [])
            merged[target] += [s for s in item.subsumes if s not in gone and absorbed.get(s, s) not in gone]
        rung = []
        for item in levels[depth]:
            if item.id in absorbed or item.id in gone:
                continue
            subsumes = tuple(dict.fromkeys(absorbed.get(s, s) for s in merged[item.id]))
            if not subsumes:
                gone.add(item.id)
                continue
            rung.append(replace(item, subsumes=subsumes))
        levels[depth] = rung
    covered = {s for item in levels[1] for s in item.subsumes} if len(levels) > 1 else set()
    levels[0] = [item for item in levels[0] if item.id in covered]
    while len(levels) > 2 and not levels[-1]:
        levels.pop()
    return Ladder(levels)


def prune(ladder: Ladder, patterns: Sequence[Pattern], config: IntegrationConfig) -> IntegrationResult:
    """The ladder without redundant items and low-utility patterns; a kept pattern takes over the evidence of
    the patterns it absorbed.
    """
    values = item_utility(ladder, patterns)
    absorbed = _merge_redundant(ladder, values, config.redundancy)
    low = {p.id for p in patterns if p.id not in absorbed and values[p.id] < config.min_utility}
    pruned = _rebuild(ladder, absorbed, low)
    members: dict[str, tuple[str, ...]] = {item.id: item.subsumes for item in pruned.levels[1]}
    by_id = {p.id: p for p in patterns}
    kept = []
    for pattern in patterns:
        if pattern.id not in members:
            continue
        gained = [by_id[a] for a, keeper in absorbed.items() if keeper == pattern.id and a in by_id]
        kept.append(
            replace(
                pattern,
                member_ids=members[pattern.id],
                usage_count=pattern.usage_count + sum(g.usage_count for g in gained),
                utility=values[pattern.id],
            )
        )
    return IntegrationResult(pruned, kept, pruned_redundant=len(absorbed), pruned_low_utility=len(low))


def integrate(
    ladder: Ladder,
    patterns: Sequence[Pattern],
    gateway: Gateway,
    config: IntegrationConfig = DEFAULT_INTEGRATION,
    budget: Budget | None = None,
    progress: Progress | None = None,
) -> IntegrationResult:
    """Prune the ladder, then connect the alike pairs of each rung above the instances (the model types each
    connection, the pairs asked at once; a pair whose answer fails is not connected).
    """
    result = prune(ladder, patterns, config)
    pairs = [
        (a, b, similarity)
        for level in result.ladder.levels[1:]
        for a, b in combinations(level, 2)
        if (similarity := _similarity(a, b)) >= config.cross_connect
    ]
    asked = ask_each(
        gateway,
        RELATION,
        [{"first": a.text, "second": b.text} for a, b, _ in pairs],
        [f"connection {a.name!r} – {b.name!r}" for a, b, _ in pairs],
        budget,
        progress,
    )
    result.count(asked)
    for (a, b, similarity), answer in zip(pairs, asked.values, strict=True):
        if answer is not None:
            shared = sorted(result.ladder.instances_under(a) & result.ladder.instances_under(b))
            result.connections.append(
                LadderLink(a.id, b.id, answer.relationship, round(similarity, 4), a.level, tuple(shared), answer.reason)
            )
    return result
