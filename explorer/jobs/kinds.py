"""What a job can be: each kind's parameters (checked when the job is asked for, not when a worker reaches it)
and the engine call that carries it out, returning a report that knows its ``--json`` form.

This is the one path from a surface's parameters to the engine: a worker carrying out a queued job, the API,
the MCP tools and the command line in the foreground all validate a kind's parameters with its model and call
its engine function, so a run does exactly the same whichever way it was asked for, and a parameter added to
a kind here works everywhere at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from explorer import demo
from explorer.consolidation import service as consolidation
from explorer.consolidation.schedule import Trigger
from explorer.dreaming import service as dreaming
from explorer.dreaming.exploration import ExplorationConfig
from explorer.errors import ExplorerError
from explorer.projection import ProjectionReport, place_new, update_projection
from explorer.providers.budget import Budget
from explorer.reading.ingest import Enrich, IngestReport, ingest_paths
from explorer.reading.loaders import DEFAULT_MAX_MB
from explorer.records import Progress, begin
from explorer.records.wander import RunResult
from explorer.runtime import Runtime
from explorer.wander import service as wander
from explorer.wander.config import STEPS_PER_RUN
from explorer.wander.errors import InvalidRequest
from explorer.wander.guards import require_active

SEED_MAX = 2**32 - 1  # what numpy's generators take, as `dream --seed` does


class Params(BaseModel):
    """Parameters of a job: unknown fields are refused, so a typo is an error, not a default."""

    model_config = ConfigDict(extra="forbid")


class Budgeted(Params):
    """A run that may call priced models: its budget in cents (default: the settings')."""

    budget_cents: float | None = Field(None, ge=0, le=10_000_000)

    def budget(self) -> Budget | None:
        """The run's budget; ``None`` leaves the engine to the settings' default."""
        return None if self.budget_cents is None else Budget(self.budget_cents)


class WanderRun(Params):
    """``wander run``: up to ``steps`` steps of an active session."""

    session_id: str = Field(min_length=1)
    steps: int = Field(10, ge=1, le=STEPS_PER_RUN)


class Dreaming(Budgeted):
    """A dreaming run (``dream rem|explore|fuse|cycle``); fields a mechanism does not use are ignored by it."""

    dreams: int = Field(10, ge=1, le=10_000)
    seed: int | None = Field(None, ge=0, le=SEED_MAX)
    as_of: datetime | None = None
    year: int | None = Field(None, ge=1, le=2999)  # REM's current year (default: the latest in the corpus)
    result_threshold: float | None = Field(None, ge=0.0, le=1.0)  # exploration's (default: its config's)

    def moment(self) -> datetime | None:
        """``as_of`` in UTC (a date without a zone is taken as UTC, as on the command line)."""
        at = self.as_of
        return at.replace(tzinfo=UTC) if at is not None and at.tzinfo is None else at

    def exploration(self) -> ExplorationConfig:
        """Exploration's configuration, with ``result_threshold`` when one was given."""
        if self.result_threshold is None:
            return ExplorationConfig()
        return ExplorationConfig(result_threshold=self.result_threshold)


class Consolidating(Budgeted):
    """``consolidate run``: consolidate the experiences of a source now."""

    source: consolidation.Source = "all"
    trigger: Trigger = "manual"


class Ingest(Budgeted):
    """``ingest``: read files or folders (paths as the worker's machine sees them), and with ``retry_failed``
    ask again for the steps earlier ingests left pending; one of the two at least.
    """

    paths: list[str] = Field(default_factory=list, max_length=10_000)
    domain: str | None = Field(None, max_length=200)
    year: int | None = Field(None, ge=1, le=2999)
    max_mb: float = Field(DEFAULT_MAX_MB, ge=0)
    fit_map: bool = False  # fit the map if it was never fitted (the app's first documents); else only place
    retry_failed: bool = False
    enrich: Enrich = "auto"

    @model_validator(mode="after")
    def _something_to_do(self) -> Ingest:
        if not self.paths and not self.retry_failed:
            raise ValueError("give paths to read, or retry_failed")
        return self


class DemoPrepare(Params):
    """``demo``: whatever of the demo is missing (it has no parameters)."""


class Report(Protocol):
    """What a kind's engine call returns: it knows its own ``--json`` form, which is also the job's result."""

    def to_json(self) -> Mapping[str, Any]:
        """The report as plain JSON values (ids, counts, texts)."""
        ...


@dataclass(frozen=True)
class WalkReport:
    """``wander.run``'s report: the steps taken and, when they completed the session, its consolidation (or why
    that failed: the walk stands whatever happens to its consolidation, so the failure is reported, not raised).
    """

    walk: RunResult
    consolidation: consolidation.RunReport | None = None
    consolidation_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The walk's JSON, with the consolidation's brief under ``"consolidation"`` when the session completed."""
        result: dict[str, Any] = {**self.walk.to_json()}
        if self.consolidation is not None:
            result["consolidation"] = self.consolidation.brief()
        elif self.consolidation_error is not None:
            result["consolidation"] = {"status": "failed", "error": self.consolidation_error}
        return result


@dataclass(frozen=True)
class ReadingReport:
    """``ingest``'s report: what was read and, when the job was asked to fit the map, what the fit did."""

    reading: IngestReport
    map: ProjectionReport | None = None

    def to_json(self) -> dict[str, Any]:
        """The ingest report's JSON, with the map's fitted and placed counts under ``"map"`` after a fit."""
        if self.map is None:
            return self.reading.to_json()
        return {**self.reading.to_json(), "map": {"fitted": self.map.fitted, "placed": self.map.placed}}


@dataclass(frozen=True)
class DemoReport:
    """``demo.prepare``'s report: the demo session's id and the seconds the preparation took."""

    prepared: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """What :func:`explorer.demo.prepare` returned."""
        return self.prepared


def _wander_run(runtime: Runtime, p: WanderRun, progress: Progress) -> WalkReport:
    walked = wander.run(runtime, p.session_id, p.steps, progress=progress)
    status = wander.get_session(runtime, p.session_id).status
    try:
        return WalkReport(walked, consolidation.after_session(runtime, status))
    except ExplorerError as exc:
        return WalkReport(walked, consolidation_error=str(exc))


def _check_wander_run(runtime: Runtime, p: WanderRun) -> None:
    require_active(wander.get_session(runtime, p.session_id))


def _ingest(runtime: Runtime, p: Ingest, progress: Progress) -> ReadingReport:
    read = ingest_paths(
        runtime,
        p.paths,
        domain=p.domain,
        year=p.year,
        max_mb=p.max_mb,
        progress=progress,
        budget=p.budget(),
        retry_failed=p.retry_failed,
        enrich=p.enrich,
    )
    if p.fit_map:
        return ReadingReport(read, update_projection(runtime, progress=progress))
    if read.chunks_added or read.syntheses_added or read.entity_insights_added:
        begin(progress, "placing new points on the map")
        place_new(runtime)  # new nodes join a fitted map where their neighbours are (cheap; never fits)
    return ReadingReport(read)


P = TypeVar("P", bound=Params)
R_co = TypeVar("R_co", bound=Report, covariant=True)


@dataclass(frozen=True)
class Kind(Generic[P, R_co]):
    """One kind of job: its name, its parameters, the engine call, and a check of the database made when the
    job is asked for (before it is queued).
    """

    name: str
    label: str  # what people read: "walk", not "wander.run"
    params: type[P]
    call: Callable[[Runtime, P, Progress], R_co]
    check: Callable[[Runtime, P], None] | None = None

    def checked(self, runtime: Runtime, values: Mapping[str, Any]) -> P:
        """The parameters as the kind's model reads them (a value it refuses is an :class:`InvalidRequest`
        naming it), having checked what the kind needs of the database too.
        """
        try:
            params = self.params.model_validate(values)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "parameters"
            raise InvalidRequest(f"job {self.name}: {where}: {problem['msg']}") from exc
        if self.check is not None:
            self.check(runtime, params)
        return params

    def run(self, runtime: Runtime, params: P, progress: Progress) -> dict[str, Any]:
        """Carry out checked parameters; the report's JSON, which is the job's stored result."""
        return dict(self.call(runtime, params, progress).to_json())

    def report(self, runtime: Runtime, values: Mapping[str, Any], progress: Progress) -> R_co:
        """Carry the kind out in this process from a surface's values (``None`` leaves a parameter to its
        default), checked as a queued job's are: what a command does in the foreground.
        """
        params = self.checked(runtime, {k: v for k, v in values.items() if v is not None})
        return self.call(runtime, params, progress)


WANDER_RUN = Kind("wander.run", "walk", WanderRun, _wander_run, _check_wander_run)
DREAM_REM = Kind(
    "dream.rem",
    "REM dreams",
    Dreaming,
    lambda rt, p, progress: dreaming.run_rem(
        rt, dreams=p.dreams, current_year=p.year, seed=p.seed, progress=progress, budget=p.budget(), as_of=p.moment()
    ),
)
DREAM_EXPLORE = Kind(
    "dream.explore",
    "exploration",
    Dreaming,
    lambda rt, p, progress: dreaming.run_exploration(
        rt, seed=p.seed, progress=progress, config=p.exploration(), budget=p.budget(), as_of=p.moment()
    ),
)
DREAM_FUSE = Kind(
    "dream.fuse",
    "memory fusion",
    Dreaming,
    lambda rt, p, progress: dreaming.run_fusion(rt, progress=progress, budget=p.budget(), as_of=p.moment()),
)
DREAM_CYCLE = Kind(
    "dream.cycle",
    "dream cycle",
    Dreaming,
    lambda rt, p, progress: dreaming.run_cycle(
        rt, dreams=p.dreams, seed=p.seed, progress=progress, budget=p.budget(), as_of=p.moment()
    ),
)
CONSOLIDATE_RUN = Kind(
    "consolidate.run",
    "consolidation",
    Consolidating,
    lambda rt, p, progress: consolidation.run_consolidation(
        rt, p.source, p.trigger, budget=p.budget(), progress=progress
    ),
)
INGEST = Kind("ingest", "reading", Ingest, _ingest)
DEMO_PREPARE = Kind(
    demo.JOB_KIND, "the demo", DemoPrepare, lambda rt, p, progress: DemoReport(demo.prepare(rt, progress=progress))
)

KINDS: dict[str, Kind[Any, Report]] = {
    kind.name: kind
    for kind in (
        WANDER_RUN,
        DREAM_REM,
        DREAM_EXPLORE,
        DREAM_FUSE,
        DREAM_CYCLE,
        CONSOLIDATE_RUN,
        INGEST,
        DEMO_PREPARE,
    )
}


def label_of(name: str) -> str:
    """What people read for a job's kind: "walk" for ``wander.run`` (the name itself for a kind not ours)."""
    kind = KINDS.get(name)
    return kind.label if kind else name
