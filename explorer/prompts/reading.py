"""Prompts of the READING cycle (docs/reading.md): implant synthesis and entities."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from explorer.prompts import Prompt, clean_text
from explorer.prompts.answers import (
    LABEL_MAX_CHARS,
    AnswerModel,
    Checked,
    answer_schema,
    checked_each,
    json_value,
    label,
    listed,
    prose,
    refuse,
    said,
    text_field,
)

_NOTHING = re.compile(r"\W*NOTHING\W*", re.IGNORECASE)
_NOTHING_FIRST = re.compile(r"\W*NOTHING\b")  # in capitals, as asked, then why
_NOTHING_WORD = re.compile(r"\W*nothing\b", re.IGNORECASE)


def said_nothing(answer: str) -> bool:
    """Whether an answer asked for "a paragraph, or exactly NOTHING" says NOTHING.

    Models rarely say it exactly: "nothing.", "**NOTHING**", "NOTHING - it repeats the known passage",
    reasoning with NOTHING on the last line, "Nothing new." All are NOTHING; a paragraph that merely begins
    with the word ("Nothing in the new passage contradicts...") is not.
    """
    lines = [line for line in answer.splitlines() if line.strip()]
    return bool(
        _NOTHING.fullmatch(answer)
        or _NOTHING_FIRST.match(answer)
        or (lines and _NOTHING.fullmatch(lines[-1]) and "NOTHING" in lines[-1])
        or (len(answer.split()) <= 5 and _NOTHING_WORD.match(answer))
    )


def read_paragraph(text: str) -> str:
    """The paragraph asked for; the empty string when the model says NOTHING; refused when it is no paragraph
    (empty, JSON, code, HTML, a word or two).
    """
    answer = clean_text(text)
    return "" if answer and said_nothing(answer) else prose(answer)


def parse_implant(text: str) -> str | None:
    """The synthesis paragraph, "" for NOTHING, or ``None`` when :data:`IMPLANT` refuses the answer."""
    return IMPLANT.parse(text)


IMPLANT = Prompt[str](
    kind="implant",
    template=(
        "New information: {new_info}\n\n"
        "Existing knowledge: {existing_knowledge}\n\n"
        "Write exactly 1 short paragraph (50-100 words) explaining how this new information relates to existing "
        "knowledge. Focus on:\n"
        "- Key similarities or contradictions\n"
        "- How it extends or challenges what we know\n"
        "- The most important new insight (if any)\n\n"
        "Be concise and specific. Keep your response to a single, impactful paragraph.\n\n"
        "If this adds nothing new or is simply a repetition of what we already know, respond with exactly: NOTHING"
    ),
    reader=read_paragraph,
    temperature=0.3,
    max_tokens=250,
)


@dataclass(frozen=True)
class EntityLearning:
    """One entity a passage speaks of and what it teaches about it, followed up in the READING cycle."""

    entity: str
    learning: str


MAX_ENTITIES = 4  # the most a passage is asked for (the reading cycle's config asks for 3 by default)
_PLACEHOLDERS = frozenset({"entity", "entity/concept", "concept", "a short name"})  # the example, echoed


def entity_name(value: object) -> str:
    """An entity's name: a short name (:func:`~explorer.prompts.answers.label`), not blank and not the example's
    placeholder echoed back.
    """
    name = label(value)
    if not name or name.lower() in _PLACEHOLDERS:
        refuse(f"a name is needed, not {name!r}")
    return name


class EntityAnswer(AnswerModel):
    """One entity: a short name and what the passage teaches about it, in a sentence."""

    entity: Annotated[str, Checked(entity_name, said(1, LABEL_MAX_CHARS))]
    learning: Annotated[str, text_field(300, 1)]  # a sentence


class EntitiesAnswer(AnswerModel):
    """The entities prompt's JSON, whole: the shape the model is asked for (the reader takes each entity on its
    own, so one that does not check out leaves the others).
    """

    entities: Annotated[list[EntityAnswer], Field(max_length=MAX_ENTITIES)]


def read_entities(text: str) -> list[EntityLearning]:
    """``{"entities": [{entity, learning}]}`` (or a bare list), the first :data:`MAX_ENTITIES`; an empty list is a
    valid answer (the passage names nothing). An entity that does not check out is left out; the answer is refused
    when none of those given does.
    """
    found = checked_each(EntityAnswer, listed(json_value(text), "entities"), "entities")
    return [EntityLearning(answer.entity, answer.learning) for _, answer in found[:MAX_ENTITIES]]


def parse_entities(text: str) -> list[EntityLearning] | None:
    """The entities, or ``None`` when :data:`ENTITIES` refuses the answer."""
    return ENTITIES.parse(text)


ENTITIES = Prompt[list[EntityLearning]](
    kind="entities",
    template=(
        "Passage: {passage}\n\n"
        "List the entities and abstract concepts this passage refers to (at most {max_entities}), and for each "
        "what we learn about it from the passage, in one sentence.\n\n"
        'Respond in JSON format: an object whose "entities" is a list of objects, each with "entity" (its name, '
        'as the passage writes it) and "learning" (what we learn about it). If there are none, the list is empty.'
    ),
    reader=read_entities,
    temperature=0.2,
    max_tokens=600,
    schema=answer_schema(EntitiesAnswer),
)

ENTITY_SYNTHESIS = Prompt[str](
    kind="entity_synthesis",
    template=(
        "About {entity}, we just learned: {learning}\n\n"
        "Previous understanding: {previous}\n\n"
        "How does this fit with what we already know about {entity}? Answer in 1-3 sentences."
    ),
    reader=lambda text: prose(text, "an answer of 1-3 sentences"),
    temperature=0.3,
    max_tokens=200,
)
