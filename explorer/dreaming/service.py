"""Orchestration shared by the CLI and the app: read the store, run a dreaming
algorithm, write its results in one transaction, report counts.

Progress callbacks take ``(done, total, note)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from explorer.records import Node, Relation
from explorer.runtime import Runtime

Progress = Callable[[int, int, str], None]


@dataclass
class ExplorationReport:
    eligible_memories: int = 0
    seeds_explored: int = 0
    candidates_judged: int = 0
    discoveries: int = 0
    failures: int = 0
    model_calls: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class FusionReport:
    eligible_memories: int = 0
    clusters_found: int = 0
    clusters_fused: int = 0
    clusters_rejected: int = 0  # the model's summary was not shorter than its sources
    memories_superseded: int = 0
    failures: int = 0
    model_calls: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class RemReport:
    current_year: int | None = None
    dreams_requested: int = 0
    dreams_stored: int = 0
    dreams_dropped: int = 0  # near-duplicates of known nodes, or judged to add nothing
    failures: int = 0
    model_calls: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class CycleReport:
    exploration: ExplorationReport
    fusion: FusionReport
    rem: RemReport

    @property
    def model_calls(self) -> int:
        return self.exploration.model_calls + self.fusion.model_calls + self.rem.model_calls

    @property
    def failures(self) -> int:
        return self.exploration.failures + self.fusion.failures + self.rem.failures

    def to_json(self) -> dict:
        return {"exploration": self.exploration.to_json(), "fusion": self.fusion.to_json(), "rem": self.rem.to_json(),
                "model_calls": self.model_calls, "failures": self.failures}


@dataclass
class PeriodReport:
    period: str  # "2008" or "2008-03"
    documents_added: int = 0
    documents_skipped: int = 0
    dreams_stored: int = 0
    dreams_dropped: int = 0
    failures: int = 0


@dataclass
class ChronoReport:
    every: str = "year"
    documents_added: int = 0
    documents_skipped: int = 0
    chunks_added: int = 0
    dreams_stored: int = 0
    dreams_dropped: int = 0
    failures: int = 0
    model_calls: int = 0
    periods: list[PeriodReport] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class DreamView:
    """A stored dream with the nodes it was dreamt from."""

    dream: Node
    question: str | None
    sources: list[Node]


@dataclass(frozen=True)
class DiscoveryView:
    """An EXTENDS relation found by REM exploration, with both endpoints."""

    relation: Relation
    seed: Node
    neighbor: Node


def run_exploration(runtime: Runtime, seed: int | None = None, progress: Progress | None = None) -> ExplorationReport:
    raise NotImplementedError  # being written (issue 5); signature is final


def run_fusion(runtime: Runtime, progress: Progress | None = None) -> FusionReport:
    raise NotImplementedError  # being written (issue 5); signature is final


def run_rem(runtime: Runtime, dreams: int = 10, current_year: int | None = None, seed: int | None = None,
            progress: Progress | None = None) -> RemReport:
    raise NotImplementedError  # being written (issue 5); signature is final


def run_cycle(runtime: Runtime, dreams: int = 10, progress: Progress | None = None) -> CycleReport:
    raise NotImplementedError  # being written (issue 5); signature is final


def run_chrono(runtime: Runtime, paths: Sequence[str | Path], every: Literal["year", "month"] = "year",
               dreams: int = 10, progress: Progress | None = None) -> ChronoReport:
    raise NotImplementedError  # being written (issue 5); signature is final


def recent_dreams(runtime: Runtime, limit: int = 50) -> list[DreamView]:
    raise NotImplementedError  # being written (issue 5); signature is final


def recent_discoveries(runtime: Runtime, limit: int = 50) -> list[DiscoveryView]:
    raise NotImplementedError  # being written (issue 5); signature is final
