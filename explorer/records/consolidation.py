"""Records of consolidation (docs/consolidation.md): the experiences it reads and the knowledge it makes.

An *experience* is one thing that happened while the product (or an imported agent) worked: a move, a strategy
applied, an insight. Consolidation turns many of them into a few *patterns*, stacks the patterns into an
abstraction *ladder* up to principles, *connects* related items and *verifies* the whole. The store and the
engine share these records, so they live in the bottom layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import numpy as np

from explorer.records import new_id

ExperienceKind = Literal["move", "strategy", "insight"]
Outcome = Literal["success", "failure", "progress"]
InsightType = Literal["breakthrough", "pattern", "error"]
Impact = Literal["high", "medium", "low"]
ExperienceSource = Literal["wander", "dreams", "imported"]
PatternType = Literal["strategy", "technique", "heuristic"]
PatternStatus = Literal["unverified", "verified", "invalidated"]
RelationshipType = Literal["prerequisite", "alternative", "refinement", "complement"]
VerificationStatus = Literal["verified", "warnings", "failed"]

SOURCES: tuple[str, ...] = ("wander", "dreams", "imported")
RELATIONSHIPS: tuple[str, ...] = ("prerequisite", "alternative", "refinement", "complement")


@dataclass(frozen=True)
class Experience:
    """One captured experience: a move attempt, a strategy application or an insight.

    ``strategy`` is the strategy used or applied; ``insight_type``, ``impact`` and ``trigger`` belong to
    insights; ``duration_s`` to strategy applications; ``session_id`` groups what one working session produced
    (triage caps each session), and ``metadata`` carries what the session said of itself (difficulty, ...).
    """

    kind: ExperienceKind
    description: str
    outcome: Outcome
    session_id: str
    source: ExperienceSource = "imported"
    strategy: str | None = None
    confidence: float = 0.5
    insight_type: InsightType | None = None
    impact: Impact | None = None
    trigger: str | None = None
    duration_s: float | None = None
    candidates_eliminated: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None
    id: str = field(default_factory=new_id)

    @property
    def breakthrough(self) -> bool:
        """Whether triage must keep it, whatever its score: every breakthrough is kept."""
        return self.insight_type == "breakthrough"

    @property
    def text(self) -> str:
        """What is embedded and shown: the strategy, then what happened."""
        return f"{self.strategy}: {self.description}" if self.strategy else self.description


@dataclass(frozen=True)
class Pattern:
    """What a cluster of experiences has in common: when it applies (conditions), what to do (actions), and the
    evidence (3–5 example experiences, every member's id, the success rate and how often it was used).

    ``success_rate`` is ``None`` for an error-recovery pattern (its cluster is mostly failures);
    ``utility`` is integration's (see :func:`explorer.consolidation.integration.utility`).
    """

    name: str
    type: PatternType
    description: str
    conditions: tuple[str, ...]
    actions: tuple[str, ...]
    example_ids: tuple[str, ...]
    member_ids: tuple[str, ...]
    success_rate: float | None
    usage_count: int
    confidence: float
    utility: float = 0.0
    status: PatternStatus = "unverified"
    embedding: np.ndarray | None = field(default=None, compare=False)
    id: str = field(default_factory=new_id)

    @property
    def text(self) -> str:
        """What is embedded and compared: the name, the description, when and what."""
        return " ".join([f"{self.name}: {self.description}", *self.conditions, *self.actions])


@dataclass(frozen=True)
class LadderItem:
    """One rung's item: an instance (level 0, an experience), a pattern (level 1) or an abstraction (2 and up),
    with the ids of the items one level down it subsumes, so every item traces down to instances.
    """

    level: int
    name: str
    statement: str
    subsumes: tuple[str, ...] = ()
    embedding: np.ndarray | None = field(default=None, compare=False)
    id: str = field(default_factory=new_id)

    @property
    def text(self) -> str:
        """What is embedded and compared: the name and the statement."""
        return f"{self.name}: {self.statement}" if self.name else self.statement


@dataclass(frozen=True)
class LadderLink:
    """A link between two items of one ladder level: how they relate, how strongly (similarity), and the
    experiences they share as evidence.
    """

    from_id: str
    to_id: str
    relationship: RelationshipType
    strength: float
    level: int
    evidence: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class Check:
    """One verification check: passed or not, how well (0–1), how grave a failure is, and what it found."""

    name: str
    passed: bool
    score: float
    message: str
    severity: Literal["error", "warning"] = "warning"
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verification:
    """The five checks of a consolidation, their overall score and the status it earns."""

    status: VerificationStatus
    score: float
    checks: tuple[Check, ...]

    @property
    def errors(self) -> list[str]:
        """The failed checks that make the status ``failed``."""
        return [c.message for c in self.checks if not c.passed and c.severity == "error"]

    @property
    def warnings(self) -> list[str]:
        """The failed checks that only warn."""
        return [c.message for c in self.checks if not c.passed and c.severity == "warning"]


@dataclass(frozen=True)
class WanderStep:
    """One step of a wander walk as consolidation reads it: where it went, how, what it left behind."""

    trace_id: str
    session_id: str
    step_number: int
    concept: str
    strategy: str | None
    failures: int
    connection: str | None
    bridge: str | None
    surprise: str | None
    interestingness: float | None
    themes: tuple[str, ...]
    created_at: datetime | None
