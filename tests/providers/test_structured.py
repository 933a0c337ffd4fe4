"""Structured answers through real HTTP: each JSON prompt's schema reaches the server in the form its provider
takes (or the setting forces), free text asks for none, and a server that refuses a form is asked again at once in
the next weaker one, which the gateway then keeps (and the next command, from a file beside the database);
requests in flight together wait for the first one's word on the form.
"""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from explorer.offline import OfflineProvider
from explorer.offline.kit import OfflineKit
from explorer.prompts.dreaming import FUSION
from explorer.prompts.reading import IMPLANT
from explorer.providers.budget import Budget
from explorer.providers.embeddings import HashingEmbedder
from explorer.providers.gateway import Gateway
from explorer.providers.structured import KEPT_S, FormCache, StructuredForms, first_form, forms_file
from explorer.settings import Settings
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
    assert [outcome for outcome, _, _ in calls] == ["form_refused", "ok", "ok"]  # the server's word, not a failure
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


def test_requests_in_flight_together_wait_for_the_first_ones_word_on_the_form(
    make_runtime, model_server, caplog
) -> None:
    """Four entity requests of one ingest at once: one asks in json_schema, the others wait for its refusal."""
    refused = threading.Event()

    def refuse_slowly(request: Request) -> Reply | None:
        refusal = rejecting("json_schema")(request)
        if refusal is not None:
            time.sleep(0.3)  # long enough for the other three to be asked and waiting
            refused.set()
        return refusal

    server = model_server(script=refuse_slowly)
    runtime = served(make_runtime, server, retries=0, concurrency=4)
    with caplog.at_level(logging.WARNING, logger="explorer.providers.structured"):
        answers = runtime.gateway.ask_each([(FUSION, MEMORIES)] * 4)
    assert refused.is_set() and all(answer.ok for answer in answers)
    assert sorted(answer.attempts for answer in answers) == [1, 1, 1, 2]
    assert sorted(request.form for request in server.requests) == ["json_object"] * 4 + ["json_schema"]
    assert sorted(outcome for outcome, _, _ in logged(runtime)) == ["form_refused"] + ["ok"] * 4
    assert len(caplog.records) == 1


def test_the_next_command_starts_in_the_form_learnt(make_runtime, model_server) -> None:
    server = model_server(script=rejecting("json_schema"))
    assert served(make_runtime, server, retries=0).gateway.ask(FUSION, MEMORIES).ok
    assert [request.form for request in server.requests] == ["json_schema", "json_object"]
    kept = json.loads(forms_file(make_runtime().settings.db_path).read_text(encoding="utf-8"))
    assert kept["servers"][server.url][SERVED_MODEL]["form"] == "json_object_schema"

    again = served(make_runtime, server, retries=0, concurrency=4)  # a new runtime, as the next command opens
    assert all(answer.ok for answer in again.gateway.ask_each([(FUSION, MEMORIES)] * 4))
    assert [request.form for request in server.requests[2:]] == ["json_object"] * 4
    assert [outcome for outcome, _, _ in logged(again)][-4:] == ["ok"] * 4


def test_a_form_learnt_is_kept_by_server_and_model(tmp_path) -> None:
    cache = FormCache(tmp_path / "forms.json")
    cache.put("http://a/v1", "m", "json_object_schema")
    cache.put("http://b/v1", "m", "off")
    assert cache.get("http://a/v1", "m") == "json_object_schema"
    assert cache.get("http://b/v1", "m") == "off"
    assert cache.get("http://a/v1", "other") is None
    assert cache.get(None, "m") is None
    assert [path.name for path in tmp_path.iterdir()] == ["forms.json"]  # no temporary file left behind


def test_a_form_learnt_long_ago_is_learnt_again(tmp_path) -> None:
    now = [1_000_000.0]
    cache = FormCache(tmp_path / "forms.json", clock=lambda: now[0])
    cache.put("http://a/v1", "m", "json_object_schema")
    now[0] += KEPT_S - 1
    assert cache.get("http://a/v1", "m") == "json_object_schema"
    now[0] += 2
    assert cache.get("http://a/v1", "m") is None


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'["a list"]', b'{"servers": {"x": 3}}'])
def test_a_corrupt_cache_is_ignored_and_written_over(make_runtime, model_server, content) -> None:
    server = model_server(script=rejecting("json_schema"))
    runtime = served(make_runtime, server, retries=0)
    path = forms_file(runtime.settings.db_path)
    path.write_bytes(content)
    assert runtime.gateway.ask(FUSION, MEMORIES).ok
    assert [request.form for request in server.requests] == ["json_schema", "json_object"]
    assert FormCache(path).get(server.url, SERVED_MODEL) == "json_object_schema"


def test_a_cache_that_cannot_be_written_is_not_fatal(model_server, tmp_path) -> None:
    server = model_server(script=rejecting("json_schema"))
    settings = Settings(local_model=SERVED_MODEL, api_base=server.url, retries=0)
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    gateway = Gateway(settings, OfflineProvider(OfflineKit(HashingEmbedder())), forms_cache=blocked / "forms.json")
    assert gateway.ask(FUSION, MEMORIES).ok
    assert gateway.ask(FUSION, MEMORIES).ok
    assert [request.form for request in server.requests] == ["json_schema", "json_object", "json_object"]


def test_a_waiting_request_waits_no_longer_than_its_timeout() -> None:
    forms = StructuredForms("json_schema", None)
    probe = forms.take("m", wait_s=5)
    started = time.monotonic()
    other = forms.take("m", wait_s=0.2)  # the probe never says: the other asks in the form as it stands
    assert probe.probe and not other.probe and other.form == "json_schema"
    assert 0.2 <= time.monotonic() - started < 2
    forms.release(probe)
    assert forms.take("m", wait_s=5).probe  # a probe that ended without a word hands its turn on


def test_a_cached_form_stronger_than_the_setting_gives_way_to_it(tmp_path) -> None:
    cache = FormCache(tmp_path / "forms.json")
    cache.put(None, "m", "json_schema")
    cache.put(None, "n", "json_object")
    assert StructuredForms("json_object", None, cache).form("m") == "json_object_schema"  # where the setting begins
    assert StructuredForms("json_schema", None, cache).form("n") == "json_object"  # the server's word, weaker


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
    assert [outcome for outcome, _, _ in logged(runtime)] == ["error", "error", "ok"]  # failures, as before


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
