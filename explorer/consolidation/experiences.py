"""Phase 1, capture: experiences from the product's own activity and from imported agent logs.

The product works in steps that succeed or not: a wander step reaches a locus and leaves a residue (or fails),
a crystal is a breakthrough, a REM dream an insight, the exploration judge keeps or refuses a link. Each becomes
one :class:`Experience` (docs/consolidation.md#phase-1-capture). Their ids derive from the record they come from, so
capturing the same activity twice adds nothing.

Imported logs are JSON lines in the same shape (:class:`ExperienceLine`: the camelCase names of the original design are
read too). Every line is checked on its own: a bad one is reported with its line number and skipped, the rest
are kept.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from explorer.prompts.answers import summarise, text
from explorer.records import Node, Verdict
from explorer.records.consolidation import (
    Experience,
    ExperienceKind,
    Impact,
    InsightType,
    Outcome,
    WanderStep,
)
from explorer.records.wander import Crystal
from explorer.text import shorten

_NAMESPACE = uuid.UUID("6f1c4a52-9d0e-4f7b-8a43-2c5e1b7d9a10")
DESCRIPTION_WORDS = 80  # an experience is a sentence or two, not a document
GOOD_STEP = 0.6  # a wander step whose residue is at least this interesting succeeded


def derived_id(*parts: object) -> str:
    """The same id for the same origin, so a capture or an import repeated adds nothing."""
    return str(uuid.uuid5(_NAMESPACE, "|".join(map(str, parts))))


# -- imported logs ---------------------------------------------------------------------

_INSIGHT_OUTCOME: dict[str, Outcome] = {"breakthrough": "success", "pattern": "progress", "error": "failure"}


def _alias(*names: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


class ExperienceLine(BaseModel):
    """One line of an imported log: a move attempt, strategy application or insight, flat.

    ``outcome`` may be left out for an insight (a breakthrough succeeded, a pattern is progress, an error a
    failure); ``session_id`` for any line (the file is then one session).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    kind: ExperienceKind
    description: Annotated[str, BeforeValidator(text(2000, 1))] = Field(
        validation_alias=AliasChoices("description", "text", "move")
    )
    outcome: Outcome | None = _alias("outcome", "result")
    strategy: Annotated[str | None, BeforeValidator(text(200))] = _alias("strategy", "strategyUsed", "strategy_used")
    confidence: float = Field(
        default=0.5, ge=0, le=1, validation_alias=AliasChoices("confidence", "confidenceLevel", "confidence_level")
    )
    insight_type: InsightType | None = _alias("insight_type", "insightType", "type")
    impact: Impact | None = None
    trigger: Annotated[str | None, BeforeValidator(text(500))] = _alias("trigger", "triggerCondition")
    duration_s: float | None = Field(default=None, ge=0, validation_alias=AliasChoices("duration_s", "duration"))
    candidates_eliminated: int = Field(
        default=0, ge=0, validation_alias=AliasChoices("candidates_eliminated", "candidatesEliminated")
    )
    session_id: Annotated[str | None, BeforeValidator(text(200))] = _alias("session_id", "sessionId", "session")
    metadata: dict[str, Any] = Field(default_factory=dict, validation_alias=AliasChoices("metadata", "sessionMetadata"))
    occurred_at: datetime | None = _alias("occurred_at", "timestamp")

    @model_validator(mode="after")
    def _insight_fields(self) -> ExperienceLine:
        if self.kind == "insight" and self.insight_type is None:
            raise ValueError("an insight needs an insight_type (breakthrough, pattern or error)")
        if self.kind != "insight" and self.outcome is None:
            raise ValueError(f"a {self.kind} needs an outcome (success, failure or progress)")
        return self


def _problem(error: ValidationError) -> str:
    """A refused line's reason in one line: a rule across fields as it is stated, else the field and its fault."""
    first = error.errors()[0]
    if first["type"] == "value_error" and not first["loc"]:
        return str(first["msg"]).removeprefix("Value error, ")
    return summarise(error)


@dataclass
class ImportedLog:
    """The experiences a log holds and each line that could not be read (line number, reason)."""

    experiences: list[Experience] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)


def read_log(content: str, default_session: str) -> ImportedLog:
    """Every experience of a JSON-lines log; a bad line is reported by number and skipped."""
    log = ImportedLog()
    for number, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            log.errors.append((number, f"malformed JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(data, dict):
            log.errors.append((number, "a line must be a JSON object"))
            continue
        try:
            entry = ExperienceLine.model_validate(data)
        except ValidationError as exc:
            log.errors.append((number, _problem(exc)))
            continue
        canonical = json.dumps(data, sort_keys=True, default=str)
        log.experiences.append(
            Experience(
                kind=entry.kind,
                description=entry.description,
                outcome=entry.outcome or _INSIGHT_OUTCOME[entry.insight_type or "pattern"],
                session_id=entry.session_id or default_session,
                source="imported",
                strategy=entry.strategy or None,
                confidence=entry.confidence,
                insight_type=entry.insight_type,
                impact=entry.impact,
                trigger=entry.trigger or None,
                duration_s=entry.duration_s,
                candidates_eliminated=entry.candidates_eliminated,
                metadata=entry.metadata,
                occurred_at=entry.occurred_at,
                id=derived_id("imported", hashlib.sha256(canonical.encode()).hexdigest()),
            )
        )
    return log


# -- the product's own activity -----------------------------------------------------------


def _step_outcome(step: WanderStep) -> Outcome:
    if step.failures or step.connection is None:
        return "failure"
    return "success" if (step.interestingness or 0.0) >= GOOD_STEP else "progress"


def _impact(confidence: float) -> Impact:
    return "high" if confidence >= 0.8 else "medium" if confidence >= 0.5 else "low"


def from_wander(steps: Sequence[WanderStep], crystals: Sequence[Crystal]) -> list[Experience]:
    """A move per wander step (a failed stage or no residue: a failure; an interesting residue: a success),
    its duration the time since the session's previous step; a breakthrough per crystal.
    """
    found: list[Experience] = []
    previous: dict[str, datetime] = {}
    for step in sorted(steps, key=lambda s: (s.session_id, s.step_number)):
        said = step.connection or step.bridge or step.surprise
        description = f"{step.concept}: {said}" if said else f"reached {step.concept}"
        before = previous.get(step.session_id)
        if step.created_at is not None:
            previous[step.session_id] = step.created_at
        found.append(
            Experience(
                kind="move",
                description=shorten(description, DESCRIPTION_WORDS),
                outcome=_step_outcome(step),
                session_id=step.session_id,
                source="wander",
                strategy=step.strategy,
                confidence=step.interestingness if step.interestingness is not None else 0.5,
                duration_s=(step.created_at - before).total_seconds() if before and step.created_at else None,
                metadata={"step": step.step_number, "concept": step.concept, "themes": list(step.themes)},
                occurred_at=step.created_at,
                id=derived_id("wander_step", step.trace_id),
            )
        )
    for crystal in crystals:
        found.append(
            Experience(
                kind="insight",
                description=shorten(crystal.insight, DESCRIPTION_WORDS),
                outcome="success",
                session_id=crystal.session_id or "crystals",
                source="wander",
                strategy="crystallize",
                confidence=crystal.confidence,
                insight_type="breakthrough",
                impact=_impact(crystal.confidence),
                metadata={"domains": list(crystal.domains)},
                occurred_at=crystal.created_at,
                id=derived_id("crystal", crystal.id),
            )
        )
    return found


def _night(moment: datetime | None) -> str:
    """The session a night's dreams belong to: the day they were dreamt."""
    return f"night of {moment.date().isoformat()}" if moment else "night"


def from_dreams(dreams: Sequence[Node], verdicts: Sequence[Verdict]) -> list[Experience]:
    """An insight per REM dream or fused memory, and a move per verdict of the exploration judge (a link kept:
    a success; refused: a failure), each night one session.
    """
    found = [
        Experience(
            kind="insight",
            description=shorten(node.text, DESCRIPTION_WORDS),
            outcome="success",
            session_id=_night(node.created_at),
            source="dreams",
            strategy="rem dream" if node.type == "rem_dream" else "fusion",
            confidence=node.confidence,
            insight_type="pattern",
            impact=_impact(node.importance),
            occurred_at=node.created_at,
            id=derived_id("node", node.id),
        )
        for node in dreams
    ]
    for verdict in verdicts:
        scores = (verdict.novelty + verdict.plausibility + verdict.usefulness) / 15
        found.append(
            Experience(
                kind="move",
                description=shorten(verdict.connection or verdict.reason, DESCRIPTION_WORDS),
                outcome="success" if verdict.kept else "failure",
                session_id=_night(verdict.created_at),
                source="dreams",
                strategy="exploration",
                confidence=round(scores, 4),
                metadata={"novelty": verdict.novelty, "plausibility": verdict.plausibility},
                occurred_at=verdict.created_at,
                id=derived_id("verdict", verdict.id),
            )
        )
    return found
