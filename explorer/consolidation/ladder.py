"""Phase 4, the abstraction ladder: instances → techniques → categories → principles (→ meta-cognitive
principles); docs/consolidation.md#phase-4-the-abstraction-ladder.

Level 0 holds the experiences the patterns grew from, level 1 the patterns. Each higher rung groups the items
below it by meaning (average-linkage clustering on cosine distance, about ``branching`` items a group, so each
rung is narrower than the one below) and asks the model to name and state what each group has in common.
Every item names the items one level down it subsumes, so the ladder traces down to instances.

Four levels by default (0–3); a fifth, meta-cognitive one when there are at least ten patterns
and the configuration allows five. When a rung's abstraction fails for a group, the ladder stops
below that rung (an item covering only part of the rung would break vertical consistency); under three
levels what remains is the minimal ladder, instances and techniques, with a warning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from explorer.consolidation.asking import Tally, ask_each
from explorer.prompts import format_passages
from explorer.prompts.consolidation import ABSTRACTION
from explorer.providers.budget import Budget
from explorer.providers.embeddings import Embedder
from explorer.providers.gateway import Gateway
from explorer.records import Progress
from explorer.records.consolidation import Experience, LadderItem, Pattern

LEVEL_NAMES = (
    "concrete instances",
    "named techniques",
    "strategy categories",
    "general principles",
    "meta-cognitive principles",
)
ITEM_NAMES = ("instance", "technique", "strategy category", "general principle", "meta-cognitive principle")


@dataclass(frozen=True)
class LadderConfig:
    """How tall the ladder is (4, within 3–5) and how much each rung narrows."""

    levels: int = 4
    min_levels: int = 3
    max_levels: int = 5
    meta_min_patterns: int = 10  # a fifth, meta-cognitive level only over this many patterns
    branching: int = 2  # about this many items below each item of a rung

    def __post_init__(self) -> None:
        if not self.min_levels <= self.levels <= self.max_levels <= len(LEVEL_NAMES):
            raise ValueError(f"a ladder has {self.min_levels}–{self.max_levels} levels, not {self.levels}")


DEFAULT_LADDER = LadderConfig()


@dataclass
class Ladder:
    """The rungs, most specific first: ``levels[0]`` instances, ``levels[1]`` patterns, then abstractions."""

    levels: list[list[LadderItem]] = field(default_factory=list)

    @property
    def depth(self) -> int:
        """How many levels the ladder has."""
        return len(self.levels)

    def items(self) -> dict[str, LadderItem]:
        """Every item by id (an experience under two patterns is one instance)."""
        return {item.id: item for level in self.levels for item in level}

    def instances_under(self, item: LadderItem) -> set[str]:
        """The ids of the instances ``item`` traces down to (itself, for an instance)."""
        by_id = self.items()
        frontier, found = [item], set()
        while frontier:
            current = frontier.pop()
            if current.level == 0:
                found.add(current.id)
            frontier += [by_id[i] for i in current.subsumes if i in by_id and by_id[i].level == current.level - 1]
        return found


@dataclass
class LadderResult(Tally):
    """The ladder, and what the abstractions cost or failed."""

    ladder: Ladder
    warnings: list[str] = field(default_factory=list)


def base_ladder(patterns: Sequence[Pattern], experiences: Mapping[str, Experience]) -> Ladder:
    """The two rungs compression gives: the instances the patterns grew from, and the patterns themselves."""
    instances = {
        i: LadderItem(0, experiences[i].strategy or "", experiences[i].description, id=i)
        for p in patterns
        for i in p.member_ids
        if i in experiences
    }
    techniques = [
        LadderItem(1, p.name, p.description, tuple(p.member_ids), embedding=p.embedding, id=p.id) for p in patterns
    ]
    return Ladder([list(instances.values()), techniques])


def target_depth(patterns: int, config: LadderConfig = DEFAULT_LADDER) -> int:
    """The ladder's height: the configured one, plus the meta-cognitive level when patterns are many enough."""
    if config.max_levels > config.levels and patterns >= config.meta_min_patterns:
        return config.levels + 1
    return config.levels


def group(items: Sequence[LadderItem], config: LadderConfig = DEFAULT_LADDER) -> list[list[int]]:
    """The items (with embeddings) in groups of about ``branching`` alike, by average-linkage clustering."""
    count = math.ceil(len(items) / config.branching)
    if len(items) < 2 or count < 2:
        return [list(range(len(items)))]
    from sklearn.cluster import AgglomerativeClustering

    vectors = np.vstack([np.asarray(item.embedding) for item in items])
    labels = AgglomerativeClustering(n_clusters=count, metric="cosine", linkage="average").fit_predict(vectors)
    firsts: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        firsts.setdefault(int(label), []).append(index)
    return list(firsts.values())  # in the order their first item comes


def abstraction_fields(members: Sequence[LadderItem], level: int) -> dict[str, str]:
    """The abstraction prompt's fields: what the items one level down are, what to make of them, and them."""
    return {
        "lower": ITEM_NAMES[level - 1],
        "higher": ITEM_NAMES[level],
        "items": format_passages([m.text for m in members]),
    }


def build_ladder(
    patterns: Sequence[Pattern],
    experiences: Mapping[str, Experience],
    gateway: Gateway,
    embedder: Embedder,
    config: LadderConfig = DEFAULT_LADDER,
    budget: Budget | None = None,
    progress: Progress | None = None,
) -> LadderResult:
    """The ladder over ``patterns`` (with embeddings), one rung at a time, each rung's groups asked at once."""
    result = LadderResult(base_ladder(patterns, experiences))
    levels = result.ladder.levels
    for level in range(2, target_depth(len(patterns), config)):
        below = levels[level - 1]
        groups = group(below, config)
        asked = ask_each(
            gateway,
            ABSTRACTION,
            [abstraction_fields([below[r] for r in rows], level) for rows in groups],
            [f"level {level}, group {n}" for n in range(1, len(groups) + 1)],
            budget,
        )
        result.count(asked)
        made = [
            LadderItem(level, answer.name, answer.statement, tuple(below[r].id for r in rows))
            for rows, answer in zip(groups, asked.values, strict=True)
            if answer is not None
        ]
        if progress:
            progress(level, target_depth(len(patterns), config) - 1, LEVEL_NAMES[level])
        if len(made) < len(groups):
            result.warnings.append(
                f"abstraction failed at level {level} ({LEVEL_NAMES[level]}): the ladder stops there"
            )
            break
        vectors = embedder.embed([item.text for item in made])
        levels.append([replace(item, embedding=vectors[k]) for k, item in enumerate(made)])
    if result.ladder.depth < config.min_levels:
        del levels[2:]
        result.warnings.append("minimal ladder: instances and techniques only")
    return result
