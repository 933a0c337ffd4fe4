"""The gateway against a real OpenAI-compatible server on 127.0.0.1 (real HTTP, the real litellm path):
answers parsed and logged with their tokens, one retry layer, timeouts that hold, budgets that hold,
calls in flight at once.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from explorer.prompts.reading import ENTITIES, IMPLANT
from explorer.providers.budget import Budget
from explorer.store.calls import recent_calls
from explorer.testing.model_server import SERVED_MODEL, Reply

PASSAGE = {"passage": "Guido van Rossum created Python. Python favours readability.", "max_entities": 3}
IMPLANT_FIELDS = {"new_info": "Cats purr when they are content.", "existing_knowledge": "[1] Dogs wag their tails."}
PRICES = {SERVED_MODEL: (1000.0, 2000.0)}  # dollars per million tokens: dear, so cents add up fast


def served(make_runtime, server, **settings):
    runtime = make_runtime(local_model=SERVED_MODEL, api_base=server.url, **settings)
    runtime.gateway._sleep = lambda s: None  # backoff is tested by its bound, not waited for
    return runtime


def logged(runtime) -> list[tuple]:
    """(outcome, prompt tokens, completion tokens, cents) of each logged attempt, in order."""
    runtime.calls.flush()
    with runtime.db.connect() as con:
        return [(c.outcome, c.prompt_tokens, c.completion_tokens, c.cost_cents) for c in recent_calls(con, 1000)]


def test_an_answer_is_parsed_priced_and_logged_with_its_tokens(make_runtime, model_server) -> None:
    entities = [
        {"entity": "Guido van Rossum", "learning": "created Python"},
        {"entity": "Python", "learning": "readable"},
    ]
    server = model_server(script=[Reply(json.dumps({"entities": entities}))])
    runtime = served(make_runtime, server, prices=PRICES)
    answer = runtime.gateway.ask(ENTITIES, PASSAGE)
    assert answer.ok and answer.tier == "local" and answer.model == SERVED_MODEL
    assert [e.entity for e in answer.value] == ["Guido van Rossum", "Python"]
    assert server.kinds() == ["entities"] and answer.attempts == 1
    ((outcome, prompt_tokens, completion_tokens, cost),) = logged(runtime)
    assert outcome == "ok" and prompt_tokens > 0 and completion_tokens > 0
    assert cost == pytest.approx((prompt_tokens * 1000 + completion_tokens * 2000) / 1e6 * 100)
    assert cost == pytest.approx(answer.cost_cents)


@pytest.mark.parametrize("status", [500, 429])
def test_a_server_error_is_retried_by_the_product_alone(make_runtime, model_server, status) -> None:
    server = model_server(script=[Reply(status=status)])
    answer = served(make_runtime, server, retries=2).gateway.ask(IMPLANT, IMPLANT_FIELDS)
    assert answer.ok and answer.attempts == 2
    assert len(server.requests) == 2  # the HTTP client's own retries are off: no hidden third request


def test_every_unparseable_attempt_is_logged_and_counted(make_runtime, model_server) -> None:
    server = model_server(script=[Reply("   "), Reply("")])
    runtime = served(make_runtime, server, retries=1)
    answer = runtime.gateway.ask(IMPLANT, IMPLANT_FIELDS)
    assert not answer.ok and answer.attempts == 2
    assert answer.error == f"{SERVED_MODEL}'s answer to implant was refused: empty answer"
    assert [row[0] for row in logged(runtime)] == ["parse_error", "parse_error"]


def test_a_slow_model_times_out_within_timeout_times_attempts(make_runtime, model_server) -> None:
    server = model_server(latency_s=3.0)
    runtime = served(make_runtime, server, timeout_s=0.4, retries=1)
    started = time.perf_counter()
    answer = runtime.gateway.ask(IMPLANT, IMPLANT_FIELDS)
    elapsed = time.perf_counter() - started
    assert not answer.ok and answer.error == f"{SERVED_MODEL} timed out after 0.4 s"
    assert len(server.requests) == 2 and answer.attempts == 2
    assert elapsed < 0.4 * 2 + 1.0  # timeout × (retries + 1), plus slack; without backoff (not waited here)
    assert [row[0] for row in logged(runtime)] == ["timeout", "timeout"]


def test_a_budget_is_never_exceeded_even_with_calls_in_flight(make_runtime, model_server) -> None:
    # Malformed answers are retried, and every attempt costs: the budget must hold across all of them.
    server = model_server(latency_s=0.05, script=lambda request: Reply('{"broken'))
    runtime = served(make_runtime, server, retries=2, prices=PRICES, concurrency=8)
    budget = Budget(limit_cents=100.0)
    answers = runtime.gateway.map(lambda _: runtime.gateway.ask(IMPLANT, IMPLANT_FIELDS, budget=budget), range(40))
    spent = sum(row[3] for row in logged(runtime))
    assert spent == pytest.approx(budget.spent_cents) and 0 < spent <= 100.0
    assert budget.exhausted and any(a.refused for a in answers)
    assert len(server.requests) == sum(a.attempts for a in answers)  # a refused attempt is never sent


def test_map_keeps_calls_in_flight_and_results_in_order(make_runtime, model_server) -> None:
    server = model_server(latency_s=0.5, script=lambda request: Reply(f"Echo: {request.fields['new_info']}"))
    runtime = served(make_runtime, server, concurrency=8)
    texts = [f"Passage number {i} says something new about topic {i}." for i in range(8)]
    # litellm is imported, and its client made, by the first call: seconds a fresh process pays once, inside
    # the first calls of the map, which then overlap less than eight
    runtime.gateway.ask(IMPLANT, {"new_info": "A warm-up passage.", "existing_knowledge": "(none)"})
    started = time.perf_counter()
    answers = runtime.gateway.map(
        lambda text: runtime.gateway.ask(IMPLANT, {"new_info": text, "existing_knowledge": "(none)"}), texts
    )
    assert server.peak_in_flight == 8
    assert time.perf_counter() - started < 8 * 0.5  # not one after another
    assert all(a.ok for a in answers)
    assert [a.value for a in answers] == [f"Echo: {text}" for text in texts]


def test_map_bounds_requests_in_flight_not_items_so_chained_calls_fill_every_slot(make_runtime, model_server) -> None:
    # Each item asks twice with work between (a dream asks three times): no slot is held across that work, so
    # all four items are under way with two slots. Were items bounded instead, two would wait at the barrier
    # for two that never start.
    server = model_server(latency_s=0.2, script=lambda request: Reply(f"Echo: {request.fields['new_info']}"))
    runtime = served(make_runtime, server, concurrency=2)
    between = threading.Barrier(4, timeout=20)

    def chained(text: str) -> list[str | None]:
        first = runtime.gateway.ask(IMPLANT, {"new_info": text, "existing_knowledge": "(none)"})
        between.wait()
        second = runtime.gateway.ask(IMPLANT, {"new_info": f"{text} again", "existing_knowledge": "(none)"})
        return [first.value, second.value]

    texts = [f"Passage {i} says something new." for i in range(4)]
    results = runtime.gateway.map(chained, texts)
    assert results == [[f"Echo: {t}", f"Echo: {t} again"] for t in texts]
    assert server.peak_in_flight == 2  # the setting bounds the requests, whatever the items do
    assert len(server.requests) == 8


@pytest.mark.parametrize(
    "hostile,reason",
    [
        ("x" * 204_800, "over the"),  # a runaway answer is refused before it is parsed
        ('{"insight": "a paragraph was asked"}', "JSON where a paragraph was asked"),
    ],
)
def test_a_bad_answer_fails_its_call_with_the_reason(make_runtime, model_server, hostile, reason) -> None:
    server = model_server(script=[Reply(hostile)])
    answer = served(make_runtime, server, retries=0).gateway.ask(IMPLANT, IMPLANT_FIELDS)
    assert not answer.ok and answer.value is None and reason in answer.error


def test_answer_caps_come_from_the_settings(make_runtime, model_server) -> None:
    server = model_server(script=[Reply("A fine paragraph that is, however, longer than forty characters.")])
    answer = served(make_runtime, server, retries=0, answer_caps={"implant": 40}).gateway.ask(IMPLANT, IMPLANT_FIELDS)
    assert not answer.ok and "over the 40-character cap for implant" in answer.error


def test_the_offline_provider_answers_one_at_a_time(make_runtime) -> None:
    assert make_runtime(concurrency=8).gateway.concurrency == 1


def test_tiers_resolve_to_configured_models(make_runtime) -> None:
    both = make_runtime(local_model="ollama/llama3", cloud_model="gpt-4o-mini").gateway
    assert both.model_for("local") == ("ollama/llama3", "local")
    assert both.model_for("cloud") == ("gpt-4o-mini", "cloud")
    cloud_only = make_runtime(cloud_model="gpt-4o-mini").gateway
    assert cloud_only.model_for("local") == ("gpt-4o-mini", "cloud")
    offline = make_runtime().gateway
    assert offline.offline_only and offline.model_for("cloud")[1] == "offline"


def test_prices_from_settings_win_for_models_litellm_does_not_know(make_runtime) -> None:
    gateway = make_runtime(local_model="openai/my-own", prices={"openai/my-own": (0.5, 1.5)}).gateway
    assert gateway.token_prices("openai/my-own") == (0.5e-6, 1.5e-6)
    assert gateway.token_prices("openai/unknown-to-everyone") is None
    assert gateway.worst_case_cents(IMPLANT, IMPLANT_FIELDS, "openai/unknown-to-everyone") == 0.0


@pytest.mark.parametrize(
    "text,expected",
    [
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Sure! Here it is: {"a": [1, 2]} hope that helps', {"a": [1, 2]}),
        ("[1, 2, 3]", [1, 2, 3]),
        # a reflection that quotes a code block is still the object it is in, not the list in the code
        ('{"residue": "it reads ```\n[1, 2]\n``` as a list"}', {"residue": "it reads ```\n[1, 2]\n``` as a list"}),
        ("{broken", None),
        ("", None),
    ],
)
def test_extract_json_tolerates_chatter(text, expected) -> None:
    from explorer.prompts import extract_json

    assert extract_json(text) == expected
