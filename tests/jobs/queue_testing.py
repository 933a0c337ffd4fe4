"""Fixtures and readers of the shared queue's tests (``test_shared_queue.py``, ``test_server_faults.py``): a
runtime and ``explorer worker`` processes on the database ``queue_url`` names (the session's server by default;
a module may give its own), and the job and queue rows as they stand.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from explorer.providers.embeddings import Embedder
from explorer.records.jobs import Job
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.store import jobs as jobs_store

HERE = Path(__file__).resolve().parent


@pytest.fixture
def queue_url(postgres_url: str) -> str:
    """The database the queue's runtime and workers use."""
    return postgres_url


@pytest.fixture
def pg_runtime(queue_url: str, embedder: Embedder) -> Iterator[Runtime]:
    runtime = open_runtime(replace(Settings(), db_path=queue_url, embedding_model=embedder.name), embedder=embedder)
    yield runtime
    runtime.flush()  # before the database goes: nothing is left to write at exit
    runtime.db.close()  # type: ignore[attr-defined]


def counting_worker(command: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    """An ``explorer`` ``command`` in a process of its own that knows ``test.count``, its output in ``log_path``."""
    with open(log_path, "ab") as log:  # the child keeps its own copy of the handle
        return subprocess.Popen(
            [sys.executable, str(HERE / "counting_kind.py"), *command], stdout=log, stderr=subprocess.STDOUT
        )


@pytest.fixture
def start_worker(queue_url: str, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """``start_worker(*args)``: an ``explorer worker`` process on the test's database (knowing ``test.count``),
    its output in the test's folder; every one still running is stopped after the test.
    """
    started: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> subprocess.Popen[bytes]:
        process = counting_worker(["worker", "--db", queue_url, *args], tmp_path / f"worker-{len(started)}.log")
        started.append(process)
        return process

    yield start
    for process in started:
        process.terminate()
    for process in started:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


def queue_rows(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows of procrastinate's own tables, read as its operators would."""
    with psycopg.connect(url) as con:
        return con.execute(sql, params).fetchall()


def stored(runtime: Runtime, job_id: str) -> Job:
    """The job's row as it stands, read without the readers' check of a worker's process on this machine (which
    would fail a killed worker's job at once): what the queue itself did.
    """
    with runtime.db.connect() as con:
        job = jobs_store.get_job(con, job_id)
    assert job is not None
    return job


def wait_for(runtime: Runtime, job_id: str, ready: Callable[[Job], bool], timeout_s: float = 120) -> Job:
    """The job once ``ready``: a bound, not a speed (a worker's first step loads the model and the corpus: 25 s on
    a loaded machine).
    """
    deadline = time.monotonic() + timeout_s
    job = stored(runtime, job_id)
    while not ready(job):
        assert time.monotonic() < deadline, f"job never got there: {job.to_json()}"
        time.sleep(0.2)
        job = stored(runtime, job_id)
    return job


def queue_status(runtime: Runtime, url: str, job_id: str) -> str:
    """What procrastinate says of the entry carrying the product's job out."""
    with runtime.db.connect() as con:
        entry = jobs_store.queue_job_of(con, job_id)
    return str(queue_rows(url, "SELECT status FROM procrastinate_jobs WHERE id = %s", entry)[0][0])


def queue_outcome(runtime: Runtime, url: str, job_id: str, timeout_s: float = 15) -> str:
    """How procrastinate ended the entry: it records that a moment after the product's job ended (the task
    returns or raises once the job's row is written), so wait for it, within a bound.
    """
    deadline = time.monotonic() + timeout_s
    while (status := queue_status(runtime, url, job_id)) in ("todo", "doing") and time.monotonic() < deadline:
        time.sleep(0.1)
    return status
