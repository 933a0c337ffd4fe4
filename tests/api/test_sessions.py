"""Sessions and wander control over HTTP: create, list, read, change, delete; step and walk; the status machine."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from explorer.api.errors import engine_error
from explorer.store.ids import AmbiguousId

from .conftest import SEED, error_of, new_session


def test_a_session_is_created_read_listed_changed_and_deleted(api: httpx.Client) -> None:
    created = api.post(
        "/wander/sessions",
        json={**SEED, "name": "over HTTP", "allowed_domains": ["python"], "max_steps": 30, "temperature": 0.5},
    )
    assert created.status_code == 201, created.text
    session = created.json()
    assert created.headers["location"] == f"/api/v1/wander/sessions/{session['id']}"
    assert session["name"] == "over HTTP" and session["status"] == "active" and session["step_count"] == 0
    assert session["allowed_domains"] == ["python"] and session["max_steps"] == 30
    assert session["current_locus_id"]

    assert api.get(f"/wander/sessions/{session['id']}").json() == session
    assert session["id"] in [s["id"] for s in api.get("/wander/sessions").json()]

    changed = api.patch(f"/wander/sessions/{session['id']}", json={"name": "renamed", "attractor": "bytes"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["name"] == "renamed" and changed.json()["attractor"] == "bytes"
    cleared = api.patch(f"/wander/sessions/{session['id']}", json={"attractor": None, "allowed_domains": None})
    assert cleared.json()["attractor"] is None and cleared.json()["allowed_domains"] is None
    assert cleared.json()["name"] == "renamed"  # what was not sent stays

    deleted = api.delete(f"/wander/sessions/{session['id']}")
    assert deleted.status_code == 204 and deleted.content == b""
    error_of(api.get(f"/wander/sessions/{session['id']}"), 404)
    error_of(api.delete(f"/wander/sessions/{session['id']}"), 404)


def test_sessions_are_listed_a_page_at_a_time_newest_first_and_by_status(api: httpx.Client) -> None:
    made = [new_session(api, name=f"page {i}")["id"] for i in range(3)]
    api.post(f"/wander/sessions/{made[1]}/pause")
    first = api.get("/wander/sessions", params={"limit": 2}).json()
    second = api.get("/wander/sessions", params={"limit": 2, "offset": 2}).json()
    assert [s["id"] for s in first] == made[::-1][:2]
    assert second and not {s["id"] for s in second} & {s["id"] for s in first}
    paused = api.get("/wander/sessions", params={"status": "paused", "project_id": "ignored"}).json()
    assert made[1] in [s["id"] for s in paused] and {s["status"] for s in paused} == {"paused"}
    error_of(api.get("/wander/sessions", params={"status": "sleeping"}), 422)
    error_of(api.get("/wander/sessions", params={"limit": -1}), 422)


def test_a_step_reports_where_it_went_and_what_resonated(api: httpx.Client) -> None:
    session = new_session(api)
    response = api.post(f"/wander/sessions/{session['id']}/step")
    assert response.status_code == 200, response.text
    step = response.json()
    assert step["step_number"] == 1
    assert step["from_locus"]["id"] == session["current_locus_id"]
    assert step["to_locus"]["concept"] and step["trace"]["to_locus_id"] == step["to_locus"]["id"]
    assert isinstance(step["resonances_detected"], list) and "residue" in step
    assert api.get(f"/wander/sessions/{session['id']}").json()["step_count"] == 1


def test_a_walk_is_bounded_per_request(api: httpx.Client) -> None:
    session = new_session(api)
    walked = api.post(f"/wander/sessions/{session['id']}/wander", json={"n_steps": 3})
    assert walked.status_code == 200, walked.text
    assert walked.json()["steps_completed"] == 3 and walked.json()["stopped_reason"] is None
    assert len(api.get(f"/wander/sessions/{session['id']}/trace").json()) == 3

    refused = error_of(api.post(f"/wander/sessions/{session['id']}/wander", json={"n_steps": 21}), 422)
    assert "20" in refused["message"] and '"background": true' in refused["message"]
    assert api.get(f"/wander/sessions/{session['id']}").json()["step_count"] == 3  # nothing was walked


def test_a_walk_that_reaches_max_steps_completes_and_consolidates(api: httpx.Client) -> None:
    session = new_session(api, max_steps=2)
    walked = api.post(f"/wander/sessions/{session['id']}/wander", json={"n_steps": 5}).json()
    assert walked["steps_completed"] == 2 and "completed" in walked["stopped_reason"]
    consolidation = walked["consolidation"]  # the session-complete trigger ran, and stored its run
    assert consolidation["run_id"] and consolidation["error"] is None, consolidation
    assert api.get(f"/wander/sessions/{session['id']}").json()["status"] == "completed"
    error_of(api.post(f"/wander/sessions/{session['id']}/step"), 409)


def test_pause_resume_and_stop_follow_the_status_machine(api: httpx.Client) -> None:
    session_id = new_session(api)["id"]
    error_of(api.post(f"/wander/sessions/{session_id}/resume"), 409)  # it is running already
    paused = api.post(f"/wander/sessions/{session_id}/pause", json={"reason": "a look"}).json()
    assert paused["status"] == "paused" and paused["status_reason"] == "a look" and paused["pause_kind"] == "person"
    error_of(api.post(f"/wander/sessions/{session_id}/pause"), 409)
    stepped = error_of(api.post(f"/wander/sessions/{session_id}/step"), 409)
    assert stepped["code"] == "wrong_state" and f"/wander/sessions/{session_id}/resume" in stepped["message"]
    assert api.post(f"/wander/sessions/{session_id}/resume").json()["status"] == "active"
    stopped = api.post(f"/wander/sessions/{session_id}/stop").json()
    assert stopped["status"] == "completed" and "consolidation" in stopped
    error_of(api.post(f"/wander/sessions/{session_id}/resume"), 409)
    error_of(api.post(f"/wander/sessions/{session_id}/stop"), 409)
    error_of(api.patch(f"/wander/sessions/{session_id}", json={"status": "active"}), 409)


def test_status_changes_through_patch_too(api: httpx.Client) -> None:
    session_id = new_session(api)["id"]
    assert api.patch(f"/wander/sessions/{session_id}", json={"status": "paused"}).json()["status"] == "paused"
    abandoned = api.patch(f"/wander/sessions/{session_id}", json={"status": "abandoned"}).json()
    assert abandoned["status"] == "abandoned" and "consolidation" not in abandoned


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", ""),
        ("patch", ""),
        ("delete", ""),
        ("post", "/step"),
        ("post", "/wander"),
        ("post", "/pause"),
        ("post", "/resume"),
        ("post", "/stop"),
        ("get", "/loci"),
        ("get", "/trace"),
        ("get", "/resonances"),
        ("get", "/crystals"),
        ("post", "/inject"),
        ("post", "/fence"),
        ("post", "/crystallize"),
    ],
)
def test_an_unknown_session_is_404(api: httpx.Client, method: str, path: str) -> None:
    body = {"inject": {"concept": "x"}, "fence": {"concept": "x", "action": "include"}}.get(path.strip("/"))
    kwargs: dict[str, Any] = {"json": body or {}} if method in ("post", "patch") else {}
    error = error_of(api.request(method, f"/wander/sessions/no-such-session{path}", **kwargs), 404)
    assert error["code"] == "not_found" and "no-such-session" in error["message"]
    assert "GET /api/v1/wander/sessions" in error["message"]


@pytest.mark.parametrize(
    "body",
    [
        {},  # no seed concept
        {"seed_concept": ""},
        {"seed_concept": "x", "max_steps": 0},  # the engine's limits
        {"seed_concept": "x", "temperature": 11},
        {"seed_concept": "x", "random_seed": -1},
        {"seed_concept": "x", "seed": 3},  # a misspelt field is refused, not ignored
        {"seed_concept": 3},
    ],
)
def test_a_bad_session_body_is_422(api: httpx.Client, body: dict[str, Any]) -> None:
    assert error_of(api.post("/wander/sessions", json=body), 422)["code"] == "invalid_request"


def test_bad_bodies_elsewhere_are_422(api: httpx.Client) -> None:
    session_id = new_session(api)["id"]
    for path, body in [
        ("/wander", {"n_steps": 0}),
        ("/wander", {"n_steps": "many"}),
        ("/fence", {"concept": "x", "action": "widen"}),
        ("/inject", {}),
    ]:
        error_of(api.post(f"/wander/sessions/{session_id}{path}", json=body), 422)
    error_of(api.patch(f"/wander/sessions/{session_id}", json={"max_steps": None}), 422)
    error_of(api.patch(f"/wander/sessions/{session_id}", json={"name": ""}), 422)
    error_of(api.post("/wander/sessions", content=b"{not json", headers={"content-type": "application/json"}), 422)


def test_an_unknown_path_and_method_answer_in_the_error_shape(api: httpx.Client) -> None:
    assert error_of(api.get("/no/such/thing"), 404)["code"] == "not_found"
    assert error_of(api.put("/wander/sessions"), 405)["code"] == "method_not_allowed"


def test_the_short_id_the_app_shows_names_a_session_here_too(api: httpx.Client) -> None:
    session = new_session(api, name="short")
    short = session["id"][:8]
    assert api.get(f"/wander/sessions/{short}").json() == session
    stepped = api.post(f"/wander/sessions/{short}/step")
    assert stepped.status_code == 200, stepped.text
    assert api.get(f"/wander/sessions/{session['id']}").json()["step_count"] == 1
    error_of(api.get(f"/wander/sessions/{short[:3]}"), 404)  # three digits name nothing
    ambiguous = engine_error(AmbiguousId("'6871' is the start of more than one session id (…); give more of the id"))
    assert ambiguous.status_code == 422 and json.loads(ambiguous.body)["error"]["code"] == "invalid_request"
