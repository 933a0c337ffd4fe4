"""A run that asked a model and had nothing come of it ends with status 1, so a script does not take it for work
done: ``dream rem|explore|fuse|cycle``, ``wander run`` and ``consolidate run`` each say here, in their report's own
numbers, what they asked the model for and what came of it.

A run that asked the model nothing had nothing to do (too few memories, nothing fading, too few experiences to
cluster), and a budget that ran out is the person's own limit: both are said in the summary and end with status 0,
as does a run of which anything came, whatever else failed (its failures are warnings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import typer


@dataclass(frozen=True)
class Asked:
    """What a run (or one mechanism of a night) asked a model for, and what came of it.

    ``came`` counts the items the model's answers made something of, kept or refused on their merits (a dream
    stored or dropped as adding nothing, a seed's candidates judged, a cluster fused or its summary refused as too
    long, a step that dwelt, a pattern made); ``failed`` those that failed, of the ``asked_for`` the run set out to do.
    """

    item: str  # one of what the run sets out to do, as the error line names it: "dream", "seed", "cluster", "step"
    asked_for: int
    failed: int
    came: int
    asked_model: bool  # False: the run had nothing to put to the model, so its failures are nothing to do
    budget_exhausted: bool = False
    errors: Sequence[str] = ()


def asked_in(item: str, asked_for: int, came: int, report: Mapping[str, Any]) -> Asked:
    """What a report says was asked, in the keys the dreaming reports' and consolidation's JSON share: ``failures``,
    ``model_calls``, ``budget_exhausted`` and ``errors``; ``asked_for`` and ``came`` are the run's own numbers.
    """
    return Asked(
        item,
        asked_for,
        failed=report["failures"],
        came=came,
        asked_model=report["model_calls"] > 0,
        budget_exhausted=report["budget_exhausted"],
        errors=report["errors"],
    )


def exit_if_nothing_came(*parts: Asked) -> None:
    """End with status 1 and one line on stderr naming the first failure when the run (all of ``parts``, a
    night's mechanisms together) asked the model, something failed and nothing came; else return.

    Example::

        exit_if_nothing_came(Asked("dream", 2, failed=2, came=0, asked_model=True, errors=["dream 1: ..."]))
        # error: the run did none of what was asked: 2 of 2 dreams failed: dream 1: ...
    """
    if any(p.came or p.budget_exhausted for p in parts):
        return
    if not any(p.asked_model for p in parts) or not any(p.failed for p in parts):
        return
    failed = ", ".join(f"{p.failed} of {p.asked_for} {p.item}s" for p in parts if p.asked_for)
    first = next((e for p in parts for e in p.errors), "no error was reported")
    typer.echo(f"error: the run did none of what was asked: {failed} failed: {first}", err=True)
    raise typer.Exit(1)
