"""Stages of the step (explorer/wander/walk.py) that decide on their own: how a step ends the session, and what
here remembers of the candidates it led to. The whole chain is walked by the service tests.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from explorer.records.wander import Adjacency, Locus, Session, Strategy, utcnow
from explorer.wander.walk import CONNECTIONS_KEPT, _links_from, _settled


def test_a_step_ends_the_session_by_the_first_rule_that_holds() -> None:
    now = utcnow()
    last = Session(
        name="s",
        seed_concept="x",
        max_steps=10,
        step_count=10,
        human_checkpoint_frequency=5,
        cloud_budget_cents=3,
        cloud_spent_cents=3.0,
    )
    done = _settled(last, "circuit breaker: loop", True, now)
    assert (done.status, done.status_reason, done.pause_kind, done.completed_at) == (
        "completed",
        "reached max steps (10)",
        None,
        now,
    )
    mid = replace(last, step_count=5)
    tripped = _settled(mid, "circuit breaker: loop", True, now)
    assert (tripped.status, tripped.status_reason, tripped.pause_kind) == (
        "paused",
        "circuit breaker: loop",
        "circuit_breaker",
    )
    broke = _settled(mid, None, True, now)
    assert broke.pause_kind == "budget" and broke.status_reason is not None
    assert broke.status_reason.startswith("cloud budget exhausted (3.00 of 3 cents)")
    checkpoint = _settled(mid, None, False, now)
    assert checkpoint.pause_kind == "checkpoint" and checkpoint.completed_at is None
    going = _settled(replace(mid, step_count=6, status_reason="checkpoint", pause_kind="checkpoint"), None, False, now)
    assert (going.status, going.status_reason, going.pause_kind, going.completed_at) == ("active", None, None, None)


def candidate(strategy: Strategy, note: str | None = None) -> Adjacency:
    return Adjacency(
        concept=strategy,
        embedding=np.zeros(4, np.float32),
        strategy=strategy,
        source_type="ADJACENT",
        similarity=0.25,
        score=0.61234,
        note=note,
    )


def test_here_links_to_each_candidate_by_kind_and_keeps_the_newest() -> None:
    old = [{"locus_id": f"old{i}", "distance": 0.5, "strength": 0.5} for i in range(CONNECTIONS_KEPT)]
    here = Locus(session_id="s", concept="here", embedding=None, source_type="SEED", adjacent_to=old)
    linked = [
        (candidate("cross_domain", "both reclaim"), "bridge"),
        (candidate("tension", "now or later"), "tension"),
        (candidate("distance_band"), "band"),
        (candidate("seed"), here.id),  # a step back to where it stands links nothing
    ]
    links = _links_from(here, linked)

    assert [link["locus_id"] for link in links["adjacent_to"]] == [
        *(f"old{i}" for i in range(3, CONNECTIONS_KEPT)),
        "bridge",
        "tension",
        "band",
    ]
    assert links["adjacent_to"][-1] == {"locus_id": "band", "distance": 0.75, "strength": 0.6123}
    assert links["bridges_to"] == [{"locus_id": "bridge", "bridge_type": "both reclaim", "strength": 0.25}]
    assert links["contradicts"] == [{"locus_id": "tension", "tension_description": "now or later"}]
    assert len(here.adjacent_to) == CONNECTIONS_KEPT  # here itself is left as it was read
