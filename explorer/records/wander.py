"""Typed records of Wander (docs/wander.md), as they cross module boundaries.

Field names are the column names of the ``wander_*`` tables, so a record, its
row, its JSON and its label in the app all use the same word. Embeddings are
float32 unit vectors (``None`` when a view was loaded without them). A record's
``to_json`` is what every surface prints of it (the CLI's ``--json``, the API, the
MCP tools): no vectors, and timestamps left as datetimes for the surface to write
as text. It is derived from the record's ``json_form`` (:mod:`explorer.records.json_form`), the one list of
what the record shows, which also gives the shape the surfaces publish as a schema (``SessionJson`` and its
kind, named after the form).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from operator import attrgetter
from typing import Annotated, Any, Literal

import numpy as np

from explorer.records import Node, Retired, new_id
from explorer.records.json_form import Computed, JsonForm, JsonRecord

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
class FenceAnchor(JsonRecord):
    """A point that widens (``include``) or cuts out (``exclude``) the region a session may wander in."""

    concept: str
    action: FenceAction
    embedding: np.ndarray

    json_form = JsonForm("FenceJson", "concept", "action")  # surfaces leave the vector out

    def to_stored(self) -> dict[str, Any]:
        """The anchor as the session row stores it (its vector rounded: six digits keep its direction)."""
        return {
            "concept": self.concept,
            "action": self.action,
            "embedding": [round(float(x), 6) for x in self.embedding],
        }

    @classmethod
    def from_stored(cls, value: dict[str, Any]) -> FenceAnchor:
        """The anchor back from its stored form."""
        return cls(value["concept"], value["action"], np.asarray(value["embedding"], dtype=np.float32))


@dataclass
class Session(JsonRecord):
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

    # what every surface prints of a session: its configuration, budget, counters and status (no vectors)
    json_form = JsonForm(
        "SessionJson",
        "id",
        "name",
        "status",
        "status_reason",
        "pause_kind",
        "seed_concept",
        "attractor",
        "allowed_domains",
        "forbidden_domains",
        "fence",
        "max_drift_distance",
        "max_steps",
        "step_count",
        "cloud_budget_cents",
        "cloud_spent_cents",
        "local_calls",
        "cloud_calls",
        "offline_calls",
        "temperature",
        "human_checkpoint_frequency",
        "random_seed",
        "current_locus_id",
        "created_at",
        "last_step_at",
        "completed_at",
    )


FenceJson = Annotated[dict[str, Any], FenceAnchor.json_form]
SessionJson = Annotated[dict[str, Any], Session.json_form]


# A locus's links to other loci, shown only in its detail.
CONNECTIONS = ("adjacent_to", "bridges_to", "contradicts")


@dataclass
class Locus(JsonRecord):
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

    # without its vector (384 floats say nothing to a reader)
    json_form = JsonForm(
        "LocusJson",
        "id",
        "concept",
        "source_type",
        "strategy",
        "node_id",
        "domains",
        "visit_count",
        "interestingness",
        "novelty_score",
        "actionability",
        "uncertainty",
        *CONNECTIONS,
        optional=CONNECTIONS,
        note="The loci it is adjacent to, bridges to and contradicts are shown only in a locus's detail.",
    )

    def to_json(self, connections: bool = False) -> dict[str, Any]:
        """The locus as surfaces print it; with ``connections``, also the loci it is adjacent to, bridges to and
        contradicts (a locus's detail).
        """
        return self.json_form.dump(self, leave_out=() if connections else CONNECTIONS)


LocusJson = Annotated[dict[str, Any], Locus.json_form]


@dataclass
class Trace(JsonRecord):
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

    # one step of the path as surfaces print it, with why it went where it went
    json_form = JsonForm(
        "TraceJson",
        "step_number",
        "from_locus_id",
        "to_locus_id",
        "strategy",
        "adjacencies_considered",
        "selection_scores",
        "selection_reason",
        "model_used",
        "tokens_used",
        "cost_cents",
        "drift",
        "failures",
    )


TraceJson = Annotated[dict[str, Any], Trace.json_form]


@dataclass
class Residue(JsonRecord):
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

    json_form = JsonForm(
        "ResidueJson",
        "id",
        "trace_id",
        "to_locus_id",
        "connection",
        "tension",
        "bridge",
        "surprise",
        "possibility",
        "themes",
        "interestingness",
        "actionability",
        "model_used",
    )


ResidueJson = Annotated[dict[str, Any], Residue.json_form]


@dataclass
class Resonance(JsonRecord):
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

    json_form = JsonForm(
        "ResonanceJson",
        "id",
        "session_id",
        "themes",
        "status",
        "occurrences",
        Computed("strength", float, lambda resonance: round(resonance.current_strength(), 4)),
        Computed("stored_strength", float, attrgetter("strength")),
        "last_reinforced_at",
        "supporting_residue_ids",
        note="``strength`` is decayed to now; ``stored_strength`` is the value stored at ``last_reinforced_at``.",
    )


ResonanceJson = Annotated[dict[str, Any], Resonance.json_form]


@dataclass
class Crystal(JsonRecord):
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

    # with its review state and who reviewed it
    json_form = JsonForm(
        "CrystalJson",
        "id",
        "session_id",
        "insight",
        "confidence",
        "actionability",
        "domains",
        "status",
        "source_resonance_id",
        "source_locus_id",
        "supporting_evidence",
        "connects",
        "validated_by",
        "validation_notes",
        "review_state",
        "human_approved",
        "human_approved_at",
        "human_approved_by",
        "created_at",
    )


CrystalJson = Annotated[dict[str, Any], Crystal.json_form]


def review_fields(values: dict[str, Any]) -> dict[str, Any]:
    """The crystal fields a review log's JSON values (:meth:`Crystal.review_values`) stand for, to store again."""
    fields = {name: values.get(name) for name in REVIEW_FIELDS}
    if isinstance(fields["human_approved_at"], str):
        fields["human_approved_at"] = datetime.fromisoformat(fields["human_approved_at"])
    return fields


@dataclass
class Review(JsonRecord):
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

    json_form = JsonForm(
        "ReviewJson",
        "id",
        "crystal_id",
        "decision",
        "reviewer",
        "notes",
        "state_before",
        "state_after",
        "forced",
        "batch_id",
        "reverts",
        "revertible",
        "values_before",
        "values_after",
        "created_at",
    )


ReviewJson = Annotated[dict[str, Any], Review.json_form]


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
class BulkReview(JsonRecord):
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

    json_form = JsonForm("BulkReviewJson", "decision", "matched", "reviewed", "refused", "dry_run", "batch_id")


BulkReviewJson = Annotated[dict[str, Any], BulkReview.json_form]


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
class StepResult(JsonRecord):
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

    # as ``explorer wander step --json`` prints it (docs/wander.md, and more)
    json_form = JsonForm(
        "StepJson",
        "step_number",
        "from_locus",
        "to_locus",
        "trace",
        "residue",
        Computed("resonances_detected", list[Resonance], attrgetter("resonances")),
        "crystal",
        "failures",
        "status",
        "status_reason",
    )


StepJson = Annotated[dict[str, Any], StepResult.json_form]


@dataclass(frozen=True)
class RunResult(JsonRecord):
    """How far a run of steps got, why it stopped before the end if it did, and the steps that failed to dwell
    (the walk moved, but took nothing from where it went: a run whose every step did that did nothing).
    """

    steps_completed: int
    crystals_formed: int
    stopped_reason: str | None = None
    errors: tuple[str, ...] = ()  # each step that failed to dwell, with its failures: "step N: …dwelling failed: …"

    @property
    def dwellings_failed(self) -> int:
        """How many of the steps failed to dwell."""
        return len(self.errors)

    json_form = JsonForm(
        "RunJson", "steps_completed", "crystals_formed", "stopped_reason", "dwellings_failed", "errors"
    )


RunJson = Annotated[dict[str, Any], RunResult.json_form]


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
    retired: dict[str, Retired] = field(default_factory=dict)  # document id → why its note left the corpus


@dataclass(frozen=True)
class SearchHit(JsonRecord):
    """A locus, crystal or resonance found near a query by meaning, with its cosine."""

    type: Literal["locus", "crystal", "resonance"]
    id: str
    text: str
    score: float
    session_id: str | None = None

    # its score rounded to four digits
    json_form = JsonForm(
        "SearchHitJson", "type", "id", "text", Computed("score", float, lambda hit: round(hit.score, 4)), "session_id"
    )


SearchHitJson = Annotated[dict[str, Any], SearchHit.json_form]
