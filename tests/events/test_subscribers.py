"""When events are told: ``wander.step.started`` is stored before the model is asked, subscribers hear only
committed writes (after the file is released), and a follower in one process sees another process's walk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from explorer import event_stream
from explorer.store import events as events_store
from explorer.store.events import Event
from explorer.testing.model_server import SERVED_MODEL, Reply, Request
from explorer.wander import service
from explorer.wander.errors import SessionStateError

from .conftest import WAIT_S, new_session, stored

# Another process reads the session's events while the step's model call is in flight.
READER = """
import json, sys
from explorer.providers.embeddings import HashingEmbedder
from explorer.store import open_database
from explorer.store.events import list_events
embedder = HashingEmbedder()
db = open_database(sys.argv[1], embedding_model=embedder.name, embedding_dim=embedder.dim, create=False)
with db.connect() as con:
    events = list_events(con, session_id=sys.argv[2])
print(json.dumps([[event.subject, event.payload] for event in events]))
"""


def test_step_started_is_stored_before_the_model_is_asked(corpus_copy, make_runtime, model_server) -> None:
    seen_while_thinking: list[list[list[Any]]] = []
    rt: Any = None
    session_id = ""

    def read_the_store(request: Request) -> Reply | None:
        # runs in the model server's thread while the walk waits for this answer, the file free
        done = subprocess.run(
            [sys.executable, "-c", READER, str(corpus_copy), session_id],
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert done.returncode == 0, done.stderr
        seen_while_thinking.append(json.loads(done.stdout))
        return None  # the default answer

    server = model_server(latency_s=0.05, script=read_the_store)
    rt = make_runtime(db=corpus_copy, local_model=SERVED_MODEL, api_base=server.url)
    session_id = new_session(rt).id
    service.run(rt, session_id, 2)
    assert len(seen_while_thinking) == len(server.requests) >= 2
    asking = []
    for seen in seen_while_thinking:
        # the step that asks has started, and nothing more of it is written until it has thought
        (last_subject, last), *_ = seen[::-1]
        assert last_subject == "wander.step.started"
        completed = [payload["step_number"] for subject, payload in seen if subject == "wander.step.completed"]
        assert completed == list(range(1, last["step_number"]))
        asking.append(last["step_number"])
    assert set(asking) == {1, 2}
    assert [e.subject for e in stored(rt, session_id)].count("wander.step.started") == 2


def test_subscribers_hear_committed_events_after_the_file_is_released(runtime) -> None:
    heard: list[tuple[Event, bool]] = []
    subscription = event_stream.subscribe(runtime.db, lambda e: heard.append((e, runtime.db.held)))
    with pytest.raises(RuntimeError, match="changed its mind"), runtime.db.transaction() as tx:
        events_store.emit(tx, "test.rolled_back", {"n": 1})
        raise RuntimeError("changed its mind")
    assert heard == []  # never told of a write that was rolled back
    with runtime.db.transaction() as tx:
        first = events_store.emit(tx, "test.committed", {"n": 2})
        assert heard == []  # not while the transaction is open
        second = events_store.emit(tx, "test.committed", {"n": 3})
    with runtime.db.connect() as con:
        stored_events = events_store.list_events(con)
        outside = events_store.emit(con, "test.autocommitted", {"n": 4})  # committed as it ran, told at release
        assert len(heard) == 2
    assert [e for e, _ in heard] == [*stored_events, outside] == [first, second, outside]
    assert [e.payload["n"] for e, _ in heard] == [2, 3, 4]
    assert not any(held for _, held in heard)  # a subscriber never holds up the file

    subscription.close()
    with runtime.db.transaction() as tx:
        events_store.emit(tx, "test.after_close", {})
    assert len(heard) == 3


def test_a_failing_subscriber_never_fails_the_write(runtime, caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: Event) -> None:
        raise ValueError("subscriber bug")

    heard: list[Event] = []
    subscriptions = [event_stream.subscribe(runtime.db, broken), event_stream.subscribe(runtime.db, heard.append)]
    with runtime.db.transaction() as tx:
        events_store.emit(tx, "test.written", {})
    for subscription in subscriptions:
        subscription.close()
    assert [e.subject for e in heard] == ["test.written"]
    with runtime.db.connect() as con:
        assert [e.subject for e in events_store.list_events(con)] == ["test.written"]
    assert "an event subscriber failed on test.written" in caplog.text


def test_a_step_refused_at_its_commit_is_heard_to_start_and_nothing_more(corpus_runtime) -> None:
    rt = corpus_runtime
    session = new_session(rt)
    heard: list[Event] = []
    subscription = event_stream.subscribe(rt.db, heard.append, session_id=session.id)
    inner = rt.gateway.offline

    class PausedMeanwhile:
        """A person pauses the session while the step's first model call is in flight."""

        def __init__(self) -> None:
            self.paused = False

        def answer(self, prompt: Any, fields: dict[str, Any]) -> str:
            if not self.paused:
                self.paused = True
                service.pause(rt, session.id, "a person paused")
            return inner.answer(prompt, fields)

    rt.gateway.offline = PausedMeanwhile()
    with pytest.raises(SessionStateError, match="became paused while this step was thinking"):
        service.step(rt, session.id)
    subscription.close()
    assert [e.subject for e in heard] == ["wander.step.started", "wander.session.paused"]
    assert heard == stored(rt, session.id)[1:]  # all but the creation, heard before subscribing


WALKER = """
import sys, time
from pathlib import Path
from dataclasses import replace
from explorer.providers.embeddings import HashingEmbedder
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.wander import service

db, session_id, steps, gate = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
embedder = HashingEmbedder()
rt = open_runtime(replace(Settings(), db_path=db, embedding_model=embedder.name), embedder=embedder)
for n in range(1, steps + 1):
    while not (gate / f"step-{n}").exists():  # the follower lets each step go once it saw the one before
        time.sleep(0.02)
    service.step(rt, session_id)
"""


def test_follow_sees_another_process_walk_step_by_step(corpus_runtime, tmp_path: Path) -> None:
    rt = corpus_runtime
    session = new_session(rt)
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "step-1").touch()
    steps = 3
    walker = subprocess.Popen(
        [sys.executable, "-c", WALKER, str(rt.settings.db_path), session.id, str(steps), str(gate)],
        env=dict(os.environ),
        stderr=subprocess.PIPE,
        text=True,
    )
    followed: list[Event] = []
    live: list[bool] = []
    try:
        for event in event_stream.follow(rt.db, session_id=session.id, poll_s=0.05, idle_s=WAIT_S):
            followed.append(event)
            if event.subject == "wander.step.completed":
                number = event.payload["step_number"]
                live.append(walker.poll() is None)  # the walker is still there, waiting for the next gate
                if number == steps:
                    break
                (gate / f"step-{number + 1}").touch()
        assert walker.wait(timeout=WAIT_S) == 0, walker.stderr.read() if walker.stderr else ""
    finally:
        if walker.poll() is None:
            walker.kill()
    assert live[:-1] == [True] * (steps - 1)
    assert followed == stored(rt, session.id)  # everything, the creation included, in order, once
    # a follower that starts later picks up where it is told to, and narrows to a subject family
    later = list(
        event_stream.follow(rt.db, session.id, "wander.step.", after_seq=followed[3].seq, poll_s=0.05, idle_s=0.2)
    )
    assert later == [e for e in followed[4:] if e.subject.startswith("wander.step.")]


def test_follow_picks_up_an_event_committed_after_a_later_numbered_one(runtime) -> None:
    """Two threads of one process: the first takes a number, the second commits a later one before the first
    commits; a follower that has seen the later one still gets the earlier one when it is committed.
    """
    taken, release = threading.Event(), threading.Event()

    def slow_writer() -> None:
        with runtime.db.transaction() as tx:
            events_store.emit(tx, "test.slow", {})
            taken.set()
            release.wait(WAIT_S)

    with runtime.db.transaction() as tx:
        events_store.emit(tx, "test.first", {})
    slow = threading.Thread(target=slow_writer)
    slow.start()
    taken.wait(WAIT_S)
    with runtime.db.transaction() as tx:
        events_store.emit(tx, "test.fast", {})
    following = event_stream.follow(runtime.db, poll_s=0.05, idle_s=WAIT_S)
    got = [next(following), next(following)]
    assert [e.subject for e in got] == ["test.first", "test.fast"]
    release.set()
    slow.join()
    late = next(following, None)
    assert late is not None, "the follower never saw the event committed late"
    assert late.subject == "test.slow" and got[0].seq < late.seq < got[1].seq
