"""The OpenAPI document states every bound a request is held to, and the server holds to each one it states.

The document is walked as a generated client would read it (the real app's, over a fresh database): every bound
of a query parameter or a body field (a number's range, a text's length and pattern, a list's length, and the
bounds an ``if`` of the body's schema adds) is sent at the bound, which must not be refused (whatever the
engine then answers, not 422), and just past it, which must be 422. The engine's own checks (a session's
numbers, the steps or dreams one request runs) are where the document and the server could part: they are
checked against the document here too. Beside the bounds, the types: wherever the document says ``number`` or
``integer``, a boolean (and in a body a text, NaN or an infinity) is a 422 naming the field, and an integer is a
number; wherever it says ``string``, a text no store can hold (a NUL; in a body a lone surrogate) is a 422 naming
the field, the one refusal no keyword of the document states (``explorer/inputs.py``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from explorer.api import create_app
from explorer.api.models import NOT_BLANK, PER_REQUEST
from explorer.settings import Settings
from explorer.wander.config import SESSION_LIMITS

ABSENT_ID = "00000000-0000-4000-8000-0000000000aa"  # a crystal, review, locus or job no database here holds
NUMBERS = {"integer", "number"}
BLANK = "   "


@dataclass(frozen=True)
class Slot:
    """Where a request carries a value, the schema the document gives it there, and the other body fields that
    schema holds under (the ``if`` of a conditional bound, or what keeps such a bound out of the way).
    """

    method: str
    path: str
    where: str  # "query" or "body"
    name: str
    schema: dict[str, Any]
    context: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.method.upper()} {self.path} {self.where}.{self.name}"


@dataclass(frozen=True)
class Edge:
    """One bound the document states for a slot: a value at it (just inside an exclusive one) and one just past."""

    slot: Slot
    keyword: str
    at: Any
    past: Any

    def __str__(self) -> str:
        return f"{self.slot} {self.keyword} {self.slot.context or ''}"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = replace(Settings(), db_path=tmp_path / "bounds.duckdb", embedding_model="hashing")
    with TestClient(create_app(settings)) as client:
        yield client


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A schema with its ``$ref`` followed and ``null`` taken out of an ``anyOf``: what a value sent must meet."""
    if "$ref" in schema:
        return resolve(document, document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in schema:
        sent = [s for s in schema["anyOf"] if s.get("type") != "null"]
        assert len(sent) == 1, schema
        outer = {key: value for key, value in schema.items() if key != "anyOf"}
        return {**outer, **resolve(document, sent[0])}
    return schema


def valid(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A value the schema admits, for the fields a request must have beside the one under test."""
    schema = resolve(document, schema)
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("type") == "string":
        return "tides" + "s" * max(0, schema.get("minLength", 0) - 5)
    if schema.get("type") in NUMBERS:
        return schema.get("minimum", 1)
    if schema.get("type") == "object":
        return {name: valid(document, schema["properties"][name]) for name in schema.get("required", [])}
    raise AssertionError(f"no valid value known for {schema}")


def admits(schema: dict[str, Any], text: str) -> bool:
    """Whether a string's schema admits ``text``, as JSON Schema reads its length and (unanchored) pattern."""
    pattern = schema.get("pattern")
    fits = schema.get("minLength", 0) <= len(text) <= schema.get("maxLength", len(text))
    return fits and (pattern is None or re.search(pattern, text) is not None)


def beside(value: float, integer: bool, direction: float) -> float:
    """The value next to ``value`` towards ``direction``: one more or less for a whole number, else the next float."""
    if integer:
        return value + 1 if direction > 0 else value - 1
    return math.nextafter(value, direction)


def at_and_past(document: dict[str, Any], schema: dict[str, Any], keyword: str) -> tuple[Any, Any]:
    """A value at the bound ``keyword`` states (just inside an exclusive one) and a value just past it."""
    limit = schema[keyword]
    if schema.get("type") in NUMBERS:
        integer = schema["type"] == "integer"
        if integer:
            assert float(limit).is_integer(), schema
            limit = int(limit)
        inward = {"minimum": math.inf, "exclusiveMinimum": math.inf}.get(keyword, -math.inf)
        if keyword.startswith("exclusive"):
            return beside(limit, integer, inward), limit
        return limit, beside(limit, integer, -inward)
    if keyword == "pattern":
        assert limit == NOT_BLANK, f"a pattern this test does not know how to cross: {limit}"
        return "tides", " "
    if keyword in ("minLength", "maxLength"):
        return "a" * limit, "a" * (limit + (1 if keyword == "maxLength" else -1))
    item = valid(document, schema["items"])
    return [item] * limit, [item] * (limit + (1 if keyword == "maxItems" else -1))


BOUNDS = {
    "integer": ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"),
    "number": ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"),
    "string": ("minLength", "maxLength", "pattern"),
    "array": ("minItems", "maxItems"),
}


def conditions(body: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Each ``if``/``then`` of a body's schema: the fields that make it hold, that make it not hold, and the
    properties it bounds. Only a flag's value is understood as a condition; anything else fails here, so a new
    kind of condition is taught to this test before it passes.
    """
    if "if" not in body:
        return
    flags = body["if"]["properties"]
    assert set(body["if"]) == {"properties"} and all(set(s) == {"const"} for s in flags.values()), body["if"]
    assert all(isinstance(s["const"], bool) for s in flags.values()), body["if"]
    holds = {name: s["const"] for name, s in flags.items()}
    yield holds, {name: not value for name, value in holds.items()}, body["then"]["properties"]


def slots(document: dict[str, Any]) -> Iterator[Slot]:
    """Every query parameter and body field of every operation; a field an ``if`` bounds further comes twice,
    under the condition (with the added bounds) and under its opposite (with its own alone).
    """
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query":
                    yield Slot(method, path, "query", parameter["name"], resolve(document, parameter["schema"]))
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is None:
                continue
            body = resolve(document, content["schema"])
            properties = {name: resolve(document, schema) for name, schema in body["properties"].items()}
            tightened: dict[str, dict[str, Any]] = {}
            for holds, fails, bounded in conditions(body):
                for name, extra in bounded.items():
                    yield Slot(method, path, "body", name, {**properties[name], **extra}, holds)
                    tightened[name] = fails
            for name, schema in properties.items():
                yield Slot(method, path, "body", name, schema, tightened.get(name, {}))


BOUNDS = {
    "integer": ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"),
    "number": ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"),
    "string": ("minLength", "maxLength", "pattern"),
    "array": ("minItems", "maxItems"),
}


def edges(document: dict[str, Any]) -> Iterator[Edge]:
    """Every bound the document states for a request, as edges to probe."""
    for slot in slots(document):
        for keyword in BOUNDS.get(slot.schema.get("type", ""), ()):
            if keyword in slot.schema:
                yield Edge(slot, keyword, *at_and_past(document, slot.schema, keyword))


def required_params(document: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any]:
    parameters = operation.get("parameters", [])
    return {p["name"]: valid(document, p["schema"]) for p in parameters if p["in"] == "query" and p.get("required")}


def send(client: TestClient, document: dict[str, Any], slot: Slot, value: Any) -> int:
    """The status of the slot's request with ``value`` in it (:func:`answer`)."""
    return answer(client, document, slot, value).status_code


def answer(client: TestClient, document: dict[str, Any], slot: Slot, value: Any) -> httpx.Response:
    """The answer to the slot's request with ``value`` in it; a session named in the path is a fresh one (a probe
    before may have changed another), the other ids name nothing (404 is not a refusal). The body is written by
    ``json.dumps`` as it is, so NaN and lone surrogates can be sent.
    """
    operation = document["paths"][slot.path][slot.method]
    path = slot.path
    if "{session_id}" in path:
        created = client.post(
            "/api/v1/wander/sessions", json={"seed_concept": "tides", "human_checkpoint_frequency": 0}
        )
        assert created.status_code == 201, created.text
        path = path.replace("{session_id}", created.json()["id"])
    for name in ("crystal_id", "review_id", "locus_id", "job_id"):
        path = path.replace("{" + name + "}", ABSENT_ID)
    params = required_params(document, operation)
    body = None
    if slot.where == "query":
        params[slot.name] = value
    else:
        content = operation["requestBody"]["content"]["application/json"]["schema"]
        body = {**valid(document, content), **slot.context, slot.name: value}
    content = None if body is None else json.dumps(body)
    headers = {"Content-Type": "application/json"}
    response = client.request(slot.method, path, params=params, content=content, headers=headers)
    assert response.status_code < 500, f"{slot} with {value!r}: {response.text}"
    return response


def test_the_server_holds_to_every_bound_the_document_states(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    found = list(edges(document))
    assert len(found) >= 120, [str(e) for e in found]  # the walk reached every body and condition (128 now)
    wrong: list[str] = []
    for edge in found:
        at, past = send(client, document, edge.slot, edge.at), send(client, document, edge.slot, edge.past)
        if at == 422 or past != 422:
            wrong.append(f"{edge}: at {edge.at!r} -> {at}, past {edge.past!r} -> {past}")
    assert not wrong, "\n".join(wrong)


def test_every_number_a_request_carries_is_bounded_on_both_sides(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    unbounded = [
        str(slot)
        for slot in slots(document)
        if slot.schema.get("type") in NUMBERS
        and not (
            {"minimum", "exclusiveMinimum"} & slot.schema.keys()
            and {"maximum", "exclusiveMaximum"} & slot.schema.keys()
        )
    ]
    assert not unbounded, unbounded


def test_a_blank_text_is_refused_exactly_where_the_document_says(client: TestClient) -> None:
    """The engine strips a concept, a query or a name and refuses what is left empty: a text of spaces is a 422
    where the document's ``pattern`` asks for a character, and taken (a default name, no attractor) elsewhere.
    """
    document = client.get("/openapi.json").json()
    texts = [
        s for s in slots(document) if s.schema.get("type") == "string" and not {"enum", "format"} & s.schema.keys()
    ]
    assert len(texts) >= 15, [str(s) for s in texts]
    wrong = []
    for slot in texts:
        refused, documented = send(client, document, slot, BLANK) == 422, not admits(slot.schema, BLANK)
        if refused != documented:
            wrong.append(f"{slot} {slot.schema}: {'refused' if refused else 'taken'}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("model", ["SessionCreate", "SessionUpdate"])
def test_a_sessions_numbers_are_documented_with_the_engines_bounds(client: TestClient, model: str) -> None:
    document = client.get("/openapi.json").json()
    properties = document["components"]["schemas"][model]["properties"]
    for name, bounds in SESSION_LIMITS.items():
        if name not in properties:  # a seed is chosen when a session is made, not changed after
            assert model == "SessionUpdate" and name == "random_seed"
            continue
        schema = resolve(document, properties[name])
        low = "exclusiveMinimum" if bounds.open_low else "minimum"
        assert (schema.get(low), schema.get("maximum")) == (bounds.low, bounds.high), (name, schema)
        assert bounds.rule in schema["description"], (name, schema)


@pytest.mark.parametrize(("model", "count"), [("WanderRequest", "n_steps"), ("DreamRun", "dreams")])
def test_the_most_one_request_runs_is_documented_as_a_condition(client: TestClient, model: str, count: str) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"][model]
    assert schema["if"] == {"properties": {"background": {"const": False}}}
    assert schema["then"] == {"properties": {count: {"maximum": PER_REQUEST}}}


def refuses_naming(response: httpx.Response, slot: Slot) -> bool:
    """Whether the answer is a 422 whose message names the slot's field."""
    return response.status_code == 422 and f"{slot.where}.{slot.name}" in response.json()["error"]["message"]


def test_a_text_no_store_holds_is_refused_wherever_the_document_says_string(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    texts = [
        s for s in slots(document) if s.schema.get("type") == "string" and not {"enum", "format"} & s.schema.keys()
    ]
    wrong = []
    for slot in texts:
        faults = ["tide\x00s"] + (["tide\ud800s", "\udcff"] if slot.where == "body" else [])  # a URL is UTF-8
        for fault in faults:
            if not refuses_naming(answered := answer(client, document, slot, fault), slot):
                wrong.append(f"{slot} {fault!r}: {answered.status_code} {answered.text[:200]}")
    assert len(texts) >= 15 and not wrong, "\n".join(wrong)


def test_a_number_is_refused_as_anything_else_and_an_integer_is_one(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    numbers = [s for s in slots(document) if s.schema.get("type") in NUMBERS]
    wrong = []
    for slot in numbers:
        faults: list[Any] = [True, False]
        if slot.where == "body":  # a query parameter is text, which FastAPI reads as a number
            faults += ["1", math.nan, math.inf, -math.inf]
        elif slot.schema["type"] == "number":
            faults += ["nan", "inf"]
        for fault in faults:
            if not refuses_naming(answered := answer(client, document, slot, fault), slot):
                wrong.append(f"{slot} {fault!r}: {answered.status_code} {answered.text[:200]}")
        if slot.schema["type"] == "number" and slot.where == "body":
            whole = math.floor(slot.schema.get("minimum", slot.schema.get("exclusiveMinimum", -1)) + 1)
            if (taken := answer(client, document, slot, whole)).status_code == 422:
                wrong.append(f"{slot} {whole!r}: {taken.text[:200]}")
    assert len(numbers) >= 20 and not wrong, "\n".join(wrong)
