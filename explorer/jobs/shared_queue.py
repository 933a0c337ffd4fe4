"""Jobs on a PostgreSQL store: queued on procrastinate in the same database and carried out by any number of
``explorer worker`` processes, on any machine that reaches the database.

Why procrastinate: it is a task queue kept in PostgreSQL itself (no broker to run), its workers take a job each
with ``FOR UPDATE SKIP LOCKED`` (so every job runs once however many workers wait), it aborts a running job on
request, and its workers send heartbeats, which name the candidates when a worker dies on any machine.

What stays in the product's ``jobs`` table: everything the surfaces show (status, progress, result, error, the
worker that ran it). procrastinate keeps no progress and no result; its job only names the product's job
(``job_id``), and one task (:data:`TASK`) carries out any kind of job by it, through the same
:func:`explorer.jobs.worker.execute` as the file's worker, so the Kind registry stays the one place kinds are
defined. The product's job and its queue entry are written in one transaction (:meth:`SharedQueue.put`): neither
exists without the other.

A worker killed outright (``kill -9``, a lost machine) stops writing its jobs' heartbeats; once a job has been
silent for :data:`STALLED_S` seconds, any other worker's :func:`recover_stalled` ends it: one it had not yet
begun goes back to the queue for another worker, one it had begun is failed with the reason. Not retried,
because a kind's run is not idempotent (a walk asked for 40 steps would take them again after the ones it took);
what was done before stands.

Why a database outage kills nobody: while the server is away nobody's heartbeat is written, the living
workers' too. So a worker judges others only after it has itself reached the database without a break for
:data:`STALLED_S`, never within :data:`STALLED_S` of the server's own start (a restart), and by the job's own
heartbeat, which its run's watch writes every :data:`~explorer.jobs.worker.HEARTBEAT_S` and writes again as soon
as the server is back. Should a living worker's job be failed all the same (a worker cut off from the database
for longer than that), its run passes a fence before each write (:func:`explorer.jobs.worker.execute`) and
stops at its next one: a job recorded as ended never writes again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from queue import Empty, SimpleQueue
from typing import cast

import procrastinate
from procrastinate import exceptions as queue_errors
from procrastinate.job_context import AbortReason, JobContext
from procrastinate.jobs import Status
from procrastinate.schema import SchemaManager

from explorer.jobs.worker import HEARTBEAT_S, STALLED_S, execute, fail_orphans, identity, silence
from explorer.records.jobs import Job, JobStatus
from explorer.runtime import Runtime
from explorer.store import Connection, StoreError
from explorer.store import jobs as jobs_store
from explorer.store.postgres import PgConnection, PostgresDatabase

TASK = "explorer.carry_out"  # the one task: carry out the product's job named by its id
_SCHEMA_LOCK = 0x45585051  # pg_advisory_xact_lock key for installing procrastinate's tables: "EXPQ"

log = logging.getLogger(__name__)


class JobFailed(Exception):
    """Raised to procrastinate when the product's job failed, so its own record says failed too."""


class Runtimes:
    """A runtime for each job a worker carries out at once: a cancel interrupts its runtime's gateway (every call
    in flight on it), which must not reach the calls of another job. Made on first need, then reused.
    """

    def __init__(self, first: Runtime, open_runtime: Callable[[], Runtime]):
        self.first = first
        self._open = open_runtime
        self._idle: SimpleQueue[Runtime] = SimpleQueue()
        self._idle.put(first)

    @contextmanager
    def borrow(self) -> Iterator[Runtime]:
        """An idle runtime for the block, given back after it."""
        try:
            runtime = self._idle.get_nowait()
        except Empty:
            runtime = self._open()
        try:
            yield runtime
        finally:
            self._idle.put(runtime)


def _carry_out(context: JobContext, job_id: str) -> None:
    """The task: claim the product's job and carry it out, its outcome stored as the file's worker stores it."""
    runtimes: Runtimes = context.additional_context["runtimes"]
    with runtimes.borrow() as runtime:
        with runtime.db.transaction() as con:
            job = jobs_store.claim(con, job_id, identity())
        if job is None:  # cancelled before a worker reached it, or ended by the recovery
            return
        status = execute(runtime, job, stopping=lambda: context.abort_reason() is AbortReason.SHUTDOWN)
        if status is JobStatus.SUCCEEDED:
            return
        with runtime.db.connect() as con:
            ended = jobs_store.get_job(con, job_id)
    error = ended.error if ended is not None else None
    if status is JobStatus.CANCELLED:
        raise queue_errors.JobAborted(error)
    raise JobFailed(error)


@functools.cache
def _app(url: str) -> procrastinate.App:
    """The procrastinate app of one database, with the task registered (one per database and process)."""
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    app.task(name=TASK, pass_context=True)(_carry_out)
    return app


_installed: set[str] = set()  # the databases whose queue tables this process has seen made


class SharedQueue:
    """The PostgreSQL store's :class:`~explorer.jobs.queue.JobQueue`: procrastinate's, in the same database."""

    def __init__(self, runtime: Runtime):
        store = runtime.db
        assert isinstance(store, PostgresDatabase), "procrastinate's queue lives in a PostgreSQL store"
        self.runtime = runtime
        self.store = store  # runtime.db, known to be PostgreSQL's
        self.app = _app(store.url)

    def install(self) -> None:
        """Create the queue's tables in the database unless they are there: the first process to queue a job or
        to serve creates them, so there is nothing for a user to run. Its own transaction (not a job's: the tables
        stay if that job is refused).
        """
        if self.store.url not in _installed:
            with self.store.transaction() as con:
                jobs_store.install_queue(con, SchemaManager.get_schema(), _SCHEMA_LOCK)
            _installed.add(self.store.url)

    def put(self, insert: Callable[[Connection], Job]) -> Job:
        """Store the job and queue it on procrastinate in the same transaction, the queue made ready first."""
        self.install()
        with self.store.transaction() as con:
            job = insert(con)
            queue_job_id = self.app.tasks[TASK].configure(connection=con.raw).defer(job_id=job.id)
            jobs_store.link_queue_job(con, job.id, queue_job_id)
        return job

    def wake(self) -> None:
        """Nothing: a PostgreSQL store's workers are started by whoever runs them (``explorer worker``), on any
        machine; :meth:`workers_alive` tells whether one waits.
        """

    def withdraw(self, con: Connection, job_id: str) -> None:
        """Withdraw a queued job from the queue, or ask its worker to abort a running one, in the transaction
        ``con`` that sets the product's cancel flag (which the run reads between items, as on the file).
        """
        queue_job_id = jobs_store.queue_job_of(con, job_id)
        if queue_job_id is not None:
            raw = cast(PgConnection, con).raw  # the transaction of this store, so a PostgreSQL one
            self.app.job_manager.cancel_job_by_id(queue_job_id, abort=True, connection=raw)

    def workers_alive(self) -> int:
        """How many workers take the database's jobs now, alive by their heartbeat: a job queued while none is
        alive waits until someone starts one.
        """
        with self.store.connect() as con:
            return jobs_store.live_queue_workers(con, STALLED_S)

    def end_the_dead(self) -> int:
        """End the jobs of workers seen gone from this machine at once. Silent ones are ended by the living
        workers (:func:`recover_stalled`), which alone can tell a dead worker from a server that was away.
        """
        return fail_orphans(self.runtime)

    def serve(self, open_runtime: Callable[[], Runtime], concurrency: int, idle_exit_s: float | None) -> None:
        """Carry out the database's queued jobs, ``concurrency`` at once, until SIGTERM or Ctrl-C (which fail the
        jobs under way, saying the worker was stopped); meanwhile end the jobs of workers that died. Its runtime
        is the first of those its jobs run in, ``open_runtime`` opens more when more jobs run at once. Never ends
        for being idle: others may queue jobs at any time, from any machine.
        """
        self.install()
        asyncio.run(_work(self.app, Runtimes(self.runtime, open_runtime), concurrency))


async def _work(app: procrastinate.App, runtimes: Runtimes, concurrency: int) -> None:
    async with app.open_async():
        recovering = asyncio.create_task(_recover_forever(app, runtimes.first))
        try:
            await app.run_worker_async(
                name=identity(),
                concurrency=concurrency,
                additional_context={"runtimes": runtimes},
                update_heartbeat_interval=HEARTBEAT_S,
                stalled_worker_timeout=STALLED_S,
                shutdown_graceful_timeout=0,  # asked to stop, a worker stops its jobs at their next item, as the file's
            )
        finally:
            recovering.cancel()


async def _recover_forever(app: procrastinate.App, runtime: Runtime) -> None:
    """Look for dead workers' jobs every :data:`HEARTBEAT_S`, judging only once this worker has itself reached
    the database without a break for :data:`STALLED_S` (see :func:`recover_stalled`).
    """
    healthy_since: float | None = None
    last_reached = 0.0
    while True:
        started = time.monotonic()
        try:
            if healthy_since is not None and started - last_reached > 2 * HEARTBEAT_S + 1:
                healthy_since = None  # a look that took long, or a loop held up: the database may have been away
            if healthy_since is not None and started - healthy_since >= STALLED_S:
                await recover_stalled(app, runtime)
            else:
                await asyncio.to_thread(_reach, runtime)
                if healthy_since is None:
                    healthy_since = started
            last_reached = time.monotonic()
        except (StoreError, queue_errors.ConnectorException) as exc:  # the database away a moment: look again later
            healthy_since = None
            log.warning("could not look for stalled jobs: %s", exc)
        await asyncio.sleep(HEARTBEAT_S)


def _reach(runtime: Runtime) -> None:
    with runtime.db.connect() as con:
        con.execute("SELECT 1")


_QUEUE_STATUS = {JobStatus.SUCCEEDED: Status.SUCCEEDED, JobStatus.CANCELLED: Status.ABORTED}


async def recover_stalled(app: procrastinate.App, runtime: Runtime) -> int:
    """End the jobs of workers silent for :data:`STALLED_S` seconds (see the module's note); how many.

    Procrastinate's worker heartbeat names the candidates; the job's own heartbeat (written by its run's watch,
    :func:`explorer.jobs.worker.execute`) decides: a job that beat lately has a living worker, whatever
    procrastinate's row says (after the server restarts, every worker's beat is late until it reconnects).
    """
    stalled = list(await app.job_manager.get_stalled_jobs(task_name=TASK, seconds_since_heartbeat=STALLED_S))
    ended = 0
    for entry in stalled:
        status = await asyncio.to_thread(_end_stalled, runtime, str(entry.task_kwargs["job_id"]))
        if status is JobStatus.RUNNING:  # it beats: its worker lives
            continue
        ended += 1
        try:
            if status is JobStatus.QUEUED:
                await app.job_manager.retry_job(entry)
            else:
                await app.job_manager.finish_job(entry, _QUEUE_STATUS.get(status, Status.FAILED), delete_job=False)
        except queue_errors.ConnectorException:  # another worker's recovery ended it first
            continue
    return ended


def _end_stalled(runtime: Runtime, job_id: str) -> JobStatus:
    """Fail the product's job if its worker had begun it and has been silent for :data:`STALLED_S`, unless the
    server itself started less than that ago; how it stands now (queued: never begun; running: it beats, or the
    server is new, so its worker may live; a job that is gone counts as failed).
    """
    with runtime.db.transaction() as con:
        job = jobs_store.get_job(con, job_id)
        if job is None or job.status is not JobStatus.RUNNING:
            return JobStatus.FAILED if job is None else job.status
        if not jobs_store.server_up_for(con, STALLED_S):
            return JobStatus.RUNNING
        if not jobs_store.fail_silent(con, job.id, STALLED_S, silence(job, STALLED_S)):
            return JobStatus.RUNNING
    return JobStatus.FAILED
