"""What a job can be: each kind's parameters (checked when the job is asked for, not when a worker reaches it)
and the engine call that carries it out, returning the report its command prints with ``--json``.

A runner gets the worker's runtime, the checked parameters and a progress callback; it calls the same engine
functions as the command line, so a job does exactly what the command does in the foreground.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from explorer import demo
from explorer.consolidation import service as consolidation
from explorer.dreaming import service as dreaming
from explorer.dreaming.exploration import ExplorationConfig
from explorer.projection import place_new, update_projection
from explorer.providers.budget import Budget
from explorer.reading.ingest import ingest_paths
from explorer.reading.loaders import DEFAULT_MAX_MB
from explorer.records import Progress
from explorer.runtime import Runtime
from explorer.wander import service as wander
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
    steps: int = Field(10, ge=1, le=10_000)


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

    source: Literal["wander", "dreams", "imported", "all"] = "all"
    trigger: Literal["manual", "session-complete", "periodic", "threshold"] = "manual"


class Ingest(Budgeted):
    """``ingest``: read files or folders (paths as the worker's machine sees them)."""

    paths: list[str] = Field(min_length=1, max_length=10_000)
    domain: str | None = Field(None, max_length=200)
    year: int | None = Field(None, ge=1, le=2999)
    max_mb: float = Field(DEFAULT_MAX_MB, ge=0)
    fit_map: bool = False  # fit the map if it was never fitted (the app's first documents); else only place


class DemoPrepare(Params):
    """``demo``: whatever of the demo is missing (it has no parameters)."""


def _wander_run(runtime: Runtime, p: WanderRun, progress: Progress) -> dict[str, Any]:
    result: dict[str, Any] = {**wander.run(runtime, p.session_id, p.steps, progress=progress).to_json()}
    brief = consolidation.after_session_brief(runtime, wander.get_session(runtime, p.session_id).status)
    return result if brief is None else {**result, "consolidation": brief}


def _ingest(runtime: Runtime, p: Ingest, progress: Progress) -> dict[str, Any]:
    report = ingest_paths(
        runtime, p.paths, domain=p.domain, year=p.year, max_mb=p.max_mb, progress=progress, budget=p.budget()
    )
    if p.fit_map:
        placed = update_projection(runtime)
        return {**report.to_json(), "map": {"fitted": placed.fitted, "placed": placed.placed}}
    if report.documents_added:
        place_new(runtime)  # as `explorer ingest` does: new nodes join the fitted map
    return report.to_json()


def _check_wander_run(runtime: Runtime, p: WanderRun) -> None:
    require_active(wander.get_session(runtime, p.session_id))


@dataclass(frozen=True)
class Kind:
    """One kind of job: its parameters, the run, and a check of the database made when it is asked for."""

    params: type[Params]
    run: Callable[[Runtime, Any, Progress], dict[str, Any]]
    check: Callable[[Runtime, Any], None] | None = None


KINDS: dict[str, Kind] = {
    "wander.run": Kind(WanderRun, _wander_run, _check_wander_run),
    "dream.rem": Kind(
        Dreaming,
        lambda rt, p, progress: dreaming.run_rem(
            rt,
            dreams=p.dreams,
            current_year=p.year,
            seed=p.seed,
            progress=progress,
            budget=p.budget(),
            as_of=p.moment(),
        ).to_json(),
    ),
    "dream.explore": Kind(
        Dreaming,
        lambda rt, p, progress: dreaming.run_exploration(
            rt, seed=p.seed, progress=progress, config=p.exploration(), budget=p.budget(), as_of=p.moment()
        ).to_json(),
    ),
    "dream.fuse": Kind(
        Dreaming,
        lambda rt, p, progress: dreaming.run_fusion(
            rt, progress=progress, budget=p.budget(), as_of=p.moment()
        ).to_json(),
    ),
    "dream.cycle": Kind(
        Dreaming,
        lambda rt, p, progress: dreaming.run_cycle(
            rt, dreams=p.dreams, seed=p.seed, progress=progress, budget=p.budget(), as_of=p.moment()
        ).to_json(),
    ),
    "consolidate.run": Kind(
        Consolidating,
        lambda rt, p, progress: consolidation.run_consolidation(
            rt, p.source, p.trigger, budget=p.budget(), progress=progress
        ).to_json(),
    ),
    "ingest": Kind(Ingest, _ingest),
    demo.JOB_KIND: Kind(DemoPrepare, lambda rt, p, progress: demo.prepare(rt, progress=progress)),
}
