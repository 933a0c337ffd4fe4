"""Which failures are asked again, told by litellm's exception types: a real server on 127.0.0.1 answers each
status, litellm maps it to its error, and the gateway retries it or not.
"""

from __future__ import annotations

import pytest

from explorer.prompts.reading import IMPLANT
from explorer.providers.deadline import DeadlinePassed
from explorer.providers.retries import describe, retryable, timed_out
from explorer.testing.model_server import SERVED_MODEL, Reply

IMPLANT_FIELDS = {"new_info": "Cats purr when they are content.", "existing_knowledge": "[1] Dogs wag their tails."}


def asked(make_runtime, model_server, status: int) -> int:
    """How many requests the gateway made for one answer, when the first is answered with ``status``."""
    server = model_server(script=[Reply(status=status, error=f"scripted {status}")])
    runtime = make_runtime(local_model=SERVED_MODEL, api_base=server.url, retries=2)
    runtime.gateway._sleep = lambda s: None  # backoff is not what is tested here
    runtime.gateway.ask(IMPLANT, IMPLANT_FIELDS)
    return len(server.requests)


# litellm raises its generic APIError for an OpenAI-compatible server's 403 (tried again, as an unmapped failure), and
# asks again once itself on a 422: those two are litellm's to map.
@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_request_refused_as_it_stands_is_not_asked_again(make_runtime, model_server, status: int) -> None:
    assert asked(make_runtime, model_server, status) == 1


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_a_passing_failure_is_asked_again(make_runtime, model_server, status: int) -> None:
    assert asked(make_runtime, model_server, status) == 2  # the second request is answered


def test_a_deadline_passed_is_a_timeout_worth_another_attempt() -> None:
    exc = DeadlinePassed("late")
    assert timed_out(exc) and retryable(exc)
    assert describe(exc, "embedding model m", 2.5) == "embedding model m timed out after 2.5 s"


def test_a_failure_litellm_did_not_map_is_tried_again() -> None:
    exc = ConnectionResetError("reset by peer")
    assert retryable(exc) and not timed_out(exc)
    assert describe(exc, "m", 60) == "m failed: reset by peer"
