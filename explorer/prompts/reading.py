"""Prompts of the READING cycle (docs/reading.md): implant synthesis and entities."""

from __future__ import annotations

import re
from dataclasses import dataclass

from explorer.prompts import AnswerRejected, Prompt, clean_text
from explorer.prompts.answers import looks_like_json, opening, prose

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


# The learning runs to the line's end and is stripped after: a lazy learning before "\s*$" tried every blank of a
# long run as its end, rescanning the rest of the run each time.
_ENTITY_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*\**(?P<entity>[^:*\n]{1,80}?)\**\s*:\s*(?P<learning>.+)$")


def read_entities(text: str) -> list[EntityLearning]:
    """``- Entity: what we learn`` lines; an empty list (NONE) is a valid answer."""
    answer = clean_text(text)
    if not answer:
        raise AnswerRejected("empty answer")
    if looks_like_json(answer):
        raise AnswerRejected(f'JSON where "- Entity: what we learn" lines were asked (it begins {opening(answer)})')
    found = []
    for line in text.splitlines():
        match = _ENTITY_LINE.match(line)
        if match:
            entity = match["entity"].strip().strip("*").strip()
            if entity and entity.lower() not in {"entity", "entity/concept", "concept"}:
                found.append(EntityLearning(entity, match["learning"].strip()))
    if not found and not re.search(r"\bnone\b", text, flags=re.IGNORECASE):
        raise AnswerRejected(f'no "- Entity: what we learn" lines and no NONE (it begins {opening(answer)})')
    return found


def parse_entities(text: str) -> list[EntityLearning] | None:
    """The entities, or ``None`` when :data:`ENTITIES` refuses the answer."""
    return ENTITIES.parse(text)


ENTITIES = Prompt[list[EntityLearning]](
    kind="entities",
    template=(
        "Passage: {passage}\n\n"
        "List the entities and abstract concepts this passage refers to (at most {max_entities}).\n"
        "For each, what do we learn about it?\n\n"
        "Format:\n- Entity/Concept: What we learn\n\n"
        "If there are none, answer: NONE"
    ),
    reader=read_entities,
    temperature=0.2,
    max_tokens=500,
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
