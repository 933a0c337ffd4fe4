"""One prompt asked for many independent items at once, each item's answer or failure kept apart.

Every phase that asks a model (a pattern per cluster, an abstraction per group, a relationship per pair, a
verdict per pair) asks this way: concurrently through :meth:`Gateway.map`, answers in the items' order, and a
failed answer failing only its own item, said under the item's label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from explorer.prompts import Prompt
from explorer.providers.budget import Budget
from explorer.providers.gateway import Gateway, Usage
from explorer.records import Progress

T = TypeVar("T")


@dataclass(kw_only=True)
class Tally:
    """What a phase's model calls came to: the items that failed and why, and the calls themselves."""

    failures: int = 0
    errors: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def count(self, other: Tally) -> None:
        """Add another tally (a phase's into the run's, a rung's into the ladder's)."""
        self.failures += other.failures
        self.errors += other.errors
        self.usage.merge(other.usage)


@dataclass
class Asked(Tally, Generic[T]):
    """Each item's value (``None`` where it failed), with the tally of the calls."""

    values: list[T | None] = field(default_factory=list)


def ask_each(
    gateway: Gateway,
    prompt: Prompt[T],
    fields: Sequence[dict[str, Any]],
    labels: Sequence[str],
    budget: Budget | None = None,
    progress: Progress | None = None,
) -> Asked[T]:
    """``prompt`` asked with each item's ``fields`` (concurrently, under the concurrency setting), its failures
    said under each item's label.
    """
    requests = [(prompt, item) for item in fields]
    answers = gateway.ask_each(requests, budget=budget, progress=progress)  # logged under each prompt's kind
    asked: Asked[T] = Asked()
    for label, answer in zip(labels, answers, strict=True):
        asked.usage.add(answer)
        asked.values.append(answer.value if answer.ok else None)
        if not answer.ok:
            asked.failures += 1
            asked.errors.append(f"{label}: {answer.error or 'no usable answer'}")
    return asked
