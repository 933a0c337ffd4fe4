"""Background jobs: long runs carried out by a worker process, followed and cancelled by anyone.

Every surface asks for a job the same way (:func:`submit`), reads it (:func:`get`, :func:`list_jobs`) and
cancels it (:func:`cancel`); :mod:`explorer.jobs.worker` carries it out and :mod:`explorer.jobs.kinds` says
what each kind of job runs. A surface asked to run in the foreground carries the kind out itself (:func:`run`),
so both ways do the same. Reading jobs first ends those whose worker died, so none stays running forever.

Where jobs wait is the runtime's :class:`~explorer.jobs.queue.JobQueue`, chosen once (:func:`queue_of`): the
file's own ``jobs`` table for its one worker (:mod:`explorer.jobs.file_queue`), or on a PostgreSQL store
procrastinate in the same database for any number of workers (:mod:`explorer.jobs.shared_queue`). Nothing here asks
which: the surfaces cannot tell the difference, as both keep what they show in the ``jobs`` table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.errors import ExplorerError, Remedy
from explorer.jobs.kinds import KINDS, Kind, Params
from explorer.jobs.queue import JobQueue, queue_of
from explorer.records import Progress, new_id, unheard
from explorer.records.jobs import Job, JobStatus
from explorer.runtime import Runtime
from explorer.store import jobs as jobs_store
from explorer.wander.errors import InvalidRequest

__all__ = [
    "KINDS",
    "Job",
    "JobNotFound",
    "JobQueue",
    "JobStateError",
    "JobStatus",
    "cancel",
    "get",
    "list_jobs",
    "queue_of",
    "run",
    "serve",
    "submit",
    "workers_alive",
]


class JobNotFound(ExplorerError):
    """A job id that names no job."""

    def __init__(self, job_id: str):
        super().__init__(f"no job {job_id!r}", remedy=Remedy.LIST_JOBS, subject=job_id)


class JobStateError(ExplorerError):
    """An operation the job's status does not allow (cancelling a job that has ended)."""


def workers_alive(runtime: Runtime) -> int | None:
    """How many workers take the database's jobs now (alive by their heartbeat); ``None`` on a file, whose worker
    is started on demand. A job queued while none is alive waits until someone starts one.
    """
    return queue_of(runtime).workers_alive()


def _checked(runtime: Runtime, kind: str, params: dict[str, Any] | None) -> tuple[Kind, Params]:
    """The kind and its checked parameters, having checked what it needs of the database too."""
    spec = KINDS.get(kind)
    if spec is None:
        raise InvalidRequest(f"no kind of job {kind!r}; the kinds are {', '.join(KINDS)}")
    return spec, spec.checked(runtime, params or {})


def submit(runtime: Runtime, kind: str, params: dict[str, Any] | None = None, *, start_worker: bool = True) -> Job:
    """Queue a job of ``kind`` (a key of :data:`KINDS`) and, with ``start_worker``, make sure a worker will carry
    it out where workers start on demand (the file's; a PostgreSQL store's are started by whoever runs them,
    ``explorer worker``, on any machine).

    The parameters are checked now, and so is what the job needs of the database (a walk needs an active
    session), so a job that cannot run is refused here rather than failing later where nobody looks.
    """
    _, checked = _checked(runtime, kind, params)
    queue = queue_of(runtime)
    job = queue.put(lambda con: jobs_store.insert_job(con, new_id(), kind, checked.model_dump(mode="json")))
    if start_worker:
        queue.wake()
    return job


def run(
    runtime: Runtime, kind: str, params: dict[str, Any] | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """Carry out a job's ``kind`` in this process, now, and return its result: what a surface does when asked to
    run in the foreground. The same checks and the same runner as a queued job, so a run does the same whichever
    way it was asked for.
    """
    spec, checked = _checked(runtime, kind, params)
    return spec.run(runtime, checked, progress or unheard)


def get(runtime: Runtime, job_id: str) -> Job:
    """The job as it stands now."""
    with runtime.db.connect() as con:
        queue_of(runtime).end_the_dead()
        job = jobs_store.get_job(con, job_id)
    if job is None:
        raise JobNotFound(job_id)
    return job


def list_jobs(
    runtime: Runtime, status: str | None = None, limit: int = 50, offset: int = 0, kind: str | None = None
) -> list[Job]:
    """Jobs, newest first; ``status`` narrows them to one status, or ``"active"`` to queued and running ones, and
    ``kind`` to one kind.
    """
    if status == "active":
        statuses: tuple[str, ...] = (JobStatus.QUEUED, JobStatus.RUNNING)
    elif status is None:
        statuses = ()
    elif status in JobStatus.__members__.values():
        statuses = (status,)
    else:
        raise InvalidRequest(f"no job status {status!r}; say active, or one of {', '.join(JobStatus)}")
    if limit < 0 or offset < 0:
        raise InvalidRequest("limit and offset must not be negative")
    with runtime.db.connect() as con:
        queue_of(runtime).end_the_dead()
        return jobs_store.list_jobs(con, statuses, limit, offset, kind)


def cancel(runtime: Runtime, job_id: str) -> Job:
    """Cancel a job: a queued one at once, a running one between two of its items (what it finished stands)."""
    job = get(runtime, job_id)
    job_id = job.id  # the full id, when a short one was given
    if job.status.ended:
        raise JobStateError(f"job {job_id} has already ended ({job.status})", subject=job_id)
    with runtime.db.transaction() as con:
        jobs_store.request_cancel(con, job_id)
        queue_of(runtime).withdraw(con, job_id)
        changed = jobs_store.get_job(con, job_id)
    assert changed is not None
    return changed


def serve(open_runtime: Callable[[], Runtime], concurrency: int = 1, idle_exit_s: float | None = None) -> int | None:
    """Be a worker: carry out queued jobs until stopped. On a PostgreSQL store, ``concurrency`` at once, beside
    any other workers; on the file, one at a time and only if no other worker holds it (how many it carried out,
    ending once idle for ``idle_exit_s``). ``open_runtime`` opens a runtime on the database (one per job running
    at once).
    """
    runtime = open_runtime()
    return queue_of(runtime).serve(open_runtime, concurrency, idle_exit_s)
