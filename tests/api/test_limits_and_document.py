"""What the API refuses before any route runs (a body over the limit), and that its OpenAPI document says what
the server does: a token only when it has one, 400 and 413, and booleans that are booleans.

An app over a fresh database is enough here: every case is decided before the engine is asked anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from explorer.api import create_app
from explorer.api.models import MAX_BODY_BYTES
from explorer.settings import Settings

from .conftest import error_of

SESSION = "00000000-0000-4000-8000-0000000000aa"
JSON = {"content-type": "application/json"}


def app_over(tmp_path: Path, token: str | None = None) -> FastAPI:
    return create_app(replace(Settings(), db_path=tmp_path / "limits.duckdb", embedding_model="hashing"), token)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(app_over(tmp_path)) as client:
        yield client


def concept_of(size: int) -> bytes:
    """A session's body of exactly ``size`` bytes, its concept far over the 2,000 characters a concept may have."""
    head, tail = b'{"seed_concept": "', b'"}'
    return head + b"a" * (size - len(head) - len(tail)) + tail


def test_a_body_declared_over_the_limit_is_413_before_a_byte_of_it_is_read(tmp_path: Path) -> None:
    app = app_over(tmp_path)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        raise AssertionError("the body was read")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/v1/wander/sessions",
        "raw_path": b"/api/v1/wander/sessions",
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "server": ("127.0.0.1", 8765),
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"104857600")],
        "http_version": "1.1",
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert b'"code":"too_large"' in sent[1]["body"] and str(MAX_BODY_BYTES).encode() in sent[1]["body"]


def test_a_body_over_the_limit_is_413_in_the_error_shape(client: TestClient) -> None:
    response = client.post("/api/v1/wander/sessions", content=concept_of(MAX_BODY_BYTES + 1), headers=JSON)
    error = error_of(response, 413)
    assert error["code"] == "too_large" and str(MAX_BODY_BYTES) in error["message"]


def test_a_chunked_body_is_refused_once_it_passes_the_limit(client: TestClient) -> None:
    body = concept_of(MAX_BODY_BYTES + 1)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the server learns the size only as the bytes come
        yield from (body[i : i + 65_536] for i in range(0, len(body), 65_536))

    response = client.post("/api/v1/wander/sessions", content=chunks(), headers=JSON)
    assert "content-length" not in response.request.headers
    assert error_of(response, 413)["code"] == "too_large"


def test_a_body_at_the_limit_is_read_and_judged(client: TestClient) -> None:
    response = client.post("/api/v1/wander/sessions", content=concept_of(MAX_BODY_BYTES), headers=JSON)
    error = error_of(response, 422)
    assert "body.seed_concept" in error["message"]


def test_a_body_that_is_not_text_is_400_as_documented(client: TestClient) -> None:
    response = client.post("/api/v1/wander/sessions", content=b'{"seed_concept": "\xff\xfe"}', headers=JSON)
    assert error_of(response, 400)["code"] == "bad_request"
    assert "400" in client.get("/openapi.json").json()["paths"]["/api/v1/wander/sessions"]["post"]["responses"]


def test_the_document_lists_413_and_400_for_every_operation(client: TestClient) -> None:
    for path, operations in client.get("/openapi.json").json()["paths"].items():
        for method, operation in operations.items():
            assert {"400", "413"} <= operation["responses"].keys(), (method, path)


def test_a_server_without_a_token_documents_it_as_optional(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    assert document == client.get("/openapi.json").json()  # marked once, not again on each request
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert operation["security"] == [{}, {"HTTPBearer": []}], (method, path)
    assert client.get("/api/v1/jobs").status_code == 200  # and indeed asks for none


def test_a_server_with_a_token_documents_it_on_every_operation(tmp_path: Path) -> None:
    with TestClient(app_over(tmp_path, token="s3cret")) as client:
        document = client.get("/openapi.json", headers={"Authorization": "Bearer s3cret"}).json()
        assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
        for path, operations in document["paths"].items():
            for method, operation in operations.items():
                assert operation["security"] == [{"HTTPBearer": []}], (method, path)
        assert client.get("/api/v1/jobs").status_code == 401  # and indeed asks for it


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (f"/api/v1/wander/sessions/{SESSION}/wander", {"n_steps": 1, "background": 1}),
        ("/api/v1/dreams/rem", {"dreams": 1, "background": 1}),
        (f"/api/v1/wander/sessions/{SESSION}/inject", {"concept": "tides", "force_visit": 1}),
        ("/api/v1/wander/crystals/review-bulk", {"decision": "approve", "dry_run": "yes"}),
    ],
)
def test_a_flag_is_true_or_false_not_a_number_or_a_word(client: TestClient, path: str, body: dict[str, Any]) -> None:
    error = error_of(client.post(path, json=body), 422)
    assert "boolean" in error["message"]
