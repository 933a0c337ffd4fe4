"""The gateway over litellm (with mock_response: no network) and its call log."""

from __future__ import annotations

import litellm
import pytest

from explorer.prompts.reading import ENTITIES, IMPLANT
from explorer.store.calls import call_summary

PASSAGE = {"passage": "Guido van Rossum created Python. Python favours readability.", "max_entities": 3}


def test_model_answer_is_parsed_costed_and_logged(make_runtime) -> None:
    runtime = make_runtime(
        local_model="gpt-4o-mini",
        completion_kwargs={"mock_response": "- Guido van Rossum: created Python\n- Python: readable"},
    )
    answer = runtime.gateway.ask(ENTITIES, PASSAGE)
    assert answer.ok and answer.tier == "local" and answer.model == "gpt-4o-mini"
    assert [e.entity for e in answer.value] == ["Guido van Rossum", "Python"]
    assert answer.cost_cents > 0  # litellm prices gpt-4o-mini from its local cost map
    runtime.calls.flush()
    with runtime.db.connect() as con:
        (row,) = call_summary(con)
    assert row[:4] == ("local", "gpt-4o-mini", "ok", 1)


def test_unparseable_answer_is_retried_then_reported(make_runtime) -> None:
    runtime = make_runtime(local_model="gpt-4o-mini", retries=1, completion_kwargs={"mock_response": "   "})
    runtime.gateway._sleep = lambda s: None
    answer = runtime.gateway.ask(IMPLANT, {"new_info": "x", "existing_knowledge": "(none)"})
    assert not answer.ok and "does not parse" in answer.error
    runtime.calls.flush()
    with runtime.db.connect() as con:
        assert call_summary(con)[0][2:4] == ("parse_error", 1)


def test_timeout_is_a_clear_failure_not_an_exception(make_runtime) -> None:
    timeout = litellm.Timeout(message="slow", model="gpt-4o-mini", llm_provider="openai")
    runtime = make_runtime(
        local_model="gpt-4o-mini", retries=2, timeout_s=5, completion_kwargs={"mock_response": timeout}
    )
    slept: list[float] = []
    runtime.gateway._sleep = slept.append
    answer = runtime.gateway.ask(IMPLANT, {"new_info": "x", "existing_knowledge": "(none)"})
    assert not answer.ok and answer.error == "gpt-4o-mini timed out after 5 s"
    assert slept == [0.5, 1.0]  # backoff between the three attempts
    runtime.calls.flush()
    with runtime.db.connect() as con:
        assert call_summary(con)[0][2] == "timeout"


def test_tiers_resolve_to_configured_models(make_runtime) -> None:
    both = make_runtime(local_model="ollama/llama3", cloud_model="gpt-4o-mini").gateway
    assert both.model_for("local") == ("ollama/llama3", "local")
    assert both.model_for("cloud") == ("gpt-4o-mini", "cloud")
    cloud_only = make_runtime(cloud_model="gpt-4o-mini").gateway
    assert cloud_only.model_for("local") == ("gpt-4o-mini", "cloud")
    offline = make_runtime().gateway
    assert offline.offline_only and offline.model_for("cloud")[1] == "offline"


@pytest.mark.parametrize(
    "text,expected",
    [
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Sure! Here it is: {"a": [1, 2]} hope that helps', {"a": [1, 2]}),
        ("[1, 2, 3]", [1, 2, 3]),
        ("{broken", None),
        ("", None),
    ],
)
def test_extract_json_tolerates_chatter(text, expected) -> None:
    from explorer.prompts import extract_json

    assert extract_json(text) == expected
