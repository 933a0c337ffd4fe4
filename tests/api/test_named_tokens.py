"""A shared deployment names its people: each named token (``EXPLORER_TOKENS``) opens the API, and a review made
with it is logged under its name, whatever name the body gives; the single unnamed token keeps the body's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from explorer.api.auth import Tokens
from explorer.providers.embeddings import Embedder
from explorer.records.wander import Crystal
from explorer.runtime import open_runtime
from explorer.settings import Settings, SettingsError, load_settings
from explorer.store import wander as wander_store

from .conftest import StartServer, error_of

ANA, BEN, SHARED = "ana-token-0123456789abcdef", "ben-token-0123456789abcdef", "the-shared-one"
NAMED = {"EXPLORER_TOKENS": f"ana={ANA},ben={BEN}"}
SESSION = "00000000-0000-4000-8000-0000000000bb"
REVIEW_ROUTES = ("/crystals/{crystal_id}/review", "/crystals/review-bulk", "/reviews/{review_id}/revert")


def stored_crystals(db: Path, embedder: Embedder, count: int) -> list[str]:
    """``count`` crystals awaiting review, written to ``db`` before a server opens it; their ids."""
    runtime = open_runtime(replace(Settings(), db_path=db, embedding_model=embedder.name), embedder=embedder)
    crystals = [
        Crystal(f"Insight {i}", embedder.embed([f"insight {i}"])[0], 0.8, 0.5, ["python"], session_id=SESSION)
        for i in range(count)
    ]
    with runtime.db.transaction() as con:
        for crystal in crystals:
            wander_store.insert_crystal(con, crystal)
    return [crystal.id for crystal in crystals]


def reviewers(client: httpx.Client, crystal_id: str) -> list[str]:
    return [entry["reviewer"] for entry in client.get(f"/wander/crystals/{crystal_id}/history").json()]


def test_each_named_token_reviews_under_its_name(
    corpus_copy: Path, embedder: Embedder, start_server: StartServer
) -> None:
    first, second, third = stored_crystals(corpus_copy, embedder, 3)
    server = start_server(corpus_copy, env=NAMED)
    with server.client(ANA) as ana, server.client(BEN) as ben, server.client("not-a-token-of-anyone") as stranger:
        assert error_of(stranger.get("/wander/sessions"), 401)["code"] == "unauthorized"
        forged = ana.post(f"/wander/crystals/{first}/review", json={"decision": "approve", "reviewer": "ben"})
        assert error_of(forged, 403)["code"] == "forbidden" and "ana" in forged.json()["error"]["message"]
        assert reviewers(ana, first) == []  # refused before anything was decided
        for path, body in (
            ("/wander/crystals/review-bulk", {"decision": "approve", "reviewer": "ben"}),
            ("/wander/reviews/any-review/revert", {"reviewer": "ben"}),
        ):
            error_of(ana.post(path, json=body), 403)

        assert ana.post(f"/wander/crystals/{first}/review", json={"decision": "approve"}).status_code == 200
        said_so = ben.post(f"/wander/crystals/{second}/review", json={"decision": "reject", "reviewer": "ben"})
        assert said_so.status_code == 200, said_so.text
        bulk = ben.post("/wander/crystals/review-bulk", json={"session_id": SESSION, "decision": "archive"})
        assert bulk.json()["reviewed"] == 1, bulk.text
        (entry,) = ana.get(f"/wander/crystals/{first}/history").json()
        reverted = ana.post(f"/wander/reviews/{entry['id']}/revert", json={"notes": "too quick"})
        assert reverted.status_code == 200, reverted.text

        assert reviewers(ana, first) == ["ana", "ana"]
        assert reviewers(ana, second) == ["ben"]
        assert reviewers(ana, third) == ["ben"]


def test_the_unnamed_token_keeps_the_reviewer_the_body_gives(
    corpus_copy: Path, embedder: Embedder, start_server: StartServer
) -> None:
    first, second = stored_crystals(corpus_copy, embedder, 2)
    server = start_server(corpus_copy, "--token", SHARED, env=NAMED)
    with server.client(SHARED) as shared, server.client(BEN) as ben:
        answer = shared.post(f"/wander/crystals/{first}/review", json={"decision": "approve", "reviewer": "a reader"})
        assert answer.status_code == 200, answer.text
        assert ben.post(f"/wander/crystals/{second}/review", json={"decision": "approve"}).status_code == 200
        assert reviewers(shared, first) == ["a reader"] and reviewers(shared, second) == ["ben"]


def test_the_document_says_who_a_review_is_logged_under(corpus_copy: Path, start_server: StartServer) -> None:
    server = start_server(corpus_copy, env=NAMED)
    with server.client(BEN) as ben:
        document = httpx.get(f"{server.url}/openapi.json", headers=ben.headers).json()
    assert "Named tokens" in document["info"]["description"]
    for path in REVIEW_ROUTES:
        operation = document["paths"][f"/api/v1/wander{path}"]["post"]
        assert "named token" in operation["responses"]["403"]["description"], path
        assert "named" in operation["description"] and operation["security"] == [{"HTTPBearer": []}], path


def test_named_tokens_alone_let_a_server_listen_beyond_this_machine(corpus_copy: Path) -> None:
    """It gets past the token check and as far as binding: a port held (bound, never listening) makes it stop."""
    with socket.socket() as held:
        held.bind(("0.0.0.0", 0))
        result = serve(corpus_copy, "--host", "0.0.0.0", "--port", str(held.getsockname()[1]), env=NAMED)
    assert result.returncode != 0
    assert "token" not in result.stderr and "address already in use" in result.stderr.lower(), result.stderr


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("ana", "give name=token pairs"),
        (f"ana={ANA},ben=short", "entry 2: a token is 16 or more"),
        (f"ana={ANA},Ana={BEN}", "entry 2: the name is given twice"),
        (f"ana={ANA},ben={ANA}", "entry 2: the token is another person's too"),
        (f"ana smith={ANA}", "entry 1: a name is a letter"),
        (f"{ANA}=ana", "entry 1: a token is 16 or more"),  # the wrong way round: the line must not show the token
    ],
)
def test_malformed_tokens_stop_the_server_with_one_line(corpus_copy: Path, value: str, problem: str) -> None:
    result = serve(corpus_copy, "--port", "0", env={"EXPLORER_TOKENS": value})
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1, result.stderr
    assert "EXPLORER_TOKENS" in lines[0] and problem in lines[0] and ANA not in lines[0], lines


def test_the_toml_file_names_people_in_a_table(tmp_path: Path) -> None:
    config = tmp_path / "explorer.toml"
    config.write_text(f'[explorer.tokens]\nana = "{ANA}"\nben = "{BEN}"\n', encoding="utf-8")
    settings = load_settings({}, config)
    assert settings.tokens == {"ana": ANA, "ben": BEN} and ANA not in repr(settings)


def test_the_single_token_may_not_be_a_named_one() -> None:
    with pytest.raises(SettingsError, match="also a named one"):
        Tokens(ANA, {"ana": ANA})
    assert Tokens(SHARED, {"ana": ANA}).holder(ANA.encode()) == (True, "ana")
    assert Tokens(SHARED, {"ana": ANA}).holder(SHARED.encode()) == (True, None)
    assert Tokens(SHARED, {"ana": ANA}).holder(b"") == (False, None)


def serve(db: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``explorer serve`` that is expected to stop at once (an error), with what it printed."""
    environ = {k: v for k, v in os.environ.items() if k not in ("EXPLORER_API_TOKEN", "EXPLORER_TOKENS")}
    return subprocess.run(
        [sys.executable, "-m", "explorer", "serve", "--db", str(db), *args],
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
