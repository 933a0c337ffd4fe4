"""Structured answers through real HTTP: each JSON prompt's schema reaches the server in the form its provider
takes (or the setting forces), free text asks for none, and a server that refuses a form is asked again at once in
the next weaker one, which the gateway then keeps.
"""

from __future__ import annotations

import logging
import threading

import pytest

from explorer.prompts.dreaming import FUSION
from explorer.prompts.reading import IMPLANT
from explorer.providers.budget import Budget
from explorer.providers.structured import first_form
from explorer.store.calls import recent_calls
from explorer.testing.model_server import LLAMA_CPP_PYTHON_REJECTION, SERVED_MODEL, Reply, Request, rejecting

MEMORIES = {"memories": "[1] (fact, 0.4) Cats purr when they are content.\n\n[2] (fact, 0.3) A content cat purrs."}
IMPLANT_FIELDS = {"new_info": "Cats purr when they are content.", "existing_knowledge": "[1] Dogs wag their tails."}
PRICES = {SERVED_MODEL: (1000.0, 2000.0)}  # dollars per million tokens: every attempt costs something
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "fusion", "schema": FUSION.schema, "strict": True}}
SCHEMA_IN_JSON_OBJECT = {"type": "json_object", "schema": FUSION.schema}


def served(make_runtime, server, model=SERVED_MODEL, **settings):
    runtime = make_runtime(local_model=model, api_base=server.url, **settings)
    runtime.gateway._sleep = lambda s: None  # backoff is not what is tested here
    return runtime


def logged(runtime) -> list[tuple[str, float, str | None]]:
    """(outcome, cents, error) of each logged attempt, oldest first."""
    runtime.calls.flush()
    with runtime.db.connect() as con:
        return [(c.outcome, c.cost_cents, c.error) for c in recent_calls(con, 100)]


@pytest.mark.parametrize(
    "model,sent",
    [
        (SERVED_MODEL, JSON_SCHEMA),  # the generic OpenAI-compatible route: the OpenAI form first
        ("hosted_vllm/test-model", JSON_SCHEMA),
        ("lm_studio/test-model", JSON_SCHEMA),
        ("llamafile/test-model", SCHEMA_IN_JSON_OBJECT),  # llama.cpp's server under litellm's llamafile route
    ],
)
def test_the_schema_is_sent_in_the_form_the_provider_takes(make_runtime, model_server, model, sent) -> None:
    server = model_server()
    answer = served(make_runtime, server, model).gateway.ask(FUSION, MEMORIES)
    assert answer.ok, answer.error
    assert [request.response_format for request in server.requests] == [sent]


@pytest.mark.parametrize(
    "setting,model,sent",
    [
        ("json_schema", "llamafile/test-model", JSON_SCHEMA),
        ("json_object", SERVED_MODEL, SCHEMA_IN_JSON_OBJECT),
    ],
)
def test_the_setting_forces_the_form(make_runtime, model_server, setting, model, sent) -> None:
    server = model_server()
    assert served(make_runtime, server, model, structured=setting).gateway.ask(FUSION, MEMORIES).ok
    assert [request.response_format for request in server.requests] == [sent]


@pytest.mark.parametrize("setting,sent", [("auto", JSON_SCHEMA), ("off", None)])
def test_both_tiers_are_sent_the_same(make_runtime, model_server, setting, sent) -> None:
    server = model_server()
    runtime = served(make_runtime, server, cloud_model=SERVED_MODEL, structured=setting)
    assert [runtime.gateway.ask(FUSION, MEMORIES, tier=tier).tier for tier in ("local", "cloud")] == ["local", "cloud"]
    assert [request.response_format for request in server.requests] == [sent, sent]


def test_a_free_text_prompt_asks_for_no_format(make_runtime, model_server) -> None:
    server = model_server()
    assert served(make_runtime, server).gateway.ask(IMPLANT, IMPLANT_FIELDS).ok
    assert [request.response_format for request in server.requests] == [None]


def test_a_refused_form_steps_down_at_once_and_is_remembered(make_runtime, model_server, caplog) -> None:
    server = model_server(script=rejecting("json_schema"))  # llama-cpp-python's server: a 500 for json_schema
    runtime = served(make_runtime, server, prices=PRICES, retries=0)
    budget = Budget(limit_cents=10_000)
    with caplog.at_level(logging.WARNING, logger="explorer.providers.structured"):
        first = runtime.gateway.ask(FUSION, MEMORIES, budget=budget)
        second = runtime.gateway.ask(FUSION, MEMORIES, budget=budget)
    assert first.ok and first.attempts == 2  # the step down is not one of the retries (there are none here)
    assert second.ok and second.attempts == 1
    assert [request.response_format for request in server.requests] == [JSON_SCHEMA] + [SCHEMA_IN_JSON_OBJECT] * 2
    calls = logged(runtime)
    assert [outcome for outcome, _, _ in calls] == ["error", "ok", "ok"]
    assert 'must be one of "text" or "json_object"' in (calls[0][2] or "")
    assert calls[0][1] > 0 and budget.spent_cents == pytest.approx(sum(cents for _, cents, _ in calls))
    (line,) = [record.getMessage() for record in caplog.records]
    assert line.startswith(f"{SERVED_MODEL} refused structured answers as json_schema, asked as json_object_schema")
    assert "\n" not in line


def test_a_refusal_worded_as_a_validation_error_is_logged_with_its_field_and_problem(
    make_runtime, model_server, caplog
) -> None:
    """llama-cpp-python's server says "1 validation error:" on its first line and what failed on the next."""
    server = model_server(script=rejecting("json_schema", error=LLAMA_CPP_PYTHON_REJECTION))
    runtime = served(make_runtime, server, retries=0)
    with caplog.at_level(logging.WARNING, logger="explorer.providers.structured"):
        assert runtime.gateway.ask(FUSION, MEMORIES).ok
    reason = logged(runtime)[0][2] or ""
    assert reason.endswith("1 validation error: response_format.type: Input should be 'text' or 'json_object'")
    (line,) = [record.getMessage() for record in caplog.records]
    assert line.endswith(reason) and "File" not in line


def test_refusals_in_flight_together_step_down_once(make_runtime, model_server, caplog) -> None:
    together = threading.Barrier(4)  # the four refusals are answered once all four requests are in

    def refuse_together(request: Request) -> Reply | None:
        refusal = rejecting("json_schema")(request)
        if refusal is not None:
            together.wait(timeout=30)
        return refusal

    server = model_server(script=refuse_together)
    runtime = served(make_runtime, server, retries=0, concurrency=4)
    with caplog.at_level(logging.WARNING, logger="explorer.providers.structured"):
        answers = runtime.gateway.ask_each([(FUSION, MEMORIES)] * 4)
    assert all(answer.ok and answer.attempts == 2 for answer in answers)
    assert sorted(request.form for request in server.requests) == ["json_object"] * 4 + ["json_schema"] * 4
    assert len(caplog.records) == 1


def test_the_step_down_is_reserved_against_the_budget_like_any_attempt(make_runtime, model_server) -> None:
    server = model_server(script=rejecting("json_schema"))
    runtime = served(make_runtime, server, prices=PRICES)
    worst = runtime.gateway.worst_case_cents(FUSION, MEMORIES, SERVED_MODEL)
    # The refused attempt is charged its prompt (a tenth of the worst case here), which leaves too little.
    answer = runtime.gateway.ask(FUSION, MEMORIES, budget=Budget(limit_cents=worst * 1.05))
    assert answer.refused and answer.attempts == 1  # the refused request was paid for; the next cannot be
    assert [request.form for request in server.requests] == ["json_schema"]


def test_each_refusal_steps_one_form_down_until_nothing_is_sent(make_runtime, model_server) -> None:
    server = model_server(script=rejecting("json_schema", "json_object", status=400, error="response_format unknown"))
    answer = served(make_runtime, server, retries=0).gateway.ask(FUSION, MEMORIES)
    assert answer.ok and answer.attempts == 4
    assert [request.response_format for request in server.requests] == [
        JSON_SCHEMA,
        SCHEMA_IN_JSON_OBJECT,
        {"type": "json_object"},
        None,
    ]


def test_a_failure_that_does_not_name_the_form_keeps_it(make_runtime, model_server) -> None:
    server = model_server(script=[Reply(status=500, error="out of memory"), Reply(status=400, error="context")])
    runtime = served(make_runtime, server, retries=1)
    assert not runtime.gateway.ask(FUSION, MEMORIES).ok  # the 500 retried, the 400 final: as before
    assert runtime.gateway.ask(FUSION, MEMORIES).ok
    assert [request.form for request in server.requests] == ["json_schema"] * 3


@pytest.mark.parametrize(
    "model,api_base,form",
    [
        ("ollama/llama3.1", None, "json_schema"),  # litellm turns it into Ollama's format
        ("ollama_chat/llama3.1", None, "json_schema"),
        ("gpt-4o-mini", None, "json_schema"),  # litellm's capability data says so
        ("gpt-3.5-turbo", None, "json_object"),  # JSON mode, no structured outputs
        ("gpt-3.5-turbo", "http://127.0.0.1:8080/v1", "json_schema"),  # an api_base: some OpenAI-compatible server
        ("cohere/command-r", None, "off"),  # no response_format at all
    ],
)
def test_auto_chooses_from_the_provider_and_litellms_capabilities(model, api_base, form) -> None:
    assert first_form(model, api_base) == form
