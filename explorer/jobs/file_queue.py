"""Jobs on a database file: they wait in its own ``jobs`` table, and its one worker process
(:mod:`explorer.jobs.worker`), started on demand, carries them out one at a time.
"""

from __future__ import annotations

from collections.abc import Callable

from explorer.jobs.worker import STALLED_S, end_silent, ensure_worker, fail_orphans, work
from explorer.records.jobs import Job
from explorer.runtime import Runtime
from explorer.store import Connection
from explorer.wander.errors import InvalidRequest


class FileQueue:
    """The file's :class:`~explorer.jobs.queue.JobQueue`: a job's row is its place in the queue."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime

    @property
    def silent_s(self) -> float:
        """How long a running job may go without a heartbeat before it is taken for dead. Longer than
        :data:`~explorer.jobs.worker.STALLED_S` by the file's lock wait: a living worker's heartbeat waits its turn
        at the file like any write, for as long as another process holds it.
        """
        return STALLED_S + self.runtime.db.lock_wait_s

    def put(self, insert: Callable[[Connection], Job]) -> Job:
        """Store the job; its row is all the queue holds."""
        with self.runtime.db.transaction() as con:
            return insert(con)

    def wake(self) -> None:
        """Start the file's worker unless one runs (it ends once idle for a minute)."""
        ensure_worker(self.runtime)

    def withdraw(self, con: Connection, job_id: str) -> None:
        """Nothing: the cancel flag is the file's whole cancel, read by the worker between items."""

    def workers_alive(self) -> int | None:
        """``None``: the file's worker is started on demand, so a job never waits for one to be started by hand."""
        return None

    def end_the_dead(self) -> int:
        """End the jobs of workers seen gone from this machine at once, and those silent for :attr:`silent_s`
        whatever their process says (a process frozen, a worker on another machine or in a container now gone).
        """
        return fail_orphans(self.runtime) + end_silent(self.runtime, self.silent_s)

    def serve(self, open_runtime: Callable[[], Runtime], concurrency: int, idle_exit_s: float | None) -> int:
        """Carry out queued jobs one at a time, unless another worker holds the file (then none): a file admits one
        writer, so more at once would mostly wait for it.
        """
        if concurrency != 1:
            raise InvalidRequest(
                f"a database file runs one job at a time (it admits one writer), not {concurrency}; "
                "use a PostgreSQL database for more"
            )
        self.end_the_dead()
        return work(self.runtime, idle_exit_s=idle_exit_s)
