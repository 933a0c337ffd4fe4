"""A job: a long run (a walk of many steps, a night of dreaming, an ingest) that a worker process carries out
for whoever asked (the app, the command line, the API, an agent), so it outlives the page or request that
started it and anyone can follow its progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from operator import attrgetter
from typing import Annotated, Any

from explorer.records.json_form import Computed, JsonForm, JsonRecord


class JobStatus(StrEnum):
    """Where a job stands: queued until a worker claims it, running until it ends one of three ways."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def ended(self) -> bool:
        """Whether the job is over: nothing more will change in it."""
        return self in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)


@dataclass(frozen=True)
class JobProgress(JsonRecord):
    """How far a job has got: the phase it is in ("embedding", "REM: dreaming"; empty before its run names one),
    the phase's items done of its total (0: not countable), and the one it is on.
    """

    done: int
    total: int
    current: str
    phase: str = ""

    json_form = JsonForm("JobProgressJson", "phase", "done", "total", "current")


def _iso(name: str) -> Computed:
    """A time that may not have come yet (None), as ISO 8601 text."""
    return Computed(name, str | None, lambda job: moment.isoformat() if (moment := getattr(job, name)) else None)


@dataclass(frozen=True)
class Job(JsonRecord):
    """One job as stored: what was asked (``kind``, ``params``), how far it got, and how it ended."""

    id: str
    kind: str
    params: dict[str, Any]
    status: JobStatus
    done: int
    total: int
    current: str
    result: dict[str, Any] | None
    error: str | None
    cancel_requested: bool
    worker: str | None  # "host:pid:start" of the process running it, to tell a dead worker from a busy one
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    phase: str = ""  # what the run does now, as its engine names it (see JobProgress)

    @property
    def worker_pid(self) -> int | None:
        """The process id of the worker that claimed the job (None before one did)."""
        parts = (self.worker or "").split(":")
        return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None

    @property
    def summary(self) -> str:
        """One line for lists and the app's job panel: the kind, its phase and progress and what it is on now."""
        progress = f"{self.done}/{self.total}" if self.total else ""
        return " ".join(part for part in (self.kind, self.status.value, self.phase, progress, self.current) if part)

    @property
    def progress(self) -> JobProgress:
        """How far it has got."""
        return JobProgress(self.done, self.total, self.current, self.phase)

    # what ``explorer jobs show --json``, the API and the MCP tools print; times as ISO 8601 text
    json_form = JsonForm(
        "JobJson",
        Computed("job_id", str, attrgetter("id")),
        "kind",
        "params",
        "status",
        "progress",
        "cancel_requested",
        "result",
        "error",
        "worker",
        Computed("created_at", str, lambda job: job.created_at.isoformat()),
        _iso("started_at"),
        _iso("finished_at"),
        note="``result`` is its kind's report once it has succeeded; ``worker`` the process that ran it, "
        "``host:pid:start``.",
    )


JobJson = Annotated[dict[str, Any], Job.json_form]
