"""The API's request and response bodies, typed, so the OpenAPI document says exactly what goes in and out.

Records the engine already prints (a session, a locus, a step, a crystal, a night: the shapes their
``json_form`` gives, ``explorer.records.wander``'s ``*Json``; a dreaming run's report) are answered in those
very shapes, so the CLI's ``--json``, the MCP tools and the API agree field for field; what only the API needs
is defined here. Request bodies refuse unknown fields, so a misspelt field is a 422, not a silently ignored wish.

Every text a request carries is one a store can hold and every number is a finite number of the schema's type
(``explorer/inputs.py``): a NUL, a lone surrogate, NaN, an infinity, a boolean or a text given for a number, or a
null where a field may only be left out (a number, a session's name or status), is a 422 naming the field. Query
parameters arrive as text, which FastAPI reads as their type; a float among them refuses NaN and the infinities
(``allow_inf_nan=False``).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

from explorer.inputs import NOT_NULL, NUMERIC, STORABLE, Text
from explorer.jobs.foreground import PER_REQUEST, in_one_request
from explorer.jobs.kinds import Budgeted, Consolidating, Dreaming
from explorer.records import SHORT_ID_DIGITS
from explorer.records.dreaming import DreamJson, DreamKind
from explorer.records.wander import (
    CrystalJson,
    FenceAction,
    LocusJson,
    ReviewDecision,
    ReviewState,
    RunResult,
    Session,
    SessionStatus,
    StepResult,
)
from explorer.text import NOT_BLANK
from explorer.wander.config import SESSION_LIMITS, STEPS_PER_RUN
from explorer.wander.service import SEARCH_TYPES, SearchKind

# The largest request body read (1 MiB): a request needs a few short texts (the longest field is 10,000 characters);
# a larger one is refused with 413 before it is read (by its Content-Length, or once that many bytes came in).
MAX_BODY_BYTES = 1024 * 1024
ProjectId = Annotated[
    Text | None, Query(description="Accepted for clients that send it, and ignored: a database is one project.")
]
Concept = Annotated[
    str, Field(min_length=1, max_length=2_000, pattern=NOT_BLANK, description="A concept, in words."), STORABLE
]
Domains = list[Text]
Note = Annotated[str, Field(max_length=10_000), STORABLE]
Reviewer = Annotated[str, Field(max_length=500, description="Who reviewed it."), STORABLE]


def session_number(name: str, meaning: str) -> Any:
    """A session's number, optional, with the engine's bounds in the schema (the engine checks them as well)."""
    bounds = SESSION_LIMITS[name]
    return Field(
        gt=bounds.low if bounds.open_low else None,
        ge=None if bounds.open_low else bounds.low,
        le=bounds.high,
        description=f"{meaning}: {bounds.rule}.",
    )


class Body(BaseModel):
    """A request body: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


# -- errors --------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    """What went wrong: a stable ``code`` to branch on and a ``message`` for a person."""

    code: str = Field(description="not_found, wrong_state, invalid_request, refused, conflict, unauthorized, ...")
    message: str


class ErrorBody(BaseModel):
    """Every error answer has this one shape."""

    error: ErrorDetail


# -- sessions --------------------------------------------------------------------------


class SessionNumbers(Body):
    """The numbers a person chooses for a session (docs/wander.md#sessions), each within the engine's bounds."""

    max_steps: Annotated[int | None, session_number("max_steps", "The walk ends after this many steps"), NUMERIC] = None
    cloud_budget_cents: Annotated[
        int | None, session_number("cloud_budget_cents", "Cloud budget in cents"), NUMERIC
    ] = None
    temperature: Annotated[
        float | None, session_number("temperature", "Softmax temperature of the next locus's choice"), NUMERIC
    ] = None
    max_drift_distance: Annotated[
        float | None, session_number("max_drift_distance", "How far from the seed the walk may drift"), NUMERIC
    ] = None
    human_checkpoint_frequency: Annotated[
        int | None, session_number("human_checkpoint_frequency", "Pause for review every N steps"), NUMERIC
    ] = None


class SessionCreate(SessionNumbers):
    """A new session; numbers left out take the engine's defaults (the cloud budget: the server's settings)."""

    seed_concept: Concept
    name: Annotated[str, Field(max_length=500), STORABLE] | None = None
    attractor: Annotated[str, Field(max_length=2_000), STORABLE] | None = Field(
        None, description="A concept that pulls the walk towards it."
    )
    allowed_domains: Domains | None = Field(None, description="Domains to stay in.")
    forbidden_domains: Domains | None = Field(None, description="Domains to avoid.")
    random_seed: Annotated[
        int | None,
        session_number("random_seed", "The same seed replays the same walk (default: a fresh one)"),
        NUMERIC,
    ] = None


class SessionUpdate(SessionNumbers):
    """What may change in a session; only the fields sent change, and ``null`` clears only the attractor and the
    domains. A new ``status`` moves the session as pause, resume and stop do.
    """

    # A session always has a name, numbers and a status: null for one of them is a mistake, not a wish (NOT_NULL).
    name: Annotated[str | None, Field(min_length=1, max_length=500, pattern=NOT_BLANK), NOT_NULL, STORABLE] = None
    attractor: Annotated[str, Field(max_length=2_000), STORABLE] | None = None
    allowed_domains: Domains | None = None
    forbidden_domains: Domains | None = None
    status: Annotated[SessionStatus | None, NOT_NULL] = None


class PauseRequest(Body):
    """Why a person pauses the walk (kept as the session's status reason)."""

    reason: Annotated[str, Field(max_length=2_000), STORABLE] | None = None


class ConsolidationBrief(BaseModel):
    """The session-complete trigger's run, when a request completed the session: its id, status and numbers,
    or ``status`` "failed" and the ``error`` (the walk stands either way).
    """

    status: str
    run_id: str | None = None
    patterns: int | None = None
    ladder_levels: int | None = None
    verification_score: float | None = None
    error: str | None = None


SessionAfter = Annotated[
    dict[str, Any],
    Session.json_form.extended(
        "SessionAfter",
        "A session after a change that may have completed it, with the consolidation that followed.",
        consolidation=NotRequired[ConsolidationBrief],
    ),
]
StepOut = Annotated[
    dict[str, Any],
    StepResult.json_form.extended(
        "StepOut",
        """What one step did (docs/wander.md#wander-control: step_number, from_locus, to_locus, residue,
    resonances_detected, and more).
    """,
        consolidation=NotRequired[ConsolidationBrief],
    ),
]


# -- wandering -------------------------------------------------------------------------


def beyond_one_request(what: str, count: int) -> ValueError:
    """Why a request for ``count`` steps or dreams is refused, and how to run them instead."""
    return ValueError(
        f'{count} {what} are more than the {PER_REQUEST} one request runs; send "background": true to run them as a job'
    )


# true or false only: 1 or "yes" is a 422, not a job nobody meant to queue
Background = Annotated[
    StrictBool, Field(description="Run as a job: answer 202 at once with the job, Location says where.")
]


class WanderRequest(Body):
    """Take up to ``n_steps`` steps: at most :data:`PER_REQUEST` in the request itself, as many as a run takes as a
    job.
    """

    model_config = ConfigDict(json_schema_extra=in_one_request("n_steps"))

    n_steps: Annotated[
        int,
        Field(
            ge=1,
            le=STEPS_PER_RUN,
            description=f"At most {PER_REQUEST} in the request itself; up to {STEPS_PER_RUN} as a job.",
        ),
        NUMERIC,
    ] = 10
    background: Background = False

    @model_validator(mode="after")
    def bounded(self) -> WanderRequest:
        """A request that would hold its connection for many steps is refused, naming the way to run them."""
        if not self.background and self.n_steps > PER_REQUEST:
            raise beyond_one_request("steps", self.n_steps)
        return self


WanderOut = Annotated[
    dict[str, Any],
    RunResult.json_form.extended(
        "WanderOut",
        """How far the walk got (docs/wander.md#wander-control: steps_completed, crystals_formed, stopped_reason),
    and the consolidation that followed when it completed the session.
    """,
        consolidation=NotRequired[ConsolidationBrief],
    ),
]


# -- interventions -----------------------------------------------------------------------


class InjectRequest(Body):
    """A concept to add as a locus; with ``force_visit`` the next step goes there."""

    concept: Concept
    force_visit: StrictBool = True


class InjectOut(BaseModel):
    """The locus the concept became (an existing one when the session knew the concept already)."""

    locus: LocusJson
    force_visit: bool


class FenceRequest(Body):
    """Widen the fence around a concept (include) or cut its surroundings out (exclude)."""

    concept: Concept
    action: FenceAction


class CrystallizeOut(BaseModel):
    """The crystal formed at the current locus, or why none was kept."""

    crystal: CrystalJson | None
    reason: str | None


class ReviewRequest(Body):
    """A person's verdict on a crystal; a decision stands unless ``force`` changes it."""

    decision: ReviewDecision
    notes: Note | None = Field(None, description="Why; kept as the crystal's validation notes.")
    reviewer: Reviewer | None = None
    force: StrictBool = False


class BulkReviewRequest(ReviewRequest):
    """One verdict on every crystal a filter takes (default: every one awaiting review); ``dry_run`` only counts.
    A crystal whose earlier decision it would overturn is counted as refused unless ``force``.
    """

    session_id: Annotated[str, Field(min_length=SHORT_ID_DIGITS, max_length=36), STORABLE] | None = Field(
        None, description="Only this session's crystals: its id, or the short id the app shows (its first digits)."
    )
    min_confidence: Annotated[float | None, Field(ge=0, le=1), NUMERIC] = None
    max_confidence: Annotated[float | None, Field(ge=0, le=1), NUMERIC] = None
    states: list[ReviewState] = Field([ReviewState.PENDING], min_length=1, description="Only crystals in these states.")
    dry_run: StrictBool = False


class RevertRequest(Body):
    """Put a crystal back as it was before a review; ``force`` even if it was reviewed again since."""

    notes: Note | None = Field(None, description="Why it is reverted (kept in the log).")
    reviewer: Reviewer | None = Field(None, description="Who reverted it.")
    force: StrictBool = False


class SearchRequest(Body):
    """Loci, crystals and resonances nearest in meaning to ``query``."""

    query: Annotated[str, Field(min_length=1, max_length=2_000, pattern=NOT_BLANK), STORABLE]
    types: list[SearchKind] = Field(list(SEARCH_TYPES), min_length=1, description="What to search.")
    limit: Annotated[int, Field(ge=1, le=1_000), NUMERIC] = 10


# -- dreaming and consolidation ---------------------------------------------------------------


# A job kind's numbers as a request carries them: the kind's bounds and default (its field), the API's types.
BudgetCents = Annotated[float | None, Budgeted.model_fields["budget_cents"], NUMERIC]


class DreamRun(Dreaming):
    """A dreaming run (the fields a mechanism does not use are ignored by it): at most :data:`PER_REQUEST` dreams
    in the request itself, as many as a run takes as a job.
    """

    model_config = ConfigDict(json_schema_extra=in_one_request("dreams"))

    dreams: Annotated[int, Dreaming.model_fields["dreams"], NUMERIC] = Dreaming.model_fields["dreams"].default
    seed: Annotated[int | None, Dreaming.model_fields["seed"], NUMERIC] = None
    year: Annotated[int | None, Dreaming.model_fields["year"], NUMERIC] = None
    result_threshold: Annotated[float | None, Dreaming.model_fields["result_threshold"], NUMERIC] = None
    budget_cents: BudgetCents = None
    background: Background = False

    @model_validator(mode="after")
    def bounded(self) -> DreamRun:
        """As for a walk: many dreams are a job, not one long request."""
        if not self.background and self.dreams > PER_REQUEST:
            raise beyond_one_request("dreams", self.dreams)
        return self


# A dream as every surface shows it (``explorer dream show --json``), and the filters of the list of dreams.
DreamOut = DreamJson
DreamKindQuery = Annotated[
    DreamKind | None,
    Query(description="Only dreams of this kind: rem (the REM cycle's), exploration (links found), fusion (merged)."),
]


class ConsolidationRun(Consolidating):
    """Consolidate the experiences of a source now; ``background`` runs it as a job."""

    budget_cents: BudgetCents = None
    background: Background = False


class ConsolidationReport(BaseModel):
    """A consolidation run as stored (``explorer consolidate run --json``); ``status`` not_due or skipped: nothing
    was stored, ``reason`` says why. The nested parts are as the CLI prints them.
    """

    model_config = ConfigDict(extra="allow")

    run_id: str | None
    source: str
    trigger: str
    reason: str
    status: str
    experiences: int
    patterns: list[dict[str, Any]]
    ladder_levels: int
    verification: dict[str, Any] | None
    spent_cents: float
    budget_exhausted: bool


class PatternHit(BaseModel):
    """A pattern that applies to the situation, and how well (similarity to its description)."""

    id: str
    name: str
    description: str
    score: float
    conditions: list[str]
    actions: list[str]
    status: str | None


class Abstraction(BaseModel):
    """An abstraction above the patterns found, most general last."""

    id: str
    level: int
    name: str
    statement: str


class KnowledgeOut(BaseModel):
    """The newest run's patterns for a situation, and the abstractions above them."""

    run_id: str
    patterns: list[PatternHit]
    abstractions: list[Abstraction]
