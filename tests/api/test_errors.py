"""The error statuses that need a situation to arise: a busy database (503), a bug (500, with nothing of its
insides), and requests racing on one session (each is answered, none half-done).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import duckdb
import httpx
import pytest
from fastapi.testclient import TestClient

from explorer.api import create_app
from explorer.api.errors import engine_error
from explorer.settings import Settings
from explorer.store.database import WriteConflict

from .conftest import StartServer, error_of, new_session


@pytest.mark.duckdb_only("another process holds the file's lock")
def test_a_database_held_by_another_process_is_503_until_it_is_let_go(
    corpus_copy: Path, start_server: StartServer
) -> None:
    server = start_server(corpus_copy, env={"EXPLORER_LOCK_WAIT": "0.5"})
    with server.client() as api:
        holder = duckdb.connect(str(corpus_copy))  # this test's process takes the file, as another program would
        try:
            busy = api.get("/wander/sessions")
            error = error_of(busy, 503)
            assert error["code"] == "database_busy" and busy.headers["retry-after"]
        finally:
            holder.close()
        assert api.get("/wander/sessions").status_code == 200


def test_a_bug_is_500_in_the_error_shape_without_its_insides(tmp_path: Path) -> None:
    app = create_app(replace(Settings(), db_path=tmp_path / "bug.duckdb", embedding_model="hashing"))

    @app.get("/api/v1/broken")
    def broken() -> None:
        raise RuntimeError("secret internals at /srv/explorer")

    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/api/v1/broken")
    assert error_of(response, 500)["code"] == "internal_error"
    assert "secret" not in response.text and "Traceback" not in response.text and "RuntimeError" not in response.text


def test_steps_racing_on_one_session_are_each_kept_or_refused(api: httpx.Client) -> None:
    session_id = new_session(api)["id"]
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: api.post(f"/wander/sessions/{session_id}/step"), range(4)))
    statuses = sorted(a.status_code for a in answers)
    assert set(statuses) <= {200, 409} and 200 in statuses, [a.text for a in answers]
    for answer in answers:
        if answer.status_code == 409:
            error_of(answer, 409)
    kept = sorted(a.json()["step_number"] for a in answers if a.status_code == 200)
    assert kept == list(range(1, len(kept) + 1))
    assert api.get(f"/wander/sessions/{session_id}").json()["step_count"] == len(kept)
    assert len(api.get(f"/wander/sessions/{session_id}/trace").json()) == len(kept)


def test_a_write_conflict_is_409_in_the_stores_words() -> None:
    """The store's own conflict (what DuckDB's write-write conflict or duplicate key becomes) is a 409 that says
    to try again; the API no longer knows DuckDB's classes.
    """
    answer = engine_error(WriteConflict("another process or request wrote the same data at the same time; try again"))
    assert answer.status_code == 409
    assert json.loads(answer.body)["error"] == {
        "code": "conflict",
        "message": "another process or request wrote the same data at the same time; try again",
    }
