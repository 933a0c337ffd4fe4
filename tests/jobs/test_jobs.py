"""Background jobs: asked for, checked, carried out by a real worker process, followed, cancelled, and left
failed (never running) when their worker is killed outright.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from explorer import jobs
from explorer.jobs import worker
from explorer.jobs.kinds import KINDS, label_of
from explorer.records.jobs import Job, JobStatus
from explorer.records.wander import Session
from explorer.runtime import Runtime
from explorer.wander import service
from explorer.wander.errors import InvalidRequest, SessionStateError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "wander"))
from conftest import new_session  # noqa: E402  (the wander tests' session maker)

EXPLORER = [sys.executable, "-m", "explorer"]
# the file's worker, in this process (worker.work) or started on demand: a PostgreSQL store's are explorer worker
# processes started by hand (tests/jobs/test_shared_queue.py tries the same there)
FILE_WORKER = pytest.mark.duckdb_only("the file's worker")


def cli(db: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([*EXPLORER, *args, "--db", str(db), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def wait_for(runtime: Runtime, job_id: str, ready: Callable[[Job], bool], timeout_s: float = 90) -> Job:
    deadline = time.monotonic() + timeout_s
    job = jobs.get(runtime, job_id)
    while not ready(job):
        assert time.monotonic() < deadline, f"job never got there: {job.to_json()}"
        time.sleep(0.2)
        job = jobs.get(runtime, job_id)
    return job


@pytest.fixture(autouse=True)
def no_worker_left(corpus_runtime: Runtime):
    """A test's workers end with it (one started on demand would idle for a minute otherwise)."""
    yield
    db = str(corpus_runtime.db.path)
    for process in psutil.process_iter(["cmdline"]):
        command = process.info["cmdline"] or []
        if "worker" in command and db in command:
            process.terminate()


def test_a_job_is_checked_when_asked_for(corpus_runtime: Runtime) -> None:
    with pytest.raises(InvalidRequest, match="no kind of job 'dream.nap'"):
        jobs.submit(corpus_runtime, "dream.nap", {})
    with pytest.raises(InvalidRequest, match="job dream.rem: dreams: Input should be greater than or equal to 1"):
        jobs.submit(corpus_runtime, "dream.rem", {"dreams": 0})
    with pytest.raises(InvalidRequest, match="job wander.run: steps"):
        jobs.submit(corpus_runtime, "wander.run", {"session_id": "x", "steps": "many"})
    with pytest.raises(InvalidRequest, match="Extra inputs are not permitted"):
        jobs.submit(corpus_runtime, "dream.fuse", {"dream": 3})
    session = new_session(corpus_runtime)
    service.pause(corpus_runtime, session.id)
    with pytest.raises(SessionStateError, match="is paused"):
        jobs.submit(corpus_runtime, "wander.run", {"session_id": session.id, "steps": 3})
    assert jobs.list_jobs(corpus_runtime) == []


@FILE_WORKER
def test_a_worker_carries_a_job_out_and_stores_its_report(corpus_runtime: Runtime) -> None:
    session = new_session(corpus_runtime)
    job = jobs.submit(corpus_runtime, "wander.run", {"session_id": session.id, "steps": 3}, start_worker=False)
    assert job.status is JobStatus.QUEUED and job.params == {"session_id": session.id, "steps": 3}
    assert worker.work(corpus_runtime, max_jobs=1) == 1
    done = jobs.get(corpus_runtime, job.id)
    assert done.status is JobStatus.SUCCEEDED, done.error
    assert (done.done, done.total) == (3, 3) and done.result is not None
    assert done.result["steps_completed"] == 3
    assert len(service.session_view(corpus_runtime, session.id).trace) == 3
    assert done.started_at is not None and done.finished_at is not None and done.worker is not None
    assert [j.id for j in jobs.list_jobs(corpus_runtime, status="succeeded")] == [job.id]
    assert jobs.list_jobs(corpus_runtime, status="active") == []
    assert [j.id for j in jobs.list_jobs(corpus_runtime, kind="wander.run")] == [job.id]
    assert jobs.list_jobs(corpus_runtime, status="succeeded", kind="ingest") == []


@FILE_WORKER
def test_a_failing_job_fails_alone_with_the_engines_words(corpus_runtime: Runtime) -> None:
    session = new_session(corpus_runtime)
    first = jobs.submit(corpus_runtime, "wander.run", {"session_id": session.id, "steps": 2}, start_worker=False)
    second = jobs.submit(corpus_runtime, "dream.fuse", {}, start_worker=False)
    service.stop(corpus_runtime, session.id)  # the session ends between asking and running
    assert worker.work(corpus_runtime, max_jobs=2) == 2
    failed = jobs.get(corpus_runtime, first.id)
    assert failed.status is JobStatus.FAILED and failed.error is not None and "is completed" in failed.error
    assert jobs.get(corpus_runtime, second.id).status is JobStatus.SUCCEEDED


@FILE_WORKER
def test_cancelling(corpus_runtime: Runtime) -> None:
    job = jobs.submit(corpus_runtime, "dream.fuse", {}, start_worker=False)
    cancelled = jobs.cancel(corpus_runtime, job.id)
    assert cancelled.status is JobStatus.CANCELLED and cancelled.error == "cancelled before it started"
    assert worker.work(corpus_runtime, max_jobs=1, idle_exit_s=0) == 0  # nothing left to claim
    with pytest.raises(jobs.JobStateError, match="has already ended"):
        jobs.cancel(corpus_runtime, job.id)
    with pytest.raises(jobs.JobNotFound, match="no job 'nope'"):
        jobs.get(corpus_runtime, "nope")


@FILE_WORKER
def test_background_from_the_command_line_then_cancel_between_steps(corpus_runtime: Runtime, model_server) -> None:
    """The CLI contract: ``wander run --background --json`` prints the job id, ``jobs show --json`` its status and
    progress; a worker process starts on demand; a cancel stops the walk after the step under way, and the steps
    it took stand.
    """
    model_server(latency_s=0.3)  # a step waits on a model: the walk takes long enough to be cancelled
    db = corpus_runtime.db.path
    session = new_session(corpus_runtime)
    queued = cli(db, "wander", "run", session.id, "--steps", "40", "--background")
    assert set(queued) >= {"job_id"} and queued["status"] == "queued"
    shown = cli(db, "jobs", "show", queued["job_id"])
    assert shown["status"] in ("queued", "running")
    assert set(shown["progress"]) == {"phase", "done", "total", "current"}
    running = wait_for(corpus_runtime, queued["job_id"], lambda j: j.done >= 2)
    assert running.status is JobStatus.RUNNING and running.total == 40
    assert worker.worker_running(corpus_runtime)
    cli(db, "jobs", "cancel", queued["job_id"])
    ended = wait_for(corpus_runtime, queued["job_id"], lambda j: j.status.ended)
    assert ended.status is JobStatus.CANCELLED and ended.error is not None and "cancelled by request" in ended.error
    steps = len(service.session_view(corpus_runtime, session.id).trace)
    assert 2 <= steps < 40
    assert service.get_session(corpus_runtime, session.id).status == "active"  # the walk can go on later
    listed = cli(db, "jobs", "list")
    assert [j["job_id"] for j in listed] == [queued["job_id"]] and listed[0]["status"] == "cancelled"


def a_long_walk_under_way(runtime: Runtime, model_server) -> tuple[Session, Job, int]:
    """A 40-step walk job that a worker process started on demand has begun (a step waits on a model)."""
    model_server(latency_s=0.3)
    session = new_session(runtime)
    job = jobs.submit(runtime, "wander.run", {"session_id": session.id, "steps": 40})
    running = wait_for(runtime, job.id, lambda j: j.done >= 1)
    assert running.worker_pid is not None
    return session, running, running.worker_pid


@FILE_WORKER
def test_a_worker_killed_outright_leaves_its_job_failed(corpus_runtime: Runtime, model_server) -> None:
    session, job, pid = a_long_walk_under_way(corpus_runtime, model_server)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while worker.worker_running(corpus_runtime):  # the OS frees the worker's lock as the process goes
        assert time.monotonic() < deadline
        time.sleep(0.1)
    failed = jobs.get(corpus_runtime, job.id)
    assert failed.status is JobStatus.FAILED
    assert failed.error == f"the worker process ({pid}) ended without finishing the job (killed or crashed)"
    # a new job gets a new worker, which goes on from where the session stands
    again = jobs.submit(corpus_runtime, "wander.run", {"session_id": session.id, "steps": 1})
    assert wait_for(corpus_runtime, again.id, lambda j: j.status.ended).status is JobStatus.SUCCEEDED


@FILE_WORKER
def test_a_stopped_worker_fails_its_job_saying_so(corpus_runtime: Runtime, model_server) -> None:
    _, job, pid = a_long_walk_under_way(corpus_runtime, model_server)
    os.kill(pid, signal.SIGTERM)
    ended = wait_for(corpus_runtime, job.id, lambda j: j.status.ended)
    assert ended.status is JobStatus.FAILED and ended.error is not None and "stopped (SIGTERM)" in ended.error


@pytest.mark.duckdb_only("a worker started on demand is the file's (PostgreSQL's are started by hand)")
def test_a_worker_started_on_demand_is_reaped_when_it_ends(corpus_runtime: Runtime, monkeypatch) -> None:
    """`explorer demo` waits on the app for hours: a worker it started and that ended must not stay a zombie."""
    monkeypatch.setattr(worker, "IDLE_EXIT_S", 0.5)
    worker.ensure_worker(corpus_runtime)
    db = str(corpus_runtime.db.path)

    def ours() -> list[psutil.Process]:
        return [child for child in psutil.Process().children() if db in (child.cmdline() or [""])]

    (started,) = ours()
    deadline = time.monotonic() + 30  # it ends after half a second idle; then it must vanish, not linger as a zombie
    while time.monotonic() < deadline and psutil.pid_exists(started.pid):
        time.sleep(0.1)
    assert not psutil.pid_exists(started.pid), started.status()  # never waited on here: psutil's wait would reap it


def test_every_kind_of_job_has_a_label_for_people() -> None:
    assert label_of("wander.run") == "walk" and label_of("demo.prepare") == "the demo"
    assert all(kind.label and "." not in kind.label for kind in KINDS.values())
    assert label_of("not.ours") == "not.ours"
