"""A job: a long run (a walk of many steps, a night of dreaming, an ingest) that a worker process carries out
for whoever asked (the app, the command line, the API, an agent), so it outlives the page or request that
started it and anyone can follow its progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from typing_extensions import TypedDict  # pydantic reads typing's own TypedDict only from Python 3.12


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
class Job:
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

    @property
    def worker_pid(self) -> int | None:
        """The process id of the worker that claimed the job (None before one did)."""
        parts = (self.worker or "").split(":")
        return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None

    @property
    def summary(self) -> str:
        """One line for lists and the app's job panel: the kind, its progress and what it is on now."""
        progress = f"{self.done}/{self.total}" if self.total else ""
        return " ".join(part for part in (self.kind, self.status.value, progress, self.current) if part)

    def to_json(self) -> JobJson:
        """The job as plain JSON values: what ``explorer jobs show --json``, the API and the MCP tools print."""
        return {
            "job_id": self.id,
            "kind": self.kind,
            "params": self.params,
            "status": self.status,
            "progress": {"done": self.done, "total": self.total, "current": self.current},
            "cancel_requested": self.cancel_requested,
            "result": self.result,
            "error": self.error,
            "created_at": self.created_at.isoformat(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


class JobProgressJson(TypedDict):
    """How far a job has got: items done of the total, and the one it is on."""

    done: int
    total: int
    current: str


class JobJson(TypedDict):
    """A job's JSON form (:meth:`Job.to_json`); ``result`` is its kind's report once it has succeeded."""

    job_id: str
    kind: str
    params: dict[str, Any]
    status: JobStatus  # a str: written as its value
    progress: JobProgressJson
    cancel_requested: bool
    result: dict[str, Any] | None
    error: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
