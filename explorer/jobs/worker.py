"""The worker: a process of its own that claims queued jobs and carries them out, one at a time.

Why a process, not a thread of the surface: a run started from an app page died with the page's script when the
person left or refreshed it, and nobody else could follow it. A worker outlives whoever asked; it keeps its
transactions short (claim, progress between items, end), so the app and the command line stay responsive while
it works, and the engine's runs already read, think and write in short units of work.

Why one worker per database by default: DuckDB admits one writing process at a time, so a second worker would
mostly wait for the file. Claiming is one atomic update, so several workers (a pool) would still never take the
same job; only the automatic start (:func:`ensure_worker`) keeps to one, through a lock file the OS releases when
the worker dies, however it dies.
"""

from __future__ import annotations

import fcntl
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from explorer.errors import ExplorerError
from explorer.jobs.kinds import KINDS
from explorer.providers.deadline import CallCancelled
from explorer.records import Progress
from explorer.records.jobs import Job, JobStatus
from explorer.runtime import Runtime
from explorer.store import DatabaseBusy, StoreError
from explorer.store import jobs as jobs_store
from explorer.store.database import Connection, DatabaseUnavailable, Fence
from explorer.store.leases import identity, is_alive

PROGRESS_EVERY_S = 0.5  # progress is written at most this often, and the cancel flag read this often
HEARTBEAT_S = 2.0  # how often a running job's worker writes that it lives (every queue's judge of death)
STALLED_S = 10.0  # a job silent this long is its worker's death (bound: this + 2 HEARTBEAT_S, and see end_silent)
POLL_S = 1.0  # how often an idle worker looks for queued jobs
IDLE_EXIT_S = 60.0  # a worker started on demand ends after this long with nothing to do
# How much a worker lowers its CPU priority (`jobs worker --nice`): its runs are background work, and on two cores a
# worker embedding a batch on both starved the app's first page (8.6 s to draw instead of 3.5).
NICENESS = 10


class JobCancelled(BaseException):
    """Raised through the engine's run from its progress callback when someone cancelled the job. A
    BaseException, so the per-item isolation of the engine (``except Exception``) does not count it as one
    item's failure and go on.
    """


class JobEnded(BaseException):
    """Raised through a run when its job was ended elsewhere meanwhile (failed by a worker that took this one for
    dead, say): what it was ended as. A BaseException, as :class:`JobCancelled` is.
    """


class WorkerStopped(BaseException):
    """The worker process was asked to stop (SIGTERM) in the middle of a job."""


def fail_orphans(runtime: Runtime) -> int:
    """End every running job whose worker process is seen gone from this machine (killed, crashed, the machine
    restarted) as failed, saying so; how many. A proof of death, never of life: a process by its id and start time,
    so a reused id is not taken for it; a worker seen running, or on another machine, is judged by its job's
    heartbeat (:func:`end_silent`, :mod:`explorer.jobs.shared_queue`). Called whenever jobs are read, so a killed
    worker's job shows failed at once rather than after the silence.
    """
    with runtime.db.connect() as con:  # a read; the write only when a worker has died (nests in a caller's)
        orphans = {
            job.id: f"the worker process ({job.worker_pid or 'unknown'}) ended without finishing the job "
            "(killed or crashed)"
            for job in jobs_store.list_jobs(con, (JobStatus.RUNNING,), limit=10_000)
            if not is_alive(job.worker or "")
        }
        if orphans:
            with runtime.db.transaction() as tx:
                jobs_store.fail_orphans(tx, orphans)
    return len(orphans)


def silence(job: Job, silent_s: float) -> str:
    """Why a job whose worker stopped writing its heartbeat was failed (the same words on every queue)."""
    return (
        f"the worker {job.worker} stopped answering (no heartbeat for {silent_s:.0f} s: killed, crashed or cut "
        "off) before finishing the job; what was done before stands"
    )


def end_silent(runtime: Runtime, silent_s: float) -> int:
    """End every running job whose worker has written no heartbeat for ``silent_s`` seconds as failed, whatever
    its process id says (a process frozen, a worker on a machine or in a container that is gone); how many. For a
    judge that trusts its view of the heartbeats: the file's readers and worker (a PostgreSQL server's restart
    silences every worker at once, so its judges are guarded, see :mod:`explorer.jobs.shared_queue`).
    """
    with runtime.db.connect() as con:  # a read; the write only when a job is silent (nests in a caller's)
        silent = jobs_store.silent_jobs(con, silent_s)
        if not silent:
            return 0
        with runtime.db.transaction() as tx:
            return sum(jobs_store.fail_silent(tx, job.id, silent_s, silence(job, silent_s)) for job in silent)


def _lock_path(runtime: Runtime) -> Path:
    return Path(f"{runtime.db.path.resolve()}.worker.lock")


@contextmanager
def _worker_lock(runtime: Runtime) -> Iterator[bool]:
    """Hold the database's worker lock while the block runs; whether it was free."""
    handle: IO[str] = open(_lock_path(runtime), "a")  # noqa: SIM115 - held for the whole block
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        handle.close()  # closing releases the lock (and so does the process ending, however it ends)


def worker_running(runtime: Runtime) -> bool:
    """Whether a worker holds this database's lock now."""
    with _worker_lock(runtime) as free:
        return not free


def ensure_worker(runtime: Runtime) -> None:
    """Start a worker for this database in the background unless one runs; it ends once idle for a minute."""
    if worker_running(runtime):
        return
    log = open(Path(f"{runtime.db.path.resolve()}.worker.log"), "ab")  # noqa: SIM115 - handed to the child
    with log:
        child = subprocess.Popen(
            [sys.executable, "-m", "explorer", "jobs", "worker", "--db", str(runtime.db.path), "--idle-exit",
             str(IDLE_EXIT_S)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not the asking process's child in spirit: Ctrl-C there must not stop it
        )  # fmt: skip
    # reaped the moment it ends: `explorer demo` waits on the app for hours, and a worker it started must not stay
    # a zombie under it meanwhile
    threading.Thread(target=child.wait, name="reap-worker", daemon=True).start()


def _progress(runtime: Runtime, job: Job, stopping: Callable[[], bool], row: threading.Lock) -> Progress:
    """The progress callback a job's run gets: writes how far it got at most every :data:`PROGRESS_EVERY_S` (and
    always the last item and a new phase, so a phase's name shows while it runs), and raises
    :class:`JobCancelled` between items once someone cancelled the job, or :class:`WorkerStopped` once its
    worker is ``stopping``. ``row`` is held while it writes the job's row, which
    the watch's heartbeat writes too: on the file two transactions writing one row at once conflict.
    """
    last = [0.0]
    shown = [""]  # the phase last written

    def report(done: int, total: int, note: str, phase: str = "") -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY_S and done < total and phase == shown[0]:
            return
        try:
            with row, runtime.db.transaction() as con:
                cancelled = jobs_store.report_progress(con, job.id, done, total, note[:200], phase[:200])
        except DatabaseUnavailable:  # the server restarting: reported at the next item (the watch beats meanwhile)
            return
        last[0], shown[0] = now, phase
        if cancelled:
            raise JobCancelled(f"cancelled after {done} of {total}")
        if stopping():
            raise WorkerStopped

    return report


@contextmanager
def _watch(runtime: Runtime, job: Job, row: threading.Lock) -> Iterator[list[str]]:
    """While the block runs, read the job every :data:`PROGRESS_EVERY_S` and write its heartbeat every
    :data:`HEARTBEAT_S`, from a thread of its own: a run waiting on a model calls no progress, and its worker
    must still be seen to live. Once someone cancelled the job, or it was ended elsewhere (the list yielded then
    holds how it stands), the runtime's gateway is cancelled: a run waiting on a model is interrupted within a
    moment, not when the model has answered. A database that cannot be reached is simply tried again next time.
    The gateway answers again after the block.
    """
    done = threading.Event()
    ended: list[str] = []

    def watch() -> None:
        last_beat = time.monotonic()
        while not done.wait(PROGRESS_EVERY_S):
            try:
                if time.monotonic() - last_beat >= HEARTBEAT_S:
                    with row, runtime.db.connect(checkpoint=False) as con:
                        found = jobs_store.beat(con, job.id)
                    last_beat = time.monotonic()
                else:
                    with runtime.db.connect() as con:
                        found = jobs_store.state_of(con, job.id)
            except StoreError:  # the file held by another process, the server away: look again next time
                continue
            if found is not None and found[0] != JobStatus.RUNNING:
                ended.append(found[0])
            if found is None or found[1] or ended:
                runtime.gateway.cancel()
                return

    watcher = threading.Thread(target=watch, name=f"job-watch-{job.id}", daemon=True)
    watcher.start()
    try:
        yield ended
    finally:
        done.set()
        watcher.join()
        runtime.gateway.resume()


def _fence(job_id: str) -> Fence:
    """The check every transaction of a job's run passes first: the job is still running (see
    :class:`~explorer.store.database.UnitsOfWork`), so a run that was ended elsewhere writes nothing more.
    """

    def check(con: Connection) -> None:
        state = jobs_store.state_of(con, job_id)
        if state is None or state[0] != JobStatus.RUNNING:
            raise JobEnded(state[0] if state else "gone")

    return check


_busy = threading.Event()  # a job is under way in this process: SIGTERM interrupts it


def execute(runtime: Runtime, job: Job, stopping: Callable[[], bool] = lambda: False) -> JobStatus:
    """Carry out one claimed job and store how it ended: its report, or why it failed or stopped. ``stopping``
    says when the worker is asked to stop (a shared queue's worker; the file's hears SIGTERM itself). A job
    ended elsewhere meanwhile (taken for dead) keeps how it was ended, and its run stops writing at once.
    """
    kind = KINDS.get(job.kind)
    status, result, error = JobStatus.FAILED, None, None
    ended: list[str] = []
    _busy.set()
    runtime.db.fence = _fence(job.id)
    try:
        if kind is None:
            raise ExplorerError(f"this worker does not know jobs of kind {job.kind!r}")
        params = kind.params.model_validate(job.params)
        row = threading.Lock()  # the job's row, written by the run's progress and the watch's heartbeat
        with _watch(runtime, job, row) as ended:
            result = kind.run(runtime, params, _progress(runtime, job, stopping, row))
        status = JobStatus.SUCCEEDED
    except JobEnded as exc:
        ended.append(str(exc))
    except (JobCancelled, CallCancelled) as exc:
        status, error = JobStatus.CANCELLED, f"cancelled by request ({exc}); what was done before stands"
    except WorkerStopped:
        error = "the worker was stopped (SIGTERM) in the middle of the job; what was done before stands"
    except (ExplorerError, ValidationError) as exc:
        error = str(exc).splitlines()[0]
    except Exception as exc:  # a bug: the job fails with its name, the worker goes on to the next one
        traceback.print_exc()
        error = f"internal error: {type(exc).__name__}: {exc}"
    finally:
        _busy.clear()
        runtime.db.fence = None
        runtime.flush()
    if ended:  # how it was ended stands: nothing of this run's outcome is written over it
        return JobStatus(ended[0]) if ended[0] in JobStatus.__members__.values() else JobStatus.FAILED
    with runtime.db.transaction() as con:
        jobs_store.finish(con, job.id, status, result, error)
    return status


def work(runtime: Runtime, idle_exit_s: float | None = None, max_jobs: int | None = None) -> int:
    """Claim and carry out queued jobs until idle for ``idle_exit_s`` (None: forever) or ``max_jobs`` are done;
    how many were carried out. Returns at once (0) when another worker holds this database's lock.
    """
    with _worker_lock(runtime) as mine:
        if not mine:
            return 0
        me = identity()
        stop = _stop_on_sigterm()
        carried = 0
        idle_since = time.monotonic()
        while max_jobs is None or carried < max_jobs:
            try:
                with runtime.db.transaction() as con:
                    job = jobs_store.claim_next(con, me, tuple(KINDS))
            except DatabaseBusy:  # another process held the file all this while: the queue waits, so do we
                continue
            if job is None:
                if stop.is_set() or (idle_exit_s is not None and time.monotonic() - idle_since >= idle_exit_s):
                    break
                stop.wait(POLL_S)
                continue
            execute(runtime, job)
            carried += 1
            idle_since = time.monotonic()
            if stop.is_set():
                break
        return carried


def _stop_on_sigterm() -> threading.Event:
    """SIGTERM ends the job under way as failed ("the worker was stopped") and then the worker; while idle, it
    sets the returned event, which ends the loop at once.
    """
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return stop

    def handle(signum: int, frame: Any) -> None:
        stop.set()
        if _busy.is_set():
            raise WorkerStopped

    signal.signal(signal.SIGTERM, handle)
    return stop
