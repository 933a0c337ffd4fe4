"""The JSON schema each JSON prompt asks a model for: derived from its reader's pydantic model, and plain enough for
a grammar-constrained server (llama.cpp) and OpenAI's strict mode alike.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator

from explorer.prompts import load_prompts
from explorer.prompts.answers import AnswerModel, Labels, Score01, answer_schema


class Step(AnswerModel):
    name: str
    level: Score01 = 0.5


class Walk(AnswerModel):
    """A walk: words for people, which the schema leaves out."""

    kind: Literal["near", "far"] = "near"
    steps: list[Step]
    themes: Labels = ()
    guess: int | None = None
    extra: Any = None


def test_the_schema_is_the_models_plain_and_whole() -> None:
    step = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "level": {"type": "number"}},
        "required": ["name", "level"],
        "additionalProperties": False,
    }
    assert answer_schema(Walk) == {
        "type": "object",
        "properties": {
            "kind": {"enum": ["near", "far"], "type": "string"},
            "steps": {"type": "array", "items": step},
            "themes": {"type": "array", "items": {"type": "string"}},
            "guess": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["kind", "steps", "themes", "guess"],
        "additionalProperties": False,
    }


def objects(node: Any) -> list[dict[str, Any]]:
    """Every object schema within ``node``."""
    if isinstance(node, list):
        return [found for item in node for found in objects(item)]
    if not isinstance(node, dict):
        return []
    inner = [found for value in node.values() for found in objects(value)]
    return ([node] if node.get("type") == "object" else []) + inner


def keywords(node: Any) -> set[str]:
    """Every keyword used anywhere in a schema (not the names of properties: a pattern has a "description")."""
    if isinstance(node, list):
        return {key for item in node for key in keywords(item)}
    if not isinstance(node, dict):
        return set()
    inner = [*node.get("properties", {}).values(), *(v for k, v in node.items() if k != "properties")]
    return set(node) | keywords(inner)


JSON_KINDS = sorted(kind for kind, prompt in load_prompts().items() if prompt.json_answer)


def test_every_json_prompt_has_a_schema_and_free_text_has_none() -> None:
    assert len(JSON_KINDS) == 10
    assert all(prompt.schema is None for kind, prompt in load_prompts().items() if kind not in JSON_KINDS)


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_each_schema_is_valid_and_plain(kind: str) -> None:
    schema = load_prompts()[kind].schema
    Draft202012Validator.check_schema(schema)
    assert not keywords(schema) & {"$ref", "$defs", "title", "description", "default"}
    for node in objects(schema):
        assert node["required"] == list(node["properties"]) and node["additionalProperties"] is False
