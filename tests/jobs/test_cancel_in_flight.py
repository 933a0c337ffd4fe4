"""A cancel reaches a background job whose run is waiting on a model: the call in flight is abandoned, not
waited for (with a model trickling its answer, ``jobs cancel`` once had no effect after 60 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psutil
import pytest

from explorer import jobs
from explorer.records.jobs import JobStatus
from explorer.runtime import Runtime
from explorer.testing.model_server import Reply
from explorer.wander import service
from explorer.wander.config import SessionConfig

TRICKLE = Reply("A step's answer. " * 200, trickle_s=0.05)  # about three minutes to send in full


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> float:
    """Seconds it took ``condition`` to hold; fails after ``timeout_s``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, f"{what}: not within {timeout_s:g} s"
        time.sleep(0.1)
    return time.monotonic() - started


def ended(runtime: Runtime, job_id: str) -> bool:
    return jobs.get(runtime, job_id).status.ended


def test_cancelling_a_walk_interrupts_the_model_call_it_waits_on(
    corpus_runtime: Runtime, model_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = model_server(script=lambda request: TRICKLE)
    monkeypatch.setenv("EXPLORER_TIMEOUT", "600")  # the deadline is far: only the cancel can end the call
    monkeypatch.setenv("EXPLORER_RETRIES", "0")
    session = service.create_session(
        corpus_runtime,
        SessionConfig(seed_concept="memory management", random_seed=1, human_checkpoint_frequency=0),
    )
    job = jobs.submit(corpus_runtime, "wander.run", {"session_id": session.id, "steps": 5})  # a worker process
    try:
        wait_until(lambda: server.in_flight > 0, 180, "the walk never asked the model")
        jobs.cancel(corpus_runtime, job.id)
        took = wait_until(lambda: ended(corpus_runtime, job.id), 15, "the cancel did not end the job")
        cancelled = jobs.get(corpus_runtime, job.id)
        assert cancelled.status is JobStatus.CANCELLED and cancelled.error is not None
        assert "cancelled by request" in cancelled.error
        assert took < 5  # the watcher reads the flag every half second; the call is abandoned at once
        wait_until(lambda: server.in_flight == 0, 5, "the abandoned call's connection stayed open")
        assert service.get_session(corpus_runtime, session.id).status == "active"  # the walk can go on later
    finally:
        pid = jobs.get(corpus_runtime, job.id).worker_pid
        if pid is not None and psutil.pid_exists(pid):
            psutil.Process(pid).terminate()
