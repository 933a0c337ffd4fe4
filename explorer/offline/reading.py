"""Offline answers for the READING cycle's prompts."""

from __future__ import annotations

from typing import Any

from explorer.offline import answers
from explorer.offline.kit import OfflineKit
from explorer.prompts import split_passages
from explorer.text import keyphrases, shorten, split_sentences

NOTHING_SIMILARITY = 0.92  # a passage this close to something known adds nothing


@answers("implant")
def implant(fields: dict[str, Any], kit: OfflineKit) -> str:
    """How a new passage relates to its nearest known ones: their closest sentences side by side and what it adds;
    NOTHING when it all but repeats something known.
    """
    new_info = str(fields["new_info"])
    known = split_passages(str(fields["existing_knowledge"]))
    new_sentences = [s for s in split_sentences(new_info) if len(s.split()) >= 4] or [new_info]
    if not known:
        return "NOTHING"
    whole = kit.similarity([new_info], known)[0]
    if float(whole.max()) >= NOTHING_SIMILARITY:
        return "NOTHING"
    known_sentences = [s for k in known for s in split_sentences(k) if len(s.split()) >= 4] or known
    i, j, sim = kit.closest_pair(new_sentences, known_sentences)
    novelty = kit.similarity(new_sentences, known_sentences).max(axis=1)
    novel = new_sentences[int(novelty.argmin())]
    shared = [p for p in keyphrases(new_info, 6) if p.lower() in " ".join(known).lower()][:3]
    topic = ", ".join(shared) if shared else ", ".join(keyphrases(new_info, 2)) or "this subject"
    relation = "restates" if sim > 0.8 else "echoes" if sim > 0.55 else "loosely touches"
    parts = [
        f"On {topic}, the new passage {relation} what is known: “{shorten(new_sentences[i], 30)}” "
        f"beside “{shorten(known_sentences[j], 30)}”."
    ]
    if novel != new_sentences[i]:
        parts.append(f"What it adds: “{shorten(novel, 30)}”.")
    return " ".join(parts)


@answers("entities")
def entities(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The passage's keyphrases as its entities, each with the first sentence that speaks of it."""
    passage = str(fields["passage"])
    limit = int(fields.get("max_entities", 5))
    sentences = split_sentences(passage)
    lines = []
    for phrase in keyphrases(passage, limit):
        where = next((s for s in sentences if phrase.lower() in s.lower()), None)
        if where:
            lines.append(f"- {phrase}: {shorten(where, 35)}")
    return "\n".join(lines) or "NONE"


@answers("entity_synthesis")
def entity_synthesis(fields: dict[str, Any], kit: OfflineKit) -> str:
    """What is learnt about an entity, said to confirm, extend or differ from the closest earlier note on it."""
    entity, learning = str(fields["entity"]), str(fields["learning"])
    previous = split_passages(str(fields["previous"]))
    if not previous:
        return f"First note on {entity}: {learning}"
    _, j, sim = kit.closest_pair([learning], previous)
    verdict = "is consistent with" if sim > 0.6 else "extends" if sim > 0.3 else "adds a different side to"
    return f"What we learn about {entity} {verdict} what we knew (“{shorten(previous[j], 30)}”): {learning}"
