"""Typed records of Wander (wander.md), as they cross module boundaries.

Field names are the column names of the ``wander_*`` tables, so a record, its
row, its JSON and its label in the app all use the same word. Embeddings are
float32 unit vectors (``None`` when a view was loaded without them). A record's
``to_json`` is what every surface prints of it (the CLI's ``--json``, the API, the
MCP tools): no vectors, and timestamps left as datetimes for the surface to write
as text. Its shape is a TypedDict, so mypy holds the two to each other and the
surfaces publish it as a schema.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, NotRequired

import numpy as np
from typing_extensions import TypedDict  # pydantic reads typing's own TypedDict only from Python 3.12

from explorer.records import Node, new_id

SessionStatus = Literal["active", "paused", "completed", "abandoned"]
SourceType = Literal["SEED", "ADJACENT", "BRIDGED", "SERENDIPITOUS"]
Strategy = Literal["seed", "distance_band", "cross_domain", "analogy", "tension", "injected"]
ResonanceStatus = Literal["candidate", "confirmed", "invalidated"]
CrystalStatus = Literal["active", "acted_upon", "invalidated", "archived"]
ClusterType = Literal["theme_cluster", "failed_path", "summary"]
FenceAction = Literal["include", "exclude"]
# Why a session is paused: the surfaces ask for a review at a checkpoint or a tripped breaker,
# not after a person's pause.
PauseKind = Literal["checkpoint", "circuit_breaker", "budget", "person"]


class ReviewState(StrEnum):
    """Where a crystal stands with the person reviewing it: the one definition the engine, CLI, app and tests use.

    It is derived from the stored ``status`` and ``human_approved`` (see :attr:`Crystal.review_state`); the
    transitions a review may make live in :mod:`explorer.wander.guards`.
    """

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    ARCHIVED = "archived"


# What a person can decide about a crystal, and the state each decision leads to.
ReviewDecision = Literal["approve", "reject", "archive"]
REVIEW_OUTCOMES: dict[ReviewDecision, ReviewState] = {
    "approve": ReviewState.APPROVED,
    "reject": ReviewState.REJECTED,
    "archive": ReviewState.ARCHIVED,
}
# What an entry of the review log did: a decision, or a revert that put back what an earlier entry changed.
ReviewAction = Literal["approve", "reject", "archive", "revert"]
# The crystal's fields a review sets, and so the ones a revert puts back.
REVIEW_FIELDS = ("status", "human_approved", "human_approved_at", "human_approved_by", "validation_notes")


def utcnow() -> datetime:
    """Now, timezone-aware: every timestamp Wander stores is UTC."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class FenceAnchor:
    """A point that widens (``include``) or cuts out (``exclude``) the region a session may wander in."""

    concept: str
    action: FenceAction
    embedding: np.ndarray

    def to_json(self) -> dict[str, Any]:
        """The anchor as the session row stores it (its vector rounded: six digits keep its direction)."""
        return {
            "concept": self.concept,
            "action": self.action,
            "embedding": [round(float(x), 6) for x in self.embedding],
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> FenceAnchor:
        """The anchor back from its stored form."""
        return cls(value["concept"], value["action"], np.asarray(value["embedding"], dtype=np.float32))


@dataclass
class Session:
    """One wander session: its configuration, budget, counters and where it stands."""

    name: str
    seed_concept: str
    status: SessionStatus = "active"
    status_reason: str | None = None
    pause_kind: PauseKind | None = None
    seed_embedding: np.ndarray | None = None
    attractor: str | None = None
    attractor_embedding: np.ndarray | None = None
    allowed_domains: list[str] | None = None
    forbidden_domains: list[str] | None = None
    fence: list[FenceAnchor] = field(default_factory=list)
    max_drift_distance: float = 0.8
    max_steps: int = 1000
    cloud_budget_cents: int = 500
    cloud_spent_cents: float = 0.0
    local_calls: int = 0
    cloud_calls: int = 0
    offline_calls: int = 0
    temperature: float = 0.7
    human_checkpoint_frequency: int = 50
    random_seed: int = 0
    step_count: int = 0
    current_locus_id: str | None = None
    pending_locus_id: str | None = None
    failure_streak: int = 0
    fence_streak: int = 0
    circuit_reset_step: int = 0
    created_at: datetime | None = None
    last_step_at: datetime | None = None
    completed_at: datetime | None = None
    id: str = field(default_factory=new_id)

    @property
    def budget_remaining_cents(self) -> float:
        """What the session may still spend on cloud calls; never negative, even after an overrun."""
        return max(0.0, self.cloud_budget_cents - self.cloud_spent_cents)

    def to_json(self) -> SessionJson:
        """The session as every surface prints it: its configuration, budget, counters and status (no vectors)."""
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "status_reason": self.status_reason,
            "pause_kind": self.pause_kind,
            "seed_concept": self.seed_concept,
            "attractor": self.attractor,
            "allowed_domains": self.allowed_domains,
            "forbidden_domains": self.forbidden_domains,
            "fence": [{"concept": a.concept, "action": a.action} for a in self.fence],
            "max_drift_distance": self.max_drift_distance,
            "max_steps": self.max_steps,
            "step_count": self.step_count,
            "cloud_budget_cents": self.cloud_budget_cents,
            "cloud_spent_cents": self.cloud_spent_cents,
            "local_calls": self.local_calls,
            "cloud_calls": self.cloud_calls,
            "offline_calls": self.offline_calls,
            "temperature": self.temperature,
            "human_checkpoint_frequency": self.human_checkpoint_frequency,
            "random_seed": self.random_seed,
            "current_locus_id": self.current_locus_id,
            "created_at": self.created_at,
            "last_step_at": self.last_step_at,
            "completed_at": self.completed_at,
        }


class FenceJson(TypedDict):
    """A fence anchor as surfaces show it (its vector left out)."""

    concept: str
    action: FenceAction


class SessionJson(TypedDict):
    """A session's JSON form (:meth:`Session.to_json`)."""

    id: str
    name: str
    status: SessionStatus
    status_reason: str | None
    pause_kind: PauseKind | None
    seed_concept: str
    attractor: str | None
    allowed_domains: list[str] | None
    forbidden_domains: list[str] | None
    fence: list[FenceJson]
    max_drift_distance: float
    max_steps: int
    step_count: int
    cloud_budget_cents: float
    cloud_spent_cents: float
    local_calls: int
    cloud_calls: int
    offline_calls: int
    temperature: float
    human_checkpoint_frequency: int
    random_seed: int
    current_locus_id: str | None
    created_at: datetime | None
    last_step_at: datetime | None
    completed_at: datetime | None


@dataclass
class Locus:
    """A point in idea space: a corpus node (``node_id`` keeps the provenance), a proposed analogy, the seed
    or an injected concept.
    """

    session_id: str
    concept: str
    embedding: np.ndarray | None
    source_type: SourceType
    strategy: Strategy = "seed"
    node_id: str | None = None
    domains: list[str] = field(default_factory=list)
    abstraction_level: float = 0.5
    novelty_score: float = 0.5
    interestingness: float = 0.5
    actionability: float = 0.0
    uncertainty: float = 0.5
    visit_count: int = 0
    first_encountered: datetime | None = None
    last_visited: datetime | None = None
    adjacent_to: list[dict[str, Any]] = field(default_factory=list)  # [{locus_id, distance, strength}]
    bridges_to: list[dict[str, Any]] = field(default_factory=list)  # [{locus_id, bridge_type, strength}]
    contradicts: list[dict[str, Any]] = field(default_factory=list)  # [{locus_id, tension_description}]
    id: str = field(default_factory=new_id)

    def to_json(self, connections: bool = False) -> LocusJson:
        """The locus as surfaces print it, without its vector (384 floats say nothing to a reader); with
        ``connections``, also the loci it is adjacent to, bridges to and contradicts (a locus's detail).
        """
        shown: LocusJson = {
            "id": self.id,
            "concept": self.concept,
            "source_type": self.source_type,
            "strategy": self.strategy,
            "node_id": self.node_id,
            "domains": self.domains,
            "visit_count": self.visit_count,
            "interestingness": self.interestingness,
            "novelty_score": self.novelty_score,
            "actionability": self.actionability,
            "uncertainty": self.uncertainty,
        }
        if connections:
            shown["adjacent_to"] = self.adjacent_to
            shown["bridges_to"] = self.bridges_to
            shown["contradicts"] = self.contradicts
        return shown


class LocusJson(TypedDict):
    """A locus's JSON form (:meth:`Locus.to_json`); the connections only in a locus's detail."""

    id: str
    concept: str
    source_type: SourceType
    strategy: Strategy
    node_id: str | None
    domains: list[str]
    visit_count: int
    interestingness: float
    novelty_score: float
    actionability: float
    uncertainty: float
    adjacent_to: NotRequired[list[dict[str, Any]]]
    bridges_to: NotRequired[list[dict[str, Any]]]
    contradicts: NotRequired[list[dict[str, Any]]]


@dataclass
class Trace:
    """One step of the path: where from, where to, why, and what it cost."""

    session_id: str
    step_number: int
    to_locus_id: str
    from_locus_id: str | None = None
    adjacencies_considered: int = 0
    selection_scores: dict[str, Any] = field(default_factory=dict)
    selection_reason: str | None = None
    model_used: str | None = None
    tokens_used: int = 0
    cost_cents: float = 0.0
    strategy: Strategy | None = None
    drift: float | None = None
    failures: int = 0
    created_at: datetime | None = None
    id: str = field(default_factory=new_id)

    def to_json(self) -> TraceJson:
        """One step of the path as surfaces print it, with why it went where it went."""
        return {
            "step_number": self.step_number,
            "from_locus_id": self.from_locus_id,
            "to_locus_id": self.to_locus_id,
            "strategy": self.strategy,
            "adjacencies_considered": self.adjacencies_considered,
            "selection_scores": self.selection_scores,
            "selection_reason": self.selection_reason,
            "model_used": self.model_used,
            "tokens_used": self.tokens_used,
            "cost_cents": self.cost_cents,
            "drift": self.drift,
            "failures": self.failures,
        }


class TraceJson(TypedDict):
    """A trace's JSON form (:meth:`Trace.to_json`)."""

    step_number: int
    from_locus_id: str | None
    to_locus_id: str
    strategy: Strategy | None
    adjacencies_considered: int
    selection_scores: dict[str, Any]
    selection_reason: str | None
    model_used: str | None
    tokens_used: int
    cost_cents: float
    drift: float | None
    failures: int


@dataclass
class Residue:
    """What dwelling at an encounter left behind (the five reflections, themes and two ratings)."""

    session_id: str
    trace_id: str
    to_locus_id: str
    from_locus_id: str | None = None
    connection: str | None = None
    tension: str | None = None
    bridge: str | None = None
    surprise: str | None = None
    possibility: str | None = None
    themes: list[str] = field(default_factory=list)
    themes_embedding: np.ndarray | None = None
    interestingness: float | None = None
    actionability: float | None = None
    model_used: str | None = None
    created_at: datetime | None = None
    id: str = field(default_factory=new_id)

    def to_json(self) -> ResidueJson:
        """The residue as surfaces print it: the five reflections, its themes and ratings."""
        return {
            "id": self.id,
            "trace_id": self.trace_id,
            "to_locus_id": self.to_locus_id,
            "connection": self.connection,
            "tension": self.tension,
            "bridge": self.bridge,
            "surprise": self.surprise,
            "possibility": self.possibility,
            "themes": self.themes,
            "interestingness": self.interestingness,
            "actionability": self.actionability,
            "model_used": self.model_used,
        }


class ResidueJson(TypedDict):
    """A residue's JSON form (:meth:`Residue.to_json`)."""

    id: str
    trace_id: str
    to_locus_id: str
    connection: str | None
    tension: str | None
    bridge: str | None
    surprise: str | None
    possibility: str | None
    themes: list[str]
    interestingness: float | None
    actionability: float | None
    model_used: str | None


@dataclass
class Resonance:
    """A recurring pattern of themes. ``session_id`` None: it recurs across sessions.

    ``strength`` is the value stored at ``last_reinforced_at``; it decays by
    ``decay_rate`` a day from then (see :meth:`current_strength`).
    """

    themes: list[str]
    embedding: np.ndarray | None
    session_id: str | None = None
    occurrences: int = 1
    strength: float = 1.0
    status: ResonanceStatus = "candidate"
    supporting_residue_ids: list[str] = field(default_factory=list)
    last_reinforced_at: datetime | None = None
    decay_rate: float = 0.1
    created_at: datetime | None = None
    id: str = field(default_factory=new_id)

    def current_strength(self, now: datetime | None = None) -> float:
        """The strength left after decay since the last reinforcement: a pattern not seen again fades."""
        if self.last_reinforced_at is None:
            return self.strength
        days = max(0.0, ((now or utcnow()) - self.last_reinforced_at).total_seconds() / 86400.0)
        return self.strength * math.pow(1.0 - self.decay_rate, days)

    def to_json(self) -> ResonanceJson:
        """The resonance as surfaces print it, with its strength decayed to now beside the stored one."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "themes": self.themes,
            "status": self.status,
            "occurrences": self.occurrences,
            "strength": round(self.current_strength(), 4),
            "stored_strength": self.strength,
            "last_reinforced_at": self.last_reinforced_at,
            "supporting_residue_ids": self.supporting_residue_ids,
        }


class ResonanceJson(TypedDict):
    """A resonance's JSON form (:meth:`Resonance.to_json`); ``strength`` is decayed to now."""

    id: str
    session_id: str | None
    themes: list[str]
    status: ResonanceStatus
    occurrences: int
    strength: float
    stored_strength: float
    last_reinforced_at: datetime | None
    supporting_residue_ids: list[str]


@dataclass
class Crystal:
    """A validated insight: where a confirmed resonance met an interesting locus."""

    insight: str
    embedding: np.ndarray | None
    confidence: float
    actionability: float
    domains: list[str]
    session_id: str | None = None
    source_resonance_id: str | None = None
    source_locus_id: str | None = None
    supporting_evidence: list[dict[str, Any]] = field(default_factory=list)  # [{type, id, summary}]
    # the two sources it connects: [{locus_id, node_id, name, document_id, title, domain}]
    connects: list[dict[str, Any]] = field(default_factory=list)
    status: CrystalStatus = "active"
    validated_by: str | None = None
    validation_notes: str | None = None
    human_approved: bool = False
    human_approved_at: datetime | None = None
    human_approved_by: str | None = None
    created_at: datetime | None = None
    id: str = field(default_factory=new_id)

    @property
    def review_state(self) -> ReviewState:
        """The review state its stored fields mean.

        A rejection is stored as ``invalidated``, and an approved crystal that is archived keeps its
        ``human_approved`` record but is archived.
        """
        if self.status == "archived":
            return ReviewState.ARCHIVED
        if self.status == "invalidated":
            return ReviewState.REJECTED
        return ReviewState.APPROVED if self.human_approved else ReviewState.PENDING

    def review_values(self) -> dict[str, Any]:
        """Its :data:`REVIEW_FIELDS` as JSON values (the time in UTC, ISO 8601), as the review log keeps them."""
        values = {name: getattr(self, name) for name in REVIEW_FIELDS}
        if self.human_approved_at is not None:
            values["human_approved_at"] = self.human_approved_at.astimezone(UTC).isoformat()
        return values

    def to_json(self) -> CrystalJson:
        """The crystal as surfaces print it, with its review state and who reviewed it."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "insight": self.insight,
            "confidence": self.confidence,
            "actionability": self.actionability,
            "domains": self.domains,
            "status": self.status,
            "source_resonance_id": self.source_resonance_id,
            "source_locus_id": self.source_locus_id,
            "supporting_evidence": self.supporting_evidence,
            "connects": self.connects,
            "validated_by": self.validated_by,
            "validation_notes": self.validation_notes,
            "review_state": self.review_state,
            "human_approved": self.human_approved,
            "human_approved_at": self.human_approved_at,
            "human_approved_by": self.human_approved_by,
            "created_at": self.created_at,
        }


class CrystalJson(TypedDict):
    """A crystal's JSON form (:meth:`Crystal.to_json`)."""

    id: str
    session_id: str | None
    insight: str
    confidence: float
    actionability: float
    domains: list[str]
    status: CrystalStatus
    source_resonance_id: str | None
    source_locus_id: str | None
    supporting_evidence: list[dict[str, Any]]
    connects: list[dict[str, Any]]
    validated_by: str | None
    validation_notes: str | None
    review_state: ReviewState
    human_approved: bool
    human_approved_at: datetime | None
    human_approved_by: str | None
    created_at: datetime | None


def review_fields(values: dict[str, Any]) -> dict[str, Any]:
    """The crystal fields a review log's JSON values (:meth:`Crystal.review_values`) stand for, to store again."""
    fields = {name: values.get(name) for name in REVIEW_FIELDS}
    if isinstance(fields["human_approved_at"], str):
        fields["human_approved_at"] = datetime.fromisoformat(fields["human_approved_at"])
    return fields


@dataclass
class Review:
    """One entry of the review log: a person's decision on a crystal, or a revert of an earlier entry.

    ``values_before``/``values_after`` are the crystal's :data:`REVIEW_FIELDS` on each side (JSON values), so the
    decision can be put back exactly; they are None for a decision taken before the log existed (it is history,
    but cannot be reverted).
    """

    crystal_id: str
    decision: ReviewAction
    reviewer: str
    state_before: ReviewState
    state_after: ReviewState
    values_before: dict[str, Any] | None
    values_after: dict[str, Any] | None
    notes: str | None = None
    forced: bool = False
    batch_id: str | None = None  # the bulk review it was part of
    reverts: str | None = None  # the entry a revert undid
    created_at: datetime | None = None
    id: str = field(default_factory=new_id)

    @property
    def revertible(self) -> bool:
        """Whether the log knows what to put back (see the class's note)."""
        return self.values_before is not None

    def to_json(self) -> ReviewJson:
        """The entry as surfaces print it."""
        return {
            "id": self.id,
            "crystal_id": self.crystal_id,
            "decision": self.decision,
            "reviewer": self.reviewer,
            "notes": self.notes,
            "state_before": self.state_before,
            "state_after": self.state_after,
            "forced": self.forced,
            "batch_id": self.batch_id,
            "reverts": self.reverts,
            "revertible": self.revertible,
            "values_before": self.values_before,
            "values_after": self.values_after,
            "created_at": self.created_at,
        }


class ReviewJson(TypedDict):
    """A review log entry's JSON form (:meth:`Review.to_json`)."""

    id: str
    crystal_id: str
    decision: ReviewAction
    reviewer: str
    notes: str | None
    state_before: ReviewState
    state_after: ReviewState
    forced: bool
    batch_id: str | None
    reverts: str | None
    revertible: bool
    values_before: dict[str, Any] | None
    values_after: dict[str, Any] | None
    created_at: datetime | None


@dataclass(frozen=True)
class ReviewFilter:
    """Which crystals a bulk review (or the review queue) takes: by session, confidence range and review states;
    the default is every crystal awaiting review.
    """

    session_id: str | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    states: frozenset[ReviewState] = frozenset({ReviewState.PENDING})

    def matches(self, crystal: Crystal) -> bool:
        """Whether ``crystal`` is one of them."""
        return (
            (self.session_id is None or crystal.session_id == self.session_id)
            and (self.min_confidence is None or crystal.confidence >= self.min_confidence)
            and (self.max_confidence is None or crystal.confidence <= self.max_confidence)
            and crystal.review_state in self.states
        )


@dataclass
class BulkReview:
    """What a bulk review did, or would do (``dry_run``): of the ``matched`` crystals, ``reviewed`` took the
    decision and ``refused`` were left alone because the decision would overturn an earlier one (``force`` takes
    them too).
    """

    decision: ReviewDecision
    matched: int
    reviewed: int
    refused: int
    dry_run: bool
    batch_id: str | None = None  # the log entries' batch (None when nothing was written)

    def to_json(self) -> BulkReviewJson:
        """The report as surfaces print it."""
        return {
            "decision": self.decision,
            "matched": self.matched,
            "reviewed": self.reviewed,
            "refused": self.refused,
            "dry_run": self.dry_run,
            "batch_id": self.batch_id,
        }


class BulkReviewJson(TypedDict):
    """A bulk review's JSON form (:meth:`BulkReview.to_json`)."""

    decision: ReviewDecision
    matched: int
    reviewed: int
    refused: int
    dry_run: bool
    batch_id: str | None


@dataclass
class WarmMemory:
    """Compressed hot memory: a cluster of themes, a path that led nowhere, or a summary of steps."""

    session_id: str
    cluster_type: ClusterType
    content: dict[str, Any]
    embedding: np.ndarray | None = None
    strength: float = 1.0
    last_accessed_at: datetime | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    id: str = field(default_factory=new_id)


@dataclass
class Adjacency:
    """A candidate next locus, as a strategy proposed it and the ranking scored it."""

    concept: str
    embedding: np.ndarray
    strategy: Strategy
    source_type: SourceType
    domains: list[str] = field(default_factory=list)
    node_id: str | None = None
    locus_id: str | None = None  # set when the candidate is already a locus of the session
    similarity: float = 0.0  # cosine to the current locus
    relatedness: float = 0.0  # evidence that it and the current locus are related (cosine, links, entities)
    interestingness: float = 0.5
    novelty: float = 0.5
    bridge_potential: float = 0.0
    uncertainty: float = 0.5
    attractor_pull: float = 0.0
    score: float = 0.0
    probability: float = 0.0
    note: str | None = None  # why the strategy proposed it (analogy rationale, tension)
    abstraction_level: float = 0.5

    @property
    def distance(self) -> float:
        """Cosine distance from the current locus: the distance band the selection prefers is measured in it."""
        return 1.0 - self.similarity


@dataclass
class StepResult:
    """What one step did. ``status`` is the session's status after the step."""

    step_number: int
    from_locus: Locus | None
    to_locus: Locus
    trace: Trace
    residue: Residue | None
    resonances: list[Resonance] = field(default_factory=list)
    crystal: Crystal | None = None
    adjacencies: list[Adjacency] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    status: SessionStatus = "active"
    status_reason: str | None = None

    def to_json(self) -> StepJson:
        """What the step did, as ``explorer wander step --json`` prints it (wander.md's step result, and more)."""
        return {
            "step_number": self.step_number,
            "from_locus": self.from_locus.to_json() if self.from_locus else None,
            "to_locus": self.to_locus.to_json(),
            "trace": self.trace.to_json(),
            "residue": self.residue.to_json() if self.residue else None,
            "resonances_detected": [r.to_json() for r in self.resonances],
            "crystal": self.crystal.to_json() if self.crystal else None,
            "failures": self.failures,
            "status": self.status,
            "status_reason": self.status_reason,
        }


class StepJson(TypedDict):
    """A step's JSON form (:meth:`StepResult.to_json`); ``status`` is the session's after the step."""

    step_number: int
    from_locus: LocusJson | None
    to_locus: LocusJson
    trace: TraceJson
    residue: ResidueJson | None
    resonances_detected: list[ResonanceJson]
    crystal: CrystalJson | None
    failures: list[str]
    status: SessionStatus
    status_reason: str | None


@dataclass(frozen=True)
class RunResult:
    """How far a run of steps got, and why it stopped before the end if it did."""

    steps_completed: int
    crystals_formed: int
    stopped_reason: str | None = None

    def to_json(self) -> RunJson:
        """The result as ``explorer wander run --json`` prints it."""
        return {
            "steps_completed": self.steps_completed,
            "crystals_formed": self.crystals_formed,
            "stopped_reason": self.stopped_reason,
        }


class RunJson(TypedDict):
    """A run's JSON form (:meth:`RunResult.to_json`)."""

    steps_completed: int
    crystals_formed: int
    stopped_reason: str | None


@dataclass
class SessionView:
    """Everything the app draws for one session; resonances carry their decayed strength."""

    session: Session
    loci: list[Locus]
    trace: list[Trace]
    residues: list[Residue]
    resonances: list[Resonance]  # current_strength() gives each one's decayed strength
    crystals: list[Crystal]
    warm_memory: list[WarmMemory] = field(default_factory=list)


@dataclass
class CrystalEvidence:
    """A crystal traced back to what supports it: residues → loci → corpus nodes (and their source chunks)."""

    crystal: Crystal
    residues: list[Residue]
    loci: list[Locus]
    nodes: list[Node]
    chunks: list[Node]


@dataclass(frozen=True)
class SearchHit:
    """A locus, crystal or resonance found near a query by meaning, with its cosine."""

    type: Literal["locus", "crystal", "resonance"]
    id: str
    text: str
    score: float
    session_id: str | None = None

    def to_json(self) -> SearchHitJson:
        """The hit as ``explorer wander search --json`` prints it (its score rounded to four digits)."""
        return {
            "type": self.type,
            "id": self.id,
            "text": self.text,
            "score": round(self.score, 4),
            "session_id": self.session_id,
        }


class SearchHitJson(TypedDict):
    """A search hit's JSON form (:meth:`SearchHit.to_json`)."""

    type: Literal["locus", "crystal", "resonance"]
    id: str
    text: str
    score: float
    session_id: str | None
