"""The JSON schema each JSON prompt asks a model for: derived from its reader's pydantic model, and plain enough for
a grammar-constrained server (llama.cpp) and OpenAI's strict mode alike.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from jsonschema import Draft202012Validator

from explorer.prompts import load_prompts
from explorer.prompts.answers import (
    TENTHS,
    AnswerModel,
    OptionalScore01,
    Score01,
    answer_schema,
    labels,
    longest_answer,
    text_field,
)
from explorer.testing.llama_server import missing, model_path


class Step(AnswerModel):
    name: Annotated[str, text_field(20, 1)]
    level: Score01 = 0.5
    doubt: OptionalScore01 = None


class Walk(AnswerModel):
    """A walk: words for people, which the schema leaves out."""

    kind: Literal["near", "far"] = "near"
    steps: list[Step]
    themes: Annotated[tuple[str, ...], labels(3)] = ()
    guess: int | None = None
    extra: Any = None


def test_the_schema_is_the_models_plain_and_whole_with_the_bounds_its_checks_enforce() -> None:
    score = {"type": "number", "enum": TENTHS}
    step = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 20, "minLength": 1},
            "level": score,
            "doubt": {"anyOf": [score, {"type": "null"}]},
        },
        "required": ["name", "level", "doubt"],
        "additionalProperties": False,
    }
    assert answer_schema(Walk) == {
        "type": "object",
        "properties": {
            "kind": {"enum": ["near", "far"], "type": "string"},
            "steps": {"type": "array", "items": step},
            "themes": {"type": "array", "items": {"type": "string", "maxLength": 80}, "minItems": 0, "maxItems": 3},
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
    assert len(JSON_KINDS) == 11
    assert all(prompt.schema is None for kind, prompt in load_prompts().items() if kind not in JSON_KINDS)


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_each_schema_is_valid_and_plain(kind: str) -> None:
    schema = load_prompts()[kind].schema
    Draft202012Validator.check_schema(schema)
    assert not keywords(schema) & {"$ref", "$defs", "title", "description", "default"}
    for node in objects(schema):
        assert node["required"] == list(node["properties"]) and node["additionalProperties"] is False


def maximal(schema: dict[str, Any]) -> Any:
    """The longest answer ``schema`` admits: every string at its longest (words), every list at its most items,
    the last of every choice; what a model held to the schema by a grammar can write at worst.
    """
    if "enum" in schema:
        return schema["enum"][-1]
    if "anyOf" in schema:
        return maximal(schema["anyOf"][0])
    kind = schema["type"]
    if kind == "object":
        return {name: maximal(sub) for name, sub in schema["properties"].items()}
    if kind == "array":
        return [
            {**item, "entity": f"{n}{item['entity'][1:]}"} if isinstance(item, dict) and "entity" in item else item
            for n, item in enumerate([maximal(schema["items"])] * schema["maxItems"])
        ]
    if kind == "string":
        return ("word " * schema["maxLength"])[: schema["maxLength"]]
    return {"integer": 1, "number": 0.5, "boolean": True}[kind]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_the_longest_answer_a_schema_admits_is_accepted_and_fits_max_tokens(kind: str) -> None:
    """What a grammar lets through, the reader takes, and the request's max_tokens (at three characters a token,
    where SmolLM2 writes four in JSON) holds all of it: no answer is cut mid-JSON for being as long as allowed.
    """
    prompt = load_prompts()[kind]
    longest = longest_answer(prompt.schema)
    assert longest is not None, "every string needs a maxLength and every list a maxItems"
    assert longest <= prompt.max_tokens * 3
    answer = json.dumps(maximal(prompt.schema), ensure_ascii=False)
    assert len(answer) <= longest
    value, why = prompt.read(answer)
    assert why is None and value is not None


@pytest.fixture(scope="module")
def llama_vocabulary() -> Any:
    """SmolLM2's vocabulary, loaded alone (no weights): what llama.cpp builds a grammar against."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    from llama_cpp import Llama

    return Llama(model_path=str(model_path()), vocab_only=True, verbose=False)


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_llama_cpp_makes_a_grammar_of_each_schema(kind: str, llama_vocabulary: Any) -> None:
    """Both halves of llama-cpp-python's server take the schema: its Python converter (which falls back to any JSON,
    silently, when it cannot convert one) and llama.cpp's grammar parser, which refuses too long a bound (a string of
    1,200 characters) and leaves the server to crash on the request.
    """
    import llama_cpp
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter.visit(converter.resolve_refs(load_prompts()[kind].schema, ""), "")
    vocabulary = llama_cpp.llama_model_get_vocab(llama_vocabulary.model)
    sampler = llama_cpp.llama_sampler_init_grammar(vocabulary, converter.format_grammar().encode(), b"root")
    assert sampler, "llama.cpp refused the grammar (its reason is on stderr)"
    llama_cpp.llama_sampler_free(sampler)
