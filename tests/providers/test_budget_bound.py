"""No call is charged more than was reserved for it, so no budget is ever exceeded.

The reservation is the prompt, counted generously, and a full ``max_tokens`` answer, and the request sends that
``max_tokens``. A server can still report more (its usage inflated) or answer far more (ignoring
``max_tokens``); neither is charged past the reservation, and an answer over its length cap is refused once,
not asked for again at full price.
"""

from __future__ import annotations

import pytest

from explorer.prompts.reading import IMPLANT
from explorer.providers.budget import Budget
from explorer.store.calls import recent_calls
from explorer.testing.model_server import SERVED_MODEL, Reply

FIELDS = {"new_info": "Cats purr when they are content.", "existing_knowledge": "[1] Dogs wag their tails."}
PRICES = {SERVED_MODEL: (1000.0, 2000.0)}  # dollars per million tokens: one call is a measurable part of a cent
HUGE = "x" * 2_000_000  # 2 MB: reported as 500,000 completion tokens


def served(make_runtime, server, **settings):
    runtime = make_runtime(local_model=SERVED_MODEL, api_base=server.url, prices=PRICES, **settings)
    runtime.gateway._sleep = lambda s: None  # backoff is bounded elsewhere, not waited for here
    return runtime


def logged_cents(runtime) -> list[float]:
    runtime.calls.flush()
    with runtime.db.connect() as con:
        return [call.cost_cents for call in recent_calls(con, 1000)]


def test_a_server_inflating_its_usage_is_charged_at_most_each_reservation(make_runtime, model_server) -> None:
    server = model_server(script=lambda request: Reply("Cats purr; dogs wag.", usage_factor=1000))
    runtime = served(make_runtime, server, concurrency=4)
    reservation = runtime.gateway.worst_case_cents(IMPLANT, FIELDS, SERVED_MODEL)
    budget = Budget(limit_cents=reservation * 5.5)
    answers = runtime.gateway.map(lambda _: runtime.gateway.ask(IMPLANT, FIELDS, budget=budget), range(12))
    assert budget.spent_cents <= budget.limit_cents and budget.exhausted
    assert all(cents <= reservation + 1e-9 for cents in logged_cents(runtime))
    assert sum(logged_cents(runtime)) == pytest.approx(budget.spent_cents)
    assert all(request.max_tokens == IMPLANT.max_tokens for request in server.requests)  # the answer is bounded
    assert sum(a.ok for a in answers) == len(server.requests) >= 5  # what was answered is used


def test_an_answer_over_its_cap_is_refused_once_and_charged_at_most_its_reservation(make_runtime, model_server) -> None:
    server = model_server(script=lambda request: Reply(HUGE))
    runtime = served(make_runtime, server, retries=2)
    reservation = runtime.gateway.worst_case_cents(IMPLANT, FIELDS, SERVED_MODEL)
    budget = Budget(limit_cents=100.0)
    answer = runtime.gateway.ask(IMPLANT, FIELDS, budget=budget)
    assert not answer.ok and answer.attempts == 1 and len(server.requests) == 1  # not asked again
    assert answer.error == (
        f"{SERVED_MODEL}'s answer to implant was refused: answer of {len(HUGE)} characters is over the "
        f"{IMPLANT.answer_cap}-character cap for implant (not asked again: the model ignored max_tokens)"
    )
    assert 0 < answer.cost_cents <= reservation and budget.spent_cents == pytest.approx(answer.cost_cents)
    assert logged_cents(runtime) == [pytest.approx(answer.cost_cents)]


def test_a_malformed_answer_within_its_cap_is_still_asked_again(make_runtime, model_server) -> None:
    server = model_server(script=[Reply("   ")])
    answer = served(make_runtime, server, retries=1).gateway.ask(IMPLANT, FIELDS)
    assert answer.ok and answer.attempts == 2 and len(server.requests) == 2


def test_a_budget_settles_an_attempt_at_most_at_its_reservation() -> None:
    budget = Budget(limit_cents=1.0)
    assert budget.reserve(0.6)
    budget.settle(0.6, 500.0)  # a caller passing on what a server claimed
    assert budget.spent_cents == 0.6 and budget.remaining_cents == pytest.approx(0.4)
