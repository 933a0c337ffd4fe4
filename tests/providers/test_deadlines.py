"""A model call ends by its deadline, however the server answers, and a cancel ends it sooner.

Against a real server on 127.0.0.1 that sends its headers and then trickles its body a byte at a time: never
silent long enough for the HTTP client's per-read timeout, never done. Each call runs in a thread the test waits
for with a bound, so a call that hangs fails the test instead of holding it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from explorer.prompts.reading import IMPLANT
from explorer.providers.deadline import CallCancelled
from explorer.store.calls import recent_calls
from explorer.testing.model_server import SERVED_MODEL, ModelServer, Reply

FIELDS = {"new_info": "Cats purr when they are content.", "existing_knowledge": "[1] Dogs wag their tails."}
TRICKLE = Reply("Cats purr. " * 200, trickle_s=0.05)  # about two minutes to send in full


def warmed(make_runtime, server, **settings):
    """A runtime asking ``server``, in a process warmed by one call answered first with the default timeout:
    litellm's import and its lazy set-up of a first request (seconds on a loaded machine) are this process's
    doing, not the server's, and would eat a short deadline.
    """
    make_runtime(local_model=SERVED_MODEL, api_base=server.url).gateway.ask(IMPLANT, FIELDS)
    return make_runtime(local_model=SERVED_MODEL, api_base=server.url, **settings)


def served(make_runtime, server, **settings):
    """A warmed runtime whose backoff between attempts is not waited for (it is bounded elsewhere)."""
    runtime = warmed(make_runtime, server, **settings)
    runtime.gateway._sleep = lambda s: None
    return runtime


def trickling(model_server) -> ModelServer:
    """A server answering the first request (the warm-up) at once and trickling every later one."""
    server: ModelServer = model_server(script=lambda request: TRICKLE if len(server.requests) > 1 else None)
    return server


def in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """``call`` started in a daemon thread; the dict gets its ``result`` or its ``raised`` exception."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - a cancel is a BaseException, and it is what is looked for
            outcome["raised"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def wait_until(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.02)


def test_a_trickling_answer_times_out_at_the_deadline_of_each_attempt(make_runtime, model_server) -> None:
    server = trickling(model_server)
    runtime = served(make_runtime, server, timeout_s=1.0, retries=1)
    started = time.perf_counter()
    thread, outcome = in_thread(lambda: runtime.gateway.ask(IMPLANT, FIELDS))
    thread.join(timeout=1.0 * 2 + 8.0)  # timeout × (retries + 1), and generous slack for a loaded machine
    assert not thread.is_alive(), "the call outlived its deadline"
    answer = outcome["result"]
    assert not answer.ok and answer.error == f"{SERVED_MODEL} timed out after 1 s"
    assert answer.attempts == 2 and len(server.requests) == 1 + 2
    assert time.perf_counter() - started >= 2.0  # each attempt had its whole second
    runtime.calls.flush()
    with runtime.db.connect() as con:
        assert [c.outcome for c in recent_calls(con, 10)] == ["timeout", "timeout"]
    wait_until(lambda: server.in_flight == 0, timeout_s=5)  # the abandoned requests' connections were closed


def test_a_cancel_interrupts_a_call_in_flight_and_refuses_the_next(make_runtime, model_server) -> None:
    server = trickling(model_server)
    runtime = served(make_runtime, server, timeout_s=600.0, retries=2)
    thread, outcome = in_thread(lambda: runtime.gateway.ask(IMPLANT, FIELDS))
    wait_until(lambda: server.in_flight == 1)
    runtime.gateway.cancel()
    thread.join(timeout=3.0)
    assert not thread.is_alive(), "the cancel did not interrupt the call"
    assert isinstance(outcome.get("raised"), CallCancelled)
    assert len(server.requests) == 1 + 1  # not retried
    with pytest.raises(CallCancelled):
        runtime.gateway.ask(IMPLANT, FIELDS)
    assert len(server.requests) == 1 + 1  # a cancelled gateway sends nothing
    wait_until(lambda: server.in_flight == 0, timeout_s=5)
    runtime.calls.flush()
    with runtime.db.connect() as con:
        (abandoned,) = recent_calls(con, 10)
    assert abandoned.outcome == "error"
    assert abandoned.error == f"{SERVED_MODEL}'s call was abandoned: the run was cancelled"


def test_a_gateway_resumed_after_a_cancel_answers_again(make_runtime, model_server) -> None:
    server = model_server()
    runtime = served(make_runtime, server)
    runtime.gateway.cancel()
    with pytest.raises(CallCancelled):
        runtime.gateway.ask(IMPLANT, FIELDS)
    runtime.gateway.resume()
    assert runtime.gateway.ask(IMPLANT, FIELDS).ok and len(server.requests) == 1 + 1


def test_a_cancel_cuts_the_backoff_between_attempts_short(make_runtime, model_server) -> None:
    server = model_server(script=[Reply(), Reply(status=500), Reply(status=500)])
    runtime = warmed(make_runtime, server, retries=5)  # the backoff waited for: 0.5, 1, 2 … s
    thread, outcome = in_thread(lambda: runtime.gateway.ask(IMPLANT, FIELDS))
    wait_until(lambda: len(server.requests) == 1 + 2)
    time.sleep(0.2)  # the second 500 is back: the gateway is in its one-second backoff
    runtime.gateway.cancel()
    thread.join(timeout=0.8)
    assert not thread.is_alive() and isinstance(outcome.get("raised"), CallCancelled)
    assert len(server.requests) == 1 + 2
