r"""What no store can hold, and numbers that are not numbers, are refused where a request comes in, on DuckDB and on
PostgreSQL alike: a NUL or a lone surrogate in any text is a 422 naming the field, and a session made before is
untouched and walks on (on PostgreSQL a NUL that reached the events once made every later step of its session a
500). A boolean, a text, NaN, an infinity or null given for a number is a 422 too, while a JSON integer is a number
and the smallest number above an exclusive minimum of 0 (5e-324) is taken.

Bodies are written here with ``json.dumps`` as it is (``\u0000`` and ``\ud800`` escapes, ``NaN`` and ``Infinity``
literals), which httpx's own writer refuses to send.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from explorer.api import create_app
from explorer.settings import Settings

NUL, SURROGATE, ESCAPED_BYTE = "a\x00b", "a\ud800b", "\udcff"
SEED = {"seed_concept": "tides", "human_checkpoint_frequency": 0, "random_seed": 3}


@pytest.fixture(params=["duckdb", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    db = request.getfixturevalue("postgres_url") if request.param == "postgres" else tmp_path / "inputs.duckdb"
    settings = replace(Settings(), db_path=db, embedding_model="hashing")
    with TestClient(create_app(settings), base_url="http://testserver/api/v1") as client:
        yield client


def send(client: TestClient, method: str, path: str, body: Any) -> httpx.Response:
    """A request whose body is ``json.dumps(body)``, escapes and NaN included."""
    return client.request(method, path, content=json.dumps(body), headers={"Content-Type": "application/json"})


def refused(response: httpx.Response, field: str) -> str:
    """The message of a 422 that names ``field``."""
    assert response.status_code == 422, response.text
    message: str = response.json()["error"]["message"]
    assert f"body.{field}:" in message or f"query.{field}:" in message, message
    return message


def test_a_text_no_store_holds_is_refused_and_a_session_made_before_walks_on(client: TestClient) -> None:
    before = send(client, "POST", "/wander/sessions", SEED)
    assert before.status_code == 201, before.text
    session = before.json()["id"]
    assert "NUL character" in refused(send(client, "POST", "/wander/sessions", {**SEED, "name": NUL}), "name")
    assert "NUL" in refused(send(client, "POST", "/wander/sessions", {**SEED, "seed_concept": NUL}), "seed_concept")
    refused(send(client, "POST", "/wander/sessions", {**SEED, "seed_concept": SURROGATE}), "seed_concept")
    assert "lone surrogate" in refused(send(client, "POST", "/wander/sessions", {**SEED, "name": ESCAPED_BYTE}), "name")
    refused(send(client, "POST", "/wander/sessions", {**SEED, "attractor": NUL}), "attractor")
    refused(send(client, "POST", "/wander/sessions", {**SEED, "allowed_domains": ["ok", NUL]}), "allowed_domains.1")
    refused(send(client, "PATCH", f"/wander/sessions/{session}", {"name": NUL}), "name")
    refused(send(client, "POST", f"/wander/sessions/{session}/inject", {"concept": NUL}), "concept")
    refused(send(client, "POST", f"/wander/sessions/{session}/pause", {"reason": SURROGATE}), "reason")
    refused(send(client, "POST", "/wander/search", {"query": NUL}), "query")
    refused(client.get("/consolidation/knowledge", params={"situation": NUL}), "situation")
    assert client.get("/wander/sessions/a%00b").status_code == 404  # an id is looked up, never stored

    assert [s["id"] for s in client.get("/wander/sessions").json()] == [session]  # nothing else was made
    for _ in range(2):
        stepped = client.post(f"/wander/sessions/{session}/step")
        assert stepped.status_code == 200, stepped.text
    injected = send(client, "POST", f"/wander/sessions/{session}/inject", {"concept": "moon"})
    assert injected.status_code == 200, injected.text
    assert client.post(f"/wander/sessions/{session}/crystallize").status_code == 200
    assert client.post(f"/wander/sessions/{session}/step").json()["to_locus"]["concept"] == "moon"


@pytest.mark.parametrize(
    ("path", "field", "value", "says"),
    [
        ("/wander/sessions", "max_steps", True, "valid integer"),
        ("/wander/sessions", "random_seed", "7", "valid integer"),
        ("/wander/sessions", "temperature", True, "valid number"),
        ("/wander/sessions", "temperature", float("nan"), "finite number"),
        ("/wander/sessions", "max_drift_distance", float("inf"), "finite number"),
        ("/wander/sessions", "cloud_budget_cents", None, "null is not a number"),
        ("/dreams/rem", "dreams", True, "valid integer"),
        ("/dreams/explore", "result_threshold", float("nan"), "finite number"),
        ("/dreams/cycle", "budget_cents", None, "null is not a number"),
        ("/consolidation/runs", "budget_cents", float("-inf"), "finite number"),
        ("/wander/search", "limit", False, "valid integer"),
    ],
)
def test_a_number_is_a_finite_number_of_its_type(
    client: TestClient, path: str, field: str, value: Any, says: str
) -> None:
    body = {**(SEED if path == "/wander/sessions" else {"query": "tides"} if "search" in path else {}), field: value}
    assert says in refused(send(client, "POST", path, body), field)


def test_a_whole_number_and_the_least_number_above_zero_are_taken(client: TestClient) -> None:
    smallest = 5e-324  # above the exclusive minimum 0 the document states for both
    made = send(client, "POST", "/wander/sessions", {**SEED, "temperature": 1, "max_drift_distance": smallest})
    assert made.status_code == 201, made.text
    assert (made.json()["temperature"], made.json()["max_drift_distance"]) == (1.0, smallest)
    changed = send(client, "PATCH", f"/wander/sessions/{made.json()['id']}", {"temperature": smallest})
    assert changed.status_code == 200, changed.text
    assert client.post(f"/wander/sessions/{made.json()['id']}/step").status_code == 200
    assert client.get("/wander/crystals", params={"min_confidence": "nan"}).status_code == 422
