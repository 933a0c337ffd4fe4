"""The team server under faults, on a PostgreSQL of the module's own that the tests stop and start: a restart
under working workers fails no job whose worker lives, a job recorded as ended writes nothing more, and the API
answers a database that is down with 503 and the first request after it comes back as usual.
"""

# ruff: noqa: F811 - the fixtures imported from queue_testing are named again as the tests' arguments
from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient

from explorer import jobs
from explorer.api import create_app
from explorer.reading.ingest import ingest_paths
from explorer.records.jobs import JobStatus
from explorer.runtime import Runtime
from explorer.settings import Settings
from explorer.testing.postgres_server import PostgresServer, wait_for_workers
from explorer.wander import service

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "sample_data" / "python-whatsnew"
sys.path[:0] = [str(HERE), str(HERE.parent / "wander")]
import counting_kind  # noqa: E402  (the test's kind of job)
from conftest import new_session  # noqa: E402  (the wander tests' session maker)
from queue_testing import pg_runtime, start_worker, stored, wait_for  # noqa: E402, F401

counting_kind.register()
DOWN_S = 8.0  # as long as the outage that made live workers fail each other's jobs


@pytest.fixture(scope="module")
def restartable() -> Iterator[PostgresServer]:
    """A server of this module's own: stopping it must not reach other tests' databases."""
    with PostgresServer() as server:
        yield server


@pytest.fixture
def queue_url(restartable: PostgresServer) -> Iterator[str]:
    url = restartable.new_database()
    yield url
    restartable.drop_database(url)


def end_by_hand(url: str, job_id: str, error: str) -> None:
    """Record the job as failed, as a worker that took its own worker for dead would."""
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("UPDATE jobs SET status = 'failed', error = %s, finished_at = now() WHERE id = %s", [error, job_id])


def test_a_server_restart_fails_no_job_whose_worker_lives(
    pg_runtime: Runtime, queue_url: str, restartable: PostgresServer, start_worker, model_server
) -> None:
    """The server stopped at once (as by ``kill -9``) and started again 8 s later under two workers carrying out a
    walk and two other jobs: every job succeeds, and the walk's steps counted equal its trace's rows.
    """
    ingest_paths(pg_runtime, [SAMPLE / "whatsnew-2.0.md", SAMPLE / "whatsnew-3.0.md"])
    session = new_session(pg_runtime)
    model_server(latency_s=0.2)  # the walk is under way, a step thinking or writing, when the server goes
    start_worker(), start_worker("--concurrency", "2")
    wait_for_workers(queue_url, 2, timeout_s=30)
    walk = jobs.submit(pg_runtime, "wander.run", {"session_id": session.id, "steps": 30})
    counts = [jobs.submit(pg_runtime, counting_kind.NAME, {"items": 60, "pause_s": 0.25}) for _ in range(2)]
    for job in (walk, *counts):
        wait_for(pg_runtime, job.id, lambda j: j.done >= 2)
    restartable.restart(DOWN_S)  # every heartbeat, the living workers' too, is now older than STALLED_S
    ended = [wait_for(pg_runtime, job.id, lambda j: j.status.ended, timeout_s=180) for job in (walk, *counts)]
    assert [(job.status, job.error, job.done) for job in ended] == [
        (JobStatus.SUCCEEDED, None, 30),
        (JobStatus.SUCCEEDED, None, 60),
        (JobStatus.SUCCEEDED, None, 60),
    ]
    walked = service.session_view(pg_runtime, session.id)
    assert walked.session.step_count == len(walked.trace) == 30


def test_a_walk_recorded_as_ended_writes_no_more_steps(
    pg_runtime: Runtime, queue_url: str, start_worker, model_server
) -> None:
    """A job ended elsewhere (a worker cut off for long enough to be taken for dead) stops at its next write: a
    walk takes no step after it, its record keeps how it was ended, and its worker goes on to the next job.
    """
    ingest_paths(pg_runtime, [SAMPLE / "whatsnew-2.0.md", SAMPLE / "whatsnew-3.0.md"])
    session = new_session(pg_runtime)
    model_server(latency_s=0.2)  # each step waits on the model: the walk is under way when it is ended
    start_worker()
    job = jobs.submit(pg_runtime, "wander.run", {"session_id": session.id, "steps": 40})
    wait_for(pg_runtime, job.id, lambda j: j.done >= 2)
    end_by_hand(queue_url, job.id, "taken for dead")
    at_end = service.get_session(pg_runtime, session.id).step_count
    time.sleep(4)  # several steps' time

    after = service.get_session(pg_runtime, session.id).step_count
    assert after <= at_end + 1, "the walk went on writing steps after its job was recorded as ended"
    assert after == len(service.session_view(pg_runtime, session.id).trace)
    time.sleep(2)
    assert service.get_session(pg_runtime, session.id).step_count == after
    assert (stored(pg_runtime, job.id).status, stored(pg_runtime, job.id).error) == (JobStatus.FAILED, "taken for dead")
    again = jobs.submit(pg_runtime, counting_kind.NAME, {"items": 1})
    assert wait_for(pg_runtime, again.id, lambda j: j.status.ended).status is JobStatus.SUCCEEDED


def test_the_api_answers_503_while_the_server_is_down_and_serves_again_after(
    queue_url: str, restartable: PostgresServer, embedder
) -> None:
    settings = replace(Settings(), db_path=queue_url, embedding_model=embedder.name, lock_wait_s=3.0)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        assert client.get("/api/v1/wander/sessions").status_code == 200  # the pool holds a connection now
        restartable.stop()
        down = client.get("/api/v1/wander/sessions")
        assert down.status_code == 503 and down.headers["retry-after"]
        assert down.json()["error"]["code"] == "database_unavailable"
        restartable.start_again()
        back = client.get("/api/v1/wander/sessions")  # a stale pooled connection is found out before it is lent
        assert back.status_code == 200, back.text
