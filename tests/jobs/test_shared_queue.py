"""Jobs on a PostgreSQL store: queued on procrastinate, carried out by real ``explorer worker`` processes (two at
once share them, each job run once), cancelled while running, and ended by a live worker within a bound when the
worker running them is killed outright. The job kind is ``test.count`` (``counting_kind.py``): these tests time
the queue, not an engine.
"""

# ruff: noqa: F811 - the fixtures imported from queue_testing are named again as the tests' arguments
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from explorer import jobs
from explorer.cli import app
from explorer.jobs import shared_queue
from explorer.reading.ingest import ingest_paths
from explorer.records.jobs import JobStatus
from explorer.runtime import Runtime
from explorer.testing.postgres_server import wait_for_workers
from explorer.wander import service

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "sample_data" / "python-whatsnew"
sys.path[:0] = [str(HERE), str(HERE.parent / "wander")]
import counting_kind  # noqa: E402  (the test's kind of job)
from conftest import new_session  # noqa: E402  (the wander tests' session maker)
from queue_testing import (  # noqa: E402  (the queue tests' fixtures and readers)
    pg_runtime,  # noqa: F401
    queue_outcome,
    queue_rows,
    queue_status,
    queue_url,  # noqa: F401
    start_worker,  # noqa: F401
    stored,
    wait_for,
)

counting_kind.register()


def test_a_worker_process_carries_out_a_job_queued_on_postgres(pg_runtime: Runtime, postgres_url: str, start_worker):
    job = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 3})
    assert job.status is JobStatus.QUEUED and isinstance(jobs.queue_of(pg_runtime), shared_queue.SharedQueue)
    assert queue_status(pg_runtime, postgres_url, job.id) == "todo"  # queued in the same transaction
    process = start_worker()
    done = wait_for(pg_runtime, job.id, lambda j: j.status.ended)
    assert done.status is JobStatus.SUCCEEDED and done.result == {"counted": 3}
    assert done.worker_pid == process.pid and done.progress.done == 3
    assert queue_outcome(pg_runtime, postgres_url, job.id) == "succeeded"
    shown = subprocess.run(
        [sys.executable, "-m", "explorer", "jobs", "show", job.id, "--db", postgres_url, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["worker"] == done.worker


def test_two_workers_share_the_jobs_and_run_each_once(pg_runtime: Runtime, postgres_url: str, start_worker):
    one, two_at_once = start_worker().pid, start_worker("--concurrency", "2").pid
    wait_for_workers(postgres_url, 2, timeout_s=30)
    queued = [jobs.submit(pg_runtime, counting_kind.NAME, {"items": 4, "pause_s": 0.25}) for _ in range(8)]
    ended = [wait_for(pg_runtime, job.id, lambda j: j.status.ended) for job in queued]
    assert {job.status for job in ended} == {JobStatus.SUCCEEDED}
    assert {job.worker_pid for job in ended} == {one, two_at_once}  # both took some
    doubled = [job for job in ended if job.worker_pid == two_at_once]
    assert any(a.started_at < b.started_at < a.finished_at for a in doubled for b in doubled)  # type: ignore[operator]
    entries = queue_rows(postgres_url, "SELECT status, attempts FROM procrastinate_jobs")
    assert sorted(entries) == [("succeeded", 1)] * 8  # each job once: one attempt, by one worker


def test_cancelling_a_running_job_stops_it_between_items(pg_runtime: Runtime, postgres_url: str, start_worker):
    job = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 200, "pause_s": 0.1})
    start_worker()
    wait_for(pg_runtime, job.id, lambda j: j.done >= 2)
    assert jobs.cancel(pg_runtime, job.id).cancel_requested
    ended = wait_for(pg_runtime, job.id, lambda j: j.status.ended, timeout_s=10)
    assert ended.status is JobStatus.CANCELLED and ended.error is not None and "cancelled by request" in ended.error
    assert 2 <= ended.done < 200
    assert queue_outcome(pg_runtime, postgres_url, job.id) == "aborted"


def test_a_job_cancelled_before_a_worker_reaches_it_never_runs(pg_runtime: Runtime, postgres_url: str, start_worker):
    job = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 1})
    assert jobs.cancel(pg_runtime, job.id).status is JobStatus.CANCELLED
    assert queue_status(pg_runtime, postgres_url, job.id) == "cancelled"
    start_worker()
    after = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 1})  # the worker reaches this one, not the other
    assert wait_for(pg_runtime, after.id, lambda j: j.status.ended).status is JobStatus.SUCCEEDED
    assert stored(pg_runtime, job.id).started_at is None


def test_a_worker_killed_mid_job_has_it_ended_by_another_within_the_bound(
    pg_runtime: Runtime, postgres_url: str, start_worker
):
    workers = {process.pid: process for process in (start_worker(), start_worker())}
    wait_for_workers(postgres_url, 2, timeout_s=30)
    job = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 400, "pause_s": 0.1})
    running = wait_for(pg_runtime, job.id, lambda j: j.done >= 2)
    killed = running.worker_pid
    assert killed in workers
    os.kill(killed, signal.SIGKILL)
    workers.pop(killed).wait(10)
    at = time.monotonic()
    failed = wait_for(pg_runtime, job.id, lambda j: j.status.ended, timeout_s=30)
    took = time.monotonic() - at
    assert took <= shared_queue.STALLED_S + 3 * shared_queue.HEARTBEAT_S, f"ended after {took:.1f} s"
    assert failed.status is JobStatus.FAILED and failed.error is not None
    assert failed.error.startswith(f"the worker {running.worker} stopped answering")
    assert 2 <= failed.done < 400  # nothing ran on after it died
    assert queue_outcome(pg_runtime, postgres_url, job.id) == "failed"
    (survivor,) = workers
    again = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 1})
    assert wait_for(pg_runtime, again.id, lambda j: j.status.ended).worker_pid == survivor


def test_a_walk_whose_worker_is_killed_stays_whole_and_goes_on_with_another(
    pg_runtime: Runtime, postgres_url: str, start_worker, model_server
):
    """A real kind: a walk on PostgreSQL whose worker is killed mid-walk keeps every step it took whole (steps
    counted = trace rows), and the session walks on with the surviving worker.
    """
    ingest_paths(pg_runtime, [SAMPLE / "whatsnew-2.0.md", SAMPLE / "whatsnew-3.0.md"])
    session = new_session(pg_runtime)
    model_server(latency_s=0.1)  # a step waits on a model: the walk is under way when its worker is killed
    workers = {process.pid: process for process in (start_worker(), start_worker())}
    wait_for_workers(postgres_url, 2, timeout_s=30)
    job = jobs.submit(pg_runtime, "wander.run", {"session_id": session.id, "steps": 40})
    running = wait_for(pg_runtime, job.id, lambda j: j.done >= 1)
    os.kill(running.worker_pid or 0, signal.SIGKILL)
    workers.pop(running.worker_pid or 0).wait(10)
    failed = wait_for(pg_runtime, job.id, lambda j: j.status.ended, timeout_s=30)
    assert failed.status is JobStatus.FAILED and "stopped answering" in (failed.error or "")

    def walked() -> tuple[int, int]:
        return service.get_session(pg_runtime, session.id).step_count, len(
            service.session_view(pg_runtime, session.id).trace
        )

    steps, trace = walked()
    assert steps == trace and 1 <= steps < 40
    again = jobs.submit(pg_runtime, "wander.run", {"session_id": session.id, "steps": 1})
    ended = wait_for(pg_runtime, again.id, lambda j: j.status.ended)
    assert ended.status is JobStatus.SUCCEEDED and ended.worker_pid in workers
    assert walked() == (steps + 1, trace + 1)


def test_a_stopped_worker_fails_its_job_saying_so(pg_runtime: Runtime, postgres_url: str, start_worker):
    job = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 400, "pause_s": 0.1})
    process = start_worker()
    wait_for(pg_runtime, job.id, lambda j: j.done >= 2)
    process.terminate()
    assert process.wait(20) == 0
    ended = stored(pg_runtime, job.id)
    assert ended.status is JobStatus.FAILED and ended.error is not None and "stopped (SIGTERM)" in ended.error
    assert queue_outcome(pg_runtime, postgres_url, job.id) == "failed"


def test_a_database_file_runs_one_job_at_a_time(tmp_path: Path) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "explorer", "worker", "--concurrency", "2", "--db", str(tmp_path / "x.duckdb")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "error: a database file runs one job at a time (it admits one writer), not 2; use a PostgreSQL database "
        "for more"
    ]


def test_a_job_queued_with_no_worker_alive_says_it_waits(postgres_url: str, tmp_path: Path) -> None:
    """On PostgreSQL no worker starts on demand: queuing with none alive says so, rather than waiting in silence."""
    note = tmp_path / "note.txt"
    note.write_text("A note about bees and their hives, kept for later.", encoding="utf-8")
    out = CliRunner().invoke(app, ["ingest", str(note), "--background", "--db", postgres_url])
    assert out.exit_code == 0, out.output
    assert out.stderr.splitlines() == [
        "warning: no worker takes this database's jobs now; it waits until one is started (explorer worker)"
    ]
