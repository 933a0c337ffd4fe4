"""The offline provider: every prompt kind answered, from its own input."""

from __future__ import annotations

import pytest

from explorer.offline import ANSWERS, load_answers
from explorer.prompts import REGISTRY, format_passages, load_prompts
from explorer.prompts.reading import ENTITIES, ENTITY_SYNTHESIS, IMPLANT

NEW = (
    "Python 3.0 makes print a function. The print statement is gone, and print() takes keyword "
    "arguments such as sep and end. Dictionary views replace lists from keys()."
)
KNOWN = [
    "Python 2.6 adds a print_function future import so code can call print() as a function.",
    "The with statement arrives in Python 2.5 for managing resources.",
]


def test_every_prompt_kind_has_an_offline_answer() -> None:
    load_answers()
    assert REGISTRY, "no prompts registered"
    assert set(REGISTRY) <= set(ANSWERS), f"no offline answer for {sorted(set(REGISTRY) - set(ANSWERS))}"


def test_implant_relates_the_new_passage_to_what_is_known(runtime) -> None:
    answer = runtime.gateway.ask(
        IMPLANT, {"new_info": NEW, "existing_knowledge": format_passages(KNOWN, ["2008", "2006"])}
    )
    assert answer.ok and answer.tier == "offline" and answer.model == "offline/extractive"
    assert "print" in answer.value.lower()
    assert any(sentence[:30] in answer.value for sentence in KNOWN)  # quotes the known side it relates to


def test_implant_says_nothing_for_a_repetition_or_an_empty_memory(runtime) -> None:
    again = runtime.gateway.ask(IMPLANT, {"new_info": KNOWN[0], "existing_knowledge": format_passages(KNOWN)})
    assert again.ok and again.value == ""
    alone = runtime.gateway.ask(IMPLANT, {"new_info": NEW, "existing_knowledge": format_passages([])})
    assert alone.ok and alone.value == ""


def test_entities_are_phrases_of_the_passage_with_their_sentence(runtime) -> None:
    answer = runtime.gateway.ask(ENTITIES, {"passage": NEW, "max_entities": 3})
    assert answer.ok and 1 <= len(answer.value) <= 3
    for item in answer.value:
        assert item.entity.lower() in NEW.lower()
        assert item.learning.rstrip(" …") in NEW or item.learning.rstrip(" …")[:40] in NEW


def test_entity_synthesis_uses_previous_understanding(runtime) -> None:
    first = runtime.gateway.ask(
        ENTITY_SYNTHESIS, {"entity": "print", "learning": "print is a function in 3.0", "previous": format_passages([])}
    )
    assert first.ok and first.value == "print is a function in 3.0."  # a first note is the learning itself
    later = runtime.gateway.ask(
        ENTITY_SYNTHESIS,
        {"entity": "print", "learning": "print is a function in 3.0", "previous": format_passages(KNOWN[:1])},
    )
    assert later.ok and "print_function" in later.value


def test_offline_answers_are_deterministic(make_runtime, tmp_path) -> None:
    fields = {"new_info": NEW, "existing_knowledge": format_passages(KNOWN)}
    first = make_runtime(db=tmp_path / "a.duckdb").gateway.ask(IMPLANT, fields).value
    second = make_runtime(db=tmp_path / "b.duckdb").gateway.ask(IMPLANT, fields).value
    assert first == second


SHORT_FIELDS = {"count": 3, "max_entities": 3, "min_score": 2.0, "themes": "print, functions"}


@pytest.mark.parametrize("kind", sorted(load_prompts()))
def test_every_offline_answer_is_read_without_a_reason(runtime, kind) -> None:
    """The offline answers pass the same checks as a model's: shape, types, ranges and the length cap."""
    prompt = REGISTRY[kind]
    block = format_passages([NEW, *KNOWN], ["python", "history", None])
    fields = {
        name: "python, history" if name.endswith("domains") else SHORT_FIELDS.get(name, block) for name in prompt.fields
    }
    text = runtime.gateway.offline.answer(prompt, fields)
    value, reason = prompt.read(text)
    assert reason is None and value is not None, f"{kind}: {reason}"
    assert len(text) <= prompt.answer_cap


def test_a_batch_of_requests_is_embedded_at_once_and_a_bad_one_fails_alone(runtime, monkeypatch) -> None:
    inner = runtime.embedder.inner
    calls: list[int] = []
    real = inner.embed
    monkeypatch.setattr(inner, "embed", lambda texts: calls.append(len(texts)) or real(texts))
    passages = format_passages(KNOWN)
    requests = [
        (IMPLANT, {"new_info": f"{NEW} Release {n} adds more.", "existing_knowledge": passages}) for n in (1, 2)
    ]
    requests.append((IMPLANT, {"new_info": NEW}))  # no existing_knowledge: the provider cannot answer it
    answers = runtime.gateway.ask_each(requests)
    assert len(calls) == 1  # every text the answers compared was embedded in one call, before them
    assert [a.ok for a in answers] == [True, True, False]
    assert "existing_knowledge" in answers[2].error
