"""Publishing to a real ``nats-server`` on a loopback port: every stored event under its own subject, in order,
with its payload, from this process, a command that exits at once, or the background worker; a server that goes away
mid-walk costs the walk nothing, and one that comes back gets the rest.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Any

import psutil
import pytest

from explorer import event_stream, jobs
from explorer.store import events as events_store
from explorer.store.events import Event
from explorer.wander import service

from .conftest import WAIT_S, NatsListener, NatsServer, eventually, new_session, stored

PUBLISHER_LOG = "explorer.nats_publisher"


def as_published(event: Event) -> tuple[str, dict[str, Any]]:
    """What a NATS subscriber receives for a stored event."""
    return event.subject, {
        "seq": event.seq,
        "subject": event.subject,
        "session_id": event.session_id,
        "created_at": event.created_at.isoformat(),
        "payload": event.payload,
    }


def test_every_event_of_a_session_is_published_in_order(
    make_runtime, corpus_copy, nats_server: NatsServer, nats_listener: NatsListener
) -> None:
    rt = make_runtime(db=corpus_copy, nats_url=nats_server.url)
    other = make_runtime(db=corpus_copy, nats_url=nats_server.url)  # two surfaces of one process: published once
    session = new_session(rt)
    service.run(rt, session.id, 3)
    service.pause(other, session.id)
    service.resume(other, session.id)
    service.run(rt, session.id, 1)
    service.stop(rt, session.id)
    log = stored(rt, session.id)
    eventually(lambda: len(nats_listener.messages) >= len(log), f"{len(log)} messages")
    assert nats_listener.messages == [as_published(e) for e in log]
    subjects = [subject for subject, _ in nats_listener.messages]
    assert subjects[0] == "wander.session.created" and subjects[-1] == "wander.session.completed"
    assert {"wander.step.started", "wander.locus.visited", "wander.session.paused", "wander.session.resumed"} <= set(
        subjects
    )


# A command's process: it opens the runtime as every surface does (NATS_URL from the environment), stores its
# events at once (before the publisher has even connected) and exits: what was queued goes out on the way.
COMMAND = """
import sys
from explorer.runtime import open_runtime
from explorer.settings import load_settings
from explorer.store import events as events_store

rt = open_runtime(load_settings())
with rt.db.transaction() as tx:
    for n in range(int(sys.argv[1])):
        events_store.emit(tx, "wander.test.exiting", {"n": n})
"""


def test_a_process_that_exits_right_after_storing_events_has_published_them(
    make_runtime, corpus_copy, nats_server: NatsServer, nats_listener: NatsListener
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", COMMAND, "200"],
        env={**os.environ, "EXPLORER_DB": str(corpus_copy), "NATS_URL": nats_server.url},
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode == 0, done.stderr
    with make_runtime(db=corpus_copy).db.connect() as con:
        log = events_store.list_events(con, subject_prefix="wander.test.")
    assert len(log) == 200
    eventually(lambda: len(nats_listener.messages) >= len(log), f"{len(log)} messages")
    assert nats_listener.messages == [as_published(e) for e in log]


def test_the_walk_goes_on_when_the_server_goes_away_and_publishing_resumes_when_it_is_back(
    make_runtime, corpus_copy, nats_server: NatsServer, nats_listener: NatsListener, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=PUBLISHER_LOG)
    rt = make_runtime(db=corpus_copy, nats_url=nats_server.url)
    session = new_session(rt)
    service.run(rt, session.id, 2)
    before = stored(rt, session.id)
    eventually(lambda: len(nats_listener.messages) >= len(before), "the first steps' messages")

    nats_server.stop()  # a crash: the walk goes on, every event in the store
    result = service.run(rt, session.id, 3)
    assert result.steps_completed == 3
    during = stored(rt, session.id)
    steps = [e.payload["step_number"] for e in during if e.subject == "wander.step.completed"]
    assert steps == [1, 2, 3, 4, 5]
    eventually(lambda: any(r.name == PUBLISHER_LOG for r in caplog.records), "a warning")
    warnings = [r.getMessage() for r in caplog.records if r.name == PUBLISHER_LOG and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "they stay in the store" in warnings[0], warnings  # once, however many events

    nats_server.start()  # back on the same port: both sides reconnect, the next steps are published again
    eventually(lambda: nats_listener.reconnections == 1, "the listener back on the server")
    service.run(rt, session.id, 2)
    after = stored(rt, session.id)
    last_steps = after[len(during) :]
    eventually(
        lambda: nats_listener.seqs()[-1:] == [last_steps[-1].seq] if nats_listener.messages else False,
        "the last step's messages",
    )
    published = {body["seq"]: (subject, body) for subject, body in nats_listener.messages}
    assert nats_listener.seqs() == sorted(published)  # in order, never twice
    assert all(published[e.seq] == as_published(e) for e in [*before, *last_steps])  # everything but the outage's
    assert any(r.getMessage().startswith("publishing events to NATS") for r in caplog.records)


@pytest.mark.duckdb_only("a worker is started on demand for a file; a server's waits for explorer worker")
def test_a_walk_run_by_the_background_worker_is_followed_and_published(
    corpus_runtime, nats_server: NatsServer, nats_listener: NatsListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The product's own arrangement: a job's worker process walks (and publishes, NATS_URL in its environment),
    and another process follows the walk in the store as it goes.
    """
    rt = corpus_runtime  # this process does not publish: only the worker's events reach the server
    session = new_session(rt)
    monkeypatch.setenv("NATS_URL", nats_server.url)  # the worker started on demand inherits it
    job = jobs.submit(rt, "wander.run", {"session_id": session.id, "steps": 3})
    try:
        followed = []
        for event in event_stream.follow(rt.db, session_id=session.id, poll_s=0.1, idle_s=WAIT_S):
            followed.append(event)
            if event.subject == "wander.step.completed" and event.payload["step_number"] == 3:
                break
        eventually(lambda: jobs.get(rt, job.id).status.ended, "the job's end")
        assert jobs.get(rt, job.id).status.value == "succeeded"
    finally:
        for process in psutil.process_iter(["cmdline"]):  # the worker would idle for a minute
            if "worker" in (command := process.info["cmdline"] or []) and str(rt.db.path) in command:
                process.terminate()
    log = stored(rt, session.id)
    assert followed == log
    walked = log[1:]  # all but the creation, which this process stored
    eventually(lambda: len(nats_listener.messages) >= len(walked), f"{len(walked)} messages")
    assert nats_listener.messages == [as_published(e) for e in walked]
