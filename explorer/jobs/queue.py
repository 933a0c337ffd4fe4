"""Where a database's jobs wait and who carries them out: a :class:`JobQueue`, chosen once per runtime by
:func:`queue_of`, the one place that asks which store the runtime is on.

Two queues keep the same promises: the file's (:class:`~explorer.jobs.file_queue.FileQueue`, its own ``jobs``
table and one worker started on demand) and PostgreSQL's (:class:`~explorer.jobs.shared_queue.SharedQueue`,
procrastinate in the same database, any number of workers started by hand). Both keep what the surfaces show in
the ``jobs`` table, run a job through :func:`explorer.jobs.worker.execute`, and judge a worker dead by its job's
heartbeat (sooner when its process is seen gone from this machine).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from explorer.jobs.file_queue import FileQueue
from explorer.records.jobs import Job
from explorer.runtime import Runtime
from explorer.store import Connection, Database


class JobQueue(Protocol):
    """What :mod:`explorer.jobs` asks of a queue."""

    def put(self, insert: Callable[[Connection], Job]) -> Job:
        """Write the job (``insert`` stores its row) and its entry in this queue in one transaction: neither
        exists without the other. The job as stored.
        """
        ...

    def wake(self) -> None:
        """Make sure a worker will carry out what was put (where workers are started on demand)."""
        ...

    def withdraw(self, con: Connection, job_id: str) -> None:
        """Take a cancelled job's entry back, in the transaction ``con`` that set its cancel flag."""
        ...

    def workers_alive(self) -> int | None:
        """How many workers take jobs now, or ``None`` where one is started on demand."""
        ...

    def end_the_dead(self) -> int:
        """End as failed the running jobs whose worker has died, saying so; how many. Run whenever jobs are read,
        so no job stays running for a dead worker.
        """
        ...

    def serve(self, open_runtime: Callable[[], Runtime], concurrency: int, idle_exit_s: float | None) -> int | None:
        """Be a worker until stopped (or idle for ``idle_exit_s``, where workers are started on demand): how many
        jobs it carried out, where it counts them.
        """
        ...


class _Chosen:
    """A runtime's queue once chosen, kept among the runtime's caches (one per runtime, dropped with it)."""

    def __init__(self) -> None:
        self.queue: JobQueue | None = None


def queue_of(runtime: Runtime) -> JobQueue:
    """The runtime's job queue: the file's on a database file, procrastinate's on a PostgreSQL store."""
    chosen = runtime.caches.of(_Chosen)
    if chosen.queue is None:
        if isinstance(runtime.db, Database):
            chosen.queue = FileQueue(runtime)
        else:
            from explorer.jobs.shared_queue import SharedQueue  # procrastinate comes with the postgres extra

            chosen.queue = SharedQueue(runtime)
    return chosen.queue
