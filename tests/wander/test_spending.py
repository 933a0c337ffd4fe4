"""What a step's model calls add to its session's counters (:meth:`Spending.spent_on`)."""

from __future__ import annotations

from dataclasses import replace

from explorer.prompts.wander import DWELLING
from explorer.records.wander import Session
from explorer.wander.config import WanderTuning
from explorer.wander.guards import Spending

from .conftest import mock_json


def test_spending_adds_each_tier_and_the_cents_to_the_session_it_is_written_to(make_runtime) -> None:
    rt = make_runtime(
        local_model="ollama/llama3",
        cloud_model="gpt-4o-mini",
        prices={"gpt-4o-mini": (10.0, 100.0)},  # dollars per million tokens; the local model is free
        completion_kwargs={"mock_response": mock_json()},
    )
    started = Session(
        name="s",
        seed_concept="x",
        cloud_budget_cents=500,
        cloud_spent_cents=0.1,
        local_calls=2,
        cloud_calls=1,
        offline_calls=3,
    )
    spending = Spending(rt.gateway, started, WanderTuning())
    fields = {name: "a concept" for name in DWELLING.fields}
    for tier in ("cloud", "cloud", "local", "offline"):
        assert spending.ask(DWELLING, fields, tier=tier).tier == tier
    cents = spending.cloud_cents
    assert cents > 0

    assert spending.spent_on(started) == {
        "cloud_spent_cents": round(0.1 + cents, 6),
        "local_calls": 3,
        "cloud_calls": 3,
        "offline_calls": 4,
    }
    # a person's crystallize re-reads the session before writing: the calls count on top of what it holds now
    now = replace(started, cloud_spent_cents=1.0, local_calls=10, cloud_calls=0, offline_calls=0)
    assert spending.spent_on(now) == {
        "cloud_spent_cents": round(1.0 + cents, 6),
        "local_calls": 11,
        "cloud_calls": 2,
        "offline_calls": 1,
    }
