"""Prompts of the READING cycle (rem-rag.md): implant synthesis and entities."""

from __future__ import annotations

import re
from dataclasses import dataclass

from explorer.prompts import Prompt, clean_text


def parse_implant(text: str) -> str | None:
    """The synthesis paragraph; the empty string when the model says NOTHING."""
    answer = clean_text(text)
    if not answer:
        return None
    if re.fullmatch(r"\W*NOTHING\W*", answer, flags=re.IGNORECASE):
        return ""
    return answer


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
    parse=parse_implant,
    temperature=0.3,
    max_tokens=250,
)


@dataclass(frozen=True)
class EntityLearning:
    """One entity a passage speaks of and what it teaches about it, followed up in the READING cycle."""

    entity: str
    learning: str


_ENTITY_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*\**(?P<entity>[^:*\n]{1,80}?)\**\s*:\s*(?P<learning>.+?)\s*$")


def parse_entities(text: str) -> list[EntityLearning] | None:
    """``- Entity: what we learn`` lines; an empty list is a valid answer, ``None`` is not."""
    if not text or not text.strip():
        return None
    found = []
    for line in text.splitlines():
        match = _ENTITY_LINE.match(line)
        if match:
            entity = match["entity"].strip().strip("*").strip()
            if entity and entity.lower() not in {"entity", "entity/concept", "concept"}:
                found.append(EntityLearning(entity, match["learning"].strip()))
    if not found and not re.search(r"\bnone\b", text, flags=re.IGNORECASE):
        return None
    return found


ENTITIES = Prompt[list[EntityLearning]](
    kind="entities",
    template=(
        "Passage: {passage}\n\n"
        "List the entities and abstract concepts this passage refers to (at most {max_entities}).\n"
        "For each, what do we learn about it?\n\n"
        "Format:\n- Entity/Concept: What we learn\n\n"
        "If there are none, answer: NONE"
    ),
    parse=parse_entities,
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
    parse=lambda text: clean_text(text) or None,
    temperature=0.3,
    max_tokens=200,
)
