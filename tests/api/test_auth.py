"""Who may call the API: anyone on a loopback address; with a token, only requests carrying it; and a server
asked to listen beyond this machine without a token does not start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from explorer.api.auth import needs_token

from .conftest import StartServer, error_of

TOKEN = "s3cret-token"


@pytest.mark.parametrize(
    ("host", "needed"),
    [
        ("127.0.0.1", False),
        ("127.0.0.2", False),
        ("::1", False),
        ("[::1]", False),
        ("localhost", False),
        ("0.0.0.0", True),
        ("::", True),
        ("192.168.1.20", True),
        ("explorer.example.org", True),
    ],
)
def test_only_a_loopback_address_goes_without_a_token(host: str, needed: bool) -> None:
    assert needs_token(host) is needed


def test_with_a_token_every_request_without_it_is_401(corpus_copy: Path, start_server: StartServer) -> None:
    server = start_server(corpus_copy, env={"EXPLORER_API_TOKEN": TOKEN})
    with server.client() as anonymous:
        for response in (
            anonymous.get("/wander/sessions"),
            anonymous.post("/wander/sessions", json={"seed_concept": "x"}),
            anonymous.get("/no/such/path"),
            httpx.get(f"{server.url}/openapi.json"),
            httpx.get(f"{server.url}/docs"),
        ):
            assert error_of(response, 401)["code"] == "unauthorized"
            assert response.headers["www-authenticate"] == "Bearer"
    with server.client("not-the-token") as wrong:
        error_of(wrong.get("/wander/sessions"), 401)
    with server.client(TOKEN) as holder:
        assert holder.get("/wander/sessions").status_code == 200
        assert holder.post("/wander/sessions", json={"seed_concept": "tokens"}).status_code == 201
        document = httpx.get(f"{server.url}/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    schemes = document["components"]["securitySchemes"]
    assert [s["scheme"] for s in schemes.values()] == ["bearer"]
    assert api_operations(document) and all(op.get("security") for op in api_operations(document))


def api_operations(document: dict) -> list[dict]:
    return [op for path, item in document["paths"].items() if path.startswith("/api/v1/") for op in item.values()]


def test_the_token_may_be_given_on_the_command_line(corpus_copy: Path, start_server: StartServer) -> None:
    server = start_server(corpus_copy, "--token", TOKEN)
    with server.client() as anonymous, server.client(TOKEN) as holder:
        error_of(anonymous.get("/jobs"), 401)
        assert holder.get("/jobs").status_code == 200


def test_without_a_token_a_server_beyond_loopback_does_not_start(corpus_copy: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k != "EXPLORER_API_TOKEN"}
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "serve", "--host", "0.0.0.0", "--port", "1", "--db", str(corpus_copy)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "token" in lines[0] and "0.0.0.0" in lines[0], result.stderr
