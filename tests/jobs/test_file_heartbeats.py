"""The file's queue judges a worker dead by its job's heartbeat, as PostgreSQL's does: a running job silent for
longer than the limit is ended whatever its process id says (a process seen alive, frozen or on another machine),
and one whose heartbeat is fresh is never ended, however long it has run. On a real DuckDB file, with rows as a
worker writes them, then with real worker processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from explorer import jobs
from explorer.jobs import file_queue
from explorer.jobs.worker import HEARTBEAT_S
from explorer.records.jobs import Job, JobStatus
from explorer.runtime import Runtime
from explorer.store import DatabaseBusy
from explorer.store import jobs as jobs_store
from explorer.store.leases import identity, is_alive

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import counting_kind  # noqa: E402  (the test's kind of job)
from queue_testing import counting_worker  # noqa: E402

counting_kind.register()
pytestmark = pytest.mark.duckdb_only("the file's queue and its worker")
LOCK_WAIT_S = 2.0  # the runtime's: the file's limit is STALLED_S and this
ELSEWHERE = "another-host:4242:1700000000.00"  # a worker whose process cannot be looked at from here


@pytest.fixture
def file_runtime(make_runtime: Callable[..., Runtime]) -> Runtime:
    return make_runtime(lock_wait_s=LOCK_WAIT_S)


def running_as(runtime: Runtime, worker: str) -> Job:
    """A ``test.count`` job claimed by ``worker``, as a worker claims one."""
    jobs.submit(runtime, counting_kind.NAME, {"items": 1}, start_worker=False)
    with runtime.db.transaction() as con:
        job = jobs_store.claim_next(con, worker, (counting_kind.NAME,))
    assert job is not None
    return job


def age(runtime: Runtime, job_id: str, *, heartbeat_s: float, started_s: float | None = None) -> None:
    """Set the job's last heartbeat (and its start) that many seconds back, by the database's clock."""
    with runtime.db.transaction() as con:
        con.execute(
            "UPDATE jobs SET heartbeat_at = now() - CAST(? AS INTERVAL), "
            "started_at = now() - CAST(? AS INTERVAL) WHERE id = ?",
            [f"{heartbeat_s} seconds", f"{started_s if started_s is not None else heartbeat_s} seconds", job_id],
        )


def test_a_silent_job_is_ended_though_its_process_is_alive(file_runtime: Runtime) -> None:
    """The worker named is this very test process (alive, its start time right): only the heartbeat can tell."""
    me = identity()
    job = running_as(file_runtime, me)
    age(file_runtime, job.id, heartbeat_s=file_queue.STALLED_S + LOCK_WAIT_S + 1)
    assert is_alive(me)
    ended = jobs.get(file_runtime, job.id)
    assert ended.status is JobStatus.FAILED, ended.to_json()
    assert ended.error is not None and ended.error.startswith(f"the worker {me} stopped answering (no heartbeat")


def test_a_fresh_heartbeat_keeps_a_long_run_alive_and_a_stale_one_ends_it(file_runtime: Runtime) -> None:
    """A worker on another machine, whose process cannot be looked at: its job lives exactly while it beats. A
    heartbeat late by less than the file's lock wait too (a living worker's write waits its turn at the file).
    """
    job = running_as(file_runtime, ELSEWHERE)
    age(file_runtime, job.id, heartbeat_s=0, started_s=3600)  # running for an hour, beating now
    assert jobs.get(file_runtime, job.id).status is JobStatus.RUNNING
    age(file_runtime, job.id, heartbeat_s=file_queue.STALLED_S + LOCK_WAIT_S / 2, started_s=3600)
    assert [j.id for j in jobs.list_jobs(file_runtime, status="running")] == [job.id]
    age(file_runtime, job.id, heartbeat_s=file_queue.STALLED_S + LOCK_WAIT_S + 1, started_s=3600)
    assert jobs.list_jobs(file_runtime, status="running") == []
    assert jobs.get(file_runtime, job.id).status is JobStatus.FAILED


@pytest.fixture
def start_worker(file_runtime: Runtime, tmp_path: Path) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """``start_worker()``: the file's worker process (knowing ``test.count``), stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        process = counting_worker(["jobs", "worker", "--db", str(file_runtime.db.path)], tmp_path / "worker.log")
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()  # a frozen one too, which SIGTERM would not reach before SIGCONT
        process.wait(15)


def watch(runtime: Runtime, job_id: str, until: Callable[[Job], bool], timeout_s: float = 90) -> list[Job]:
    """The job as readers saw it, read every 0.2 s (each read judges the dead) until ``until`` holds."""
    seen = [jobs.get(runtime, job_id)]
    deadline = time.monotonic() + timeout_s
    while not until(seen[-1]):
        assert time.monotonic() < deadline, f"job never got there: {seen[-1].to_json()}"
        time.sleep(0.2)
        seen.append(jobs.get(runtime, job_id))
    return seen


def freeze(process: subprocess.Popen[bytes], runtime: Runtime) -> float:
    """Stop the worker (SIGSTOP) between two of its units of work, when it does not hold the file (a process frozen
    holding it would keep everyone out, its heartbeat or not); when it was stopped, by the monotonic clock.
    """
    for _ in range(10):
        time.sleep(0.3)
        os.kill(process.pid, signal.SIGSTOP)
        at = time.monotonic()
        try:
            with runtime.db.connect() as con:
                con.execute("SELECT 1")
            return at
        except DatabaseBusy:
            os.kill(process.pid, signal.SIGCONT)
    raise AssertionError("the worker held the file every time it was stopped")


def test_a_working_worker_outlives_the_limit_and_a_frozen_one_does_not(
    file_runtime: Runtime, start_worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real worker whose run waits 3 limits without reporting progress (as one waiting on a model) is kept alive
    by its heartbeat alone; frozen (SIGSTOP: its process still there, under the same id and start time), its next
    job is ended once silent for the limit.
    """
    monkeypatch.setattr(file_queue, "STALLED_S", 2.5)  # a limit of 4.5 s with the lock wait: beats come every 2 s
    limit_s = 2.5 + LOCK_WAIT_S
    waiting = jobs.submit(file_runtime, counting_kind.NAME, {"items": 1, "pause_s": 3 * limit_s}, start_worker=False)
    process = start_worker()
    seen = watch(file_runtime, waiting.id, lambda j: j.status.ended)
    done = seen[-1]
    assert done.status is JobStatus.SUCCEEDED, done.error  # read and judged all along, never taken for dead
    assert done.started_at and done.finished_at and (done.finished_at - done.started_at).total_seconds() > 3 * limit_s
    assert sum(job.status is JobStatus.RUNNING for job in seen) >= 10

    frozen = jobs.submit(file_runtime, counting_kind.NAME, {"items": 1, "pause_s": 60}, start_worker=False)
    running = watch(file_runtime, frozen.id, lambda j: j.status is JobStatus.RUNNING)[-1]
    at = freeze(process, file_runtime)
    ended = watch(file_runtime, frozen.id, lambda j: j.status.ended, timeout_s=30)[-1]
    assert is_alive(running.worker or "")  # its process is there all along: the heartbeat alone ended the job
    assert limit_s - HEARTBEAT_S - 1 <= time.monotonic() - at <= limit_s + 10  # its last beat: about 2 s before
    assert ended.status is JobStatus.FAILED and ended.error is not None
    assert ended.error.startswith(f"the worker {running.worker} stopped answering")
