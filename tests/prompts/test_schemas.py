"""The JSON schema each JSON prompt asks a model for: derived from its reader's pydantic model, and plain enough for
a grammar-constrained server (llama.cpp) and OpenAI's strict mode alike.
"""

from __future__ import annotations

import copy
import json
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
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
    said,
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
            "name": {"type": "string", **said(1, 20)},
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
            "themes": {
                "type": "array",
                "items": {"type": "string", **said(1, 80)},
                "minItems": 0,
                "maxItems": 3,
            },
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


def least(schema: dict[str, Any]) -> Any:
    """The least answer ``schema`` admits: every string at its shortest (a word's letters), every list at its fewest
    items, the first of every choice: what a grammar lets a model stop at.
    """
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return least(schema["anyOf"][0])
    kind = schema["type"]
    if kind == "object":
        return {name: least(sub) for name, sub in schema["properties"].items()}
    if kind == "array":
        return [least(schema["items"])] * schema.get("minItems", 0)
    if kind == "string":
        return "w" * schema.get("minLength", 0)
    return {"integer": 1, "number": 0.0, "boolean": False}[kind]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_the_least_answer_a_schema_admits_is_accepted(kind: str) -> None:
    """A grammar lets a model stop at the schema's least: no reflection left out, no list left empty that the
    reader needs (a dwelling's themes were, six times in one small model's walk).
    """
    prompt = load_prompts()[kind]
    value, why = prompt.read(json.dumps(least(prompt.schema)))
    assert why is None and value is not None


def changed(answer: Any, changes: dict[str, Any]) -> Any:
    """``answer`` with values replaced at dotted paths ("judgements.0.novelty"); a path to ``DROP`` removes the key."""
    answer = copy.deepcopy(answer)
    for path, value in changes.items():
        *parents, last = path.split(".")
        node = answer
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if value is DROP:
            del node[last]
        else:
            node[last] = value
    return answer


DROP = object()
# Every refusal a JSON prompt's reader makes, as a change to the least answer its schema admits. Each must be
# refused by the schema too, so a grammar-constrained server cannot write it.
REFUSALS = [
    ("entities", {"entities": [{"entity": "", "learning": "w"}]}, "entities.0: entity: a name is needed"),
    ("entities", {"entities": [{"entity": "w", "learning": ""}]}, "entities.0: learning: empty"),
    ("entities", {"entities": [{"entity": "w"}]}, "entities.0: learning: missing"),
    ("entities", {"entities": "w"}, "entities: a list is needed"),
    ("wander_dwell", {"themes": []}, "themes: none given"),
    ("wander_dwell", {"themes": ["", ""]}, "themes: none given"),
    ("wander_dwell", {"themes": [["w"]]}, "themes: item 0: a short name is needed, not a list"),
    ("wander_dwell", {"themes": ["w" * 81]}, "themes: item 0: a short name is needed, not 81 characters"),
    ("wander_dwell", {"connection": "", "tension": "", "bridge": ""}, "only 2 of the five reflections given"),
    ("wander_dwell", {"surprise": "w" * 401}, "surprise: 401 characters, over the 400-character limit"),
    ("wander_dwell", {"interestingness": DROP}, "interestingness: missing"),
    ("wander_dwell", {"actionability": 7}, "actionability: 7 is far outside the 0–1 scale"),
    ("wander_dwell", {"actionability": True}, "actionability: a number is needed, not a boolean"),
    ("wander_analogy", {"analogies": [{"concept": "ww", "domain": "", "rationale": ""}]}, "under the 3 needed"),
    ("wander_analogy", {"analogies": [{"concept": "www", "domain": ["w"], "rationale": ""}]}, "domain: a short name"),
    ("wander_crystallize", {"insight": "w" * 9}, "insight: 9 characters, under the 10 needed"),
    ("wander_crystallize", {"confidence": "high"}, "confidence: a number is needed, not the text 'high'"),
    ("wander_crystallize", {"domains": [{"w": 1}]}, "domains: item 0: a short name is needed, not an object"),
    ("wander_validate", {"valid": "yes"}, "valid: "),
    ("wander_validate", {"valid": DROP}, "valid: missing"),
    ("rem_judge", {"judgements": []}, "judgements: none given"),
    ("rem_judge", {"judgements.0.novelty": 10}, "judgements.0: novelty: 10 is far outside the 1–5 scale"),
    ("rem_judge", {"judgements.0.candidate": 0}, "judgements.0: candidate: a whole number from 1 is needed"),
    ("rem_judge", {"judgements.0.usefulness": DROP}, "judgements.0: usefulness: missing"),
    ("fusion", {"summary": ""}, "summary: empty"),
    ("consolidation_pattern", {"conditions": []}, "conditions: at least one text is needed"),
    ("consolidation_pattern", {"actions": [""]}, "actions: at least one text is needed"),
    ("consolidation_pattern", {"type": "habit"}, "type: "),
    ("consolidation_pattern", {"description": ""}, "description: empty"),
    ("consolidation_abstraction", {"statement": ""}, "statement: empty"),
    ("consolidation_relation", {"relationship": "friend"}, "relationship: "),
    ("consolidation_contradiction", {"contradicts": "no"}, "contradicts: "),
]


@pytest.mark.parametrize(("kind", "changes", "reason"), REFUSALS, ids=[f"{k}-{r[:30]}" for k, _, r in REFUSALS])
def test_every_refusal_of_a_reader_is_refused_by_its_schema(kind: str, changes: dict[str, Any], reason: str) -> None:
    prompt = load_prompts()[kind]
    answer = changed(least(prompt.schema), changes)
    value, why = prompt.read(json.dumps(answer))
    assert value is None and why is not None and reason in why
    assert not Draft202012Validator(prompt.schema).is_valid(answer), f"the schema lets a grammar write: {why}"


def test_every_json_prompt_has_its_refusals_listed() -> None:
    assert {kind for kind, _, _ in REFUSALS} == set(JSON_KINDS)


def trimmed(answer: Any) -> bool:
    """Whether a text in ``answer`` begins or ends with blanks, quotes or dots, which a reader trims. A text that must
    say something cannot begin so (its pattern); one that ends so may be shorter than its least once trimmed ("ab "
    for a concept of three or more), which the prompts leave to the model.
    """
    if isinstance(answer, dict):
        return any(trimmed(value) for value in answer.values())
    if isinstance(answer, list):
        return any(trimmed(value) for value in answer)
    return isinstance(answer, str) and answer != answer.strip().strip('"').strip().strip(".…").strip()


def drawn(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Answers ``schema`` admits, of every length, count, choice and character it allows. Written here for the plain
    schemas the prompts send (the keywords above): hypothesis-jsonschema, which would do it, no longer runs on
    current Hypothesis.
    """
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([drawn(option) for option in schema["anyOf"]])
    kind = schema["type"]
    if kind == "object":
        return st.fixed_dictionaries({name: drawn(sub) for name, sub in schema["properties"].items()})
    if kind == "array":
        return st.lists(drawn(schema["items"]), min_size=schema.get("minItems", 0), max_size=schema["maxItems"])
    if kind == "string" and "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True)
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=schema["maxLength"])
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum"))
    return {"boolean": st.booleans(), "null": st.none()}[kind]


@pytest.mark.parametrize("kind", JSON_KINDS)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_whatever_a_schema_admits_its_reader_accepts(kind: str, data: st.DataObject) -> None:
    """Answers drawn from the schema alone (every length, count, choice and character it allows) are each accepted:
    the reader refuses nothing a grammar-constrained server can write, but texts it trims (above) and an entity named
    by the placeholder word it was once shown.
    """
    prompt = load_prompts()[kind]
    answer = data.draw(drawn(prompt.schema))
    assert Draft202012Validator(prompt.schema).is_valid(answer)
    assume(not trimmed(answer))
    value, why = prompt.read(json.dumps(answer))
    assert why is None and value is not None
