"""Steering and judging over HTTP: inject, fence, crystallize, review (once), search, and what a session holds."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .conftest import Server, error_of, new_session


def test_crystallize_without_a_resonance_is_refused(api: httpx.Client) -> None:
    # first in this module, before ``walked``: another session's confirmed resonance is in any session's reach
    session_id = new_session(api)["id"]
    error = error_of(api.post(f"/wander/sessions/{session_id}/crystallize"), 409)
    assert error["code"] == "refused" and "resonance" in error["message"]


@pytest.fixture(scope="module")
def walked(server: Server) -> dict[str, Any]:
    """A session walked five steps and crystallized (as the README's CLI check does, from the seed that forms one):
    it has a crystal.
    """
    with server.client() as api:
        session = new_session(api, random_seed=2)
        assert api.post(f"/wander/sessions/{session['id']}/wander", json={"n_steps": 4}).status_code == 200
        assert api.post(f"/wander/sessions/{session['id']}/step").status_code == 200
        attempt = api.post(f"/wander/sessions/{session['id']}/crystallize")
        assert attempt.status_code == 200, attempt.text
        return {"session": session, "attempt": attempt.json()}


def test_crystallize_forms_a_crystal_that_is_listed_in_and_across_sessions(api: httpx.Client, walked) -> None:
    crystal = walked["attempt"]["crystal"]
    assert crystal and crystal["insight"] and crystal["review_state"] == "pending"
    session_id = walked["session"]["id"]
    assert crystal["id"] in [c["id"] for c in api.get(f"/wander/sessions/{session_id}/crystals").json()]
    everywhere = api.get("/wander/crystals", params={"status": "active", "min_confidence": 0}).json()
    assert crystal["id"] in [c["id"] for c in everywhere]
    assert api.get("/wander/crystals", params={"min_confidence": 1.5}).status_code == 422


def test_a_crystal_is_reviewed_once_unless_forced(api: httpx.Client, walked) -> None:
    crystal_id = walked["attempt"]["crystal"]["id"]
    approved = api.post(
        f"/wander/crystals/{crystal_id}/review", json={"decision": "approve", "reviewer": "a reader", "notes": "fine"}
    )
    assert approved.status_code == 200, approved.text
    assert approved.json()["review_state"] == "approved" and approved.json()["human_approved_by"] == "a reader"
    again = error_of(api.post(f"/wander/crystals/{crystal_id}/review", json={"decision": "reject"}), 409)
    assert again["code"] == "wrong_state" and '"force": true' in again["message"]
    forced = api.post(f"/wander/crystals/{crystal_id}/review", json={"decision": "reject", "force": True})
    assert forced.json()["review_state"] == "rejected"
    error_of(api.post("/wander/crystals/no-such-crystal/review", json={"decision": "approve"}), 404)
    error_of(api.post(f"/wander/crystals/{crystal_id}/review", json={"decision": "love"}), 422)


def test_memory_of_a_session_loci_trace_and_resonances(api: httpx.Client, walked) -> None:
    session_id = walked["session"]["id"]
    loci = api.get(f"/wander/sessions/{session_id}/loci").json()
    visited = api.get(f"/wander/sessions/{session_id}/loci", params={"visited": True}).json()
    interesting = api.get(f"/wander/sessions/{session_id}/loci", params={"min_interestingness": 0.99}).json()
    assert len(visited) < len(loci) and {v["id"] for v in visited} <= {x["id"] for x in loci}
    assert all(x["interestingness"] >= 0.99 for x in interesting)
    detail = api.get(f"/wander/sessions/{session_id}/loci/{visited[-1]['id']}").json()
    assert {"adjacent_to", "bridges_to", "contradicts"} <= set(detail) and detail["id"] == visited[-1]["id"]
    other = new_session(api)["id"]  # a locus is found only through its own session
    error_of(api.get(f"/wander/sessions/{other}/loci/{visited[-1]['id']}"), 404)
    error_of(api.get(f"/wander/sessions/{session_id}/loci/not-a-locus"), 404)
    trace = api.get(f"/wander/sessions/{session_id}/trace").json()
    assert [t["step_number"] for t in trace] == [1, 2, 3, 4, 5]
    resonances = api.get(f"/wander/sessions/{session_id}/resonances").json()
    assert resonances and all(r["session_id"] in (session_id, None) for r in resonances)
    everywhere = {r["id"] for r in api.get("/wander/resonances", params={"project_id": "any"}).json()}
    assert {r["id"] for r in resonances} <= everywhere
    assert api.get("/wander/resonances", params={"status": "shiny"}).status_code == 422


def test_inject_makes_the_next_step_go_there(api: httpx.Client) -> None:
    session_id = new_session(api)["id"]
    injected = api.post(f"/wander/sessions/{session_id}/inject", json={"concept": "bytes and encodings"})
    assert injected.status_code == 200, injected.text
    locus = injected.json()["locus"]
    assert locus["concept"] == "bytes and encodings" and injected.json()["force_visit"] is True
    assert api.post(f"/wander/sessions/{session_id}/step").json()["to_locus"]["id"] == locus["id"]


def test_fence_and_interventions_on_an_ended_session(api: httpx.Client) -> None:
    session_id = new_session(api)["id"]
    fenced = api.post(f"/wander/sessions/{session_id}/fence", json={"concept": "politics", "action": "exclude"})
    assert fenced.status_code == 200, fenced.text
    assert fenced.json()["fence"] == [{"concept": "politics", "action": "exclude"}]
    api.post(f"/wander/sessions/{session_id}/stop")
    error_of(api.post(f"/wander/sessions/{session_id}/fence", json={"concept": "art", "action": "include"}), 409)
    error_of(api.post(f"/wander/sessions/{session_id}/inject", json={"concept": "art"}), 409)


def test_search_finds_what_the_walks_met(api: httpx.Client, walked) -> None:
    hits = api.post("/wander/search", json={"query": "unicode text", "limit": 5})
    assert hits.status_code == 200, hits.text
    assert 0 < len(hits.json()) <= 5 and {h["type"] for h in hits.json()} <= {"locus", "crystal", "resonance"}
    scores = [h["score"] for h in hits.json()]
    assert scores == sorted(scores, reverse=True)
    only = api.post("/wander/search", json={"query": "unicode text", "types": ["crystal"]}).json()
    assert {h["type"] for h in only} == {"crystal"}
    error_of(api.post("/wander/search", json={"query": ""}), 422)
    error_of(api.post("/wander/search", json={"query": "x", "types": ["dream"]}), 422)
