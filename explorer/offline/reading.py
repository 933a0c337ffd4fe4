"""Offline answers for the READING cycle's prompts.

Each answer names the things it relates (by their keyphrases) and quotes the
sentences that relate them; sentences come from :func:`~explorer.offline.kit.source_sentences`,
so code, markup and an earlier answer's connectives are never quoted.
"""

from __future__ import annotations

import json
from typing import Any

from explorer.offline import answers
from explorer.offline.kit import OfflineKit, capitalise, excerpt, join, quote, same, source_sentences, topic
from explorer.prompts import split_passages
from explorer.text import as_written, keyphrases, shorten

NOTHING_SIMILARITY = 0.92  # a passage this close to something known adds nothing
IMPLANT_WORDS = 25  # three quotations of this length keep an implant near the 50-100 words asked
ENTITY_WORDS = 35  # what we learn about an entity: one sentence, cut after this many words


def _relation(similarity: float) -> str:
    return "restates" if similarity > 0.8 else "echoes" if similarity > 0.55 else "touches on"


def _implant_texts(fields: dict[str, Any]) -> tuple[str, list[str], list[str], list[tuple[int, str]]]:
    """The new passage, the known ones, the new one's sentences and each known sentence with its passage."""
    new_info = str(fields["new_info"])
    known = split_passages(str(fields["existing_knowledge"]))
    return new_info, known, excerpt(new_info), [(p, s) for p, text in enumerate(known) for s in excerpt(text)]


def _implant_compares(fields: dict[str, Any]) -> list[str]:
    new_info, known, new_sentences, pool = _implant_texts(fields)
    return [new_info, *known, *new_sentences, *(s for _, s in pool)]


@answers("implant", compares=_implant_compares)
def implant(fields: dict[str, Any], kit: OfflineKit) -> str:
    """How a new passage relates to its nearest known one: what each is about, the sentences that meet and what
    the new one adds; NOTHING when it all but repeats something known, or holds no sentence to relate.
    """
    new_info, known, new_sentences, pool = _implant_texts(fields)
    if not known or float(kit.similarity([new_info], known)[0].max()) >= NOTHING_SIMILARITY:
        return "NOTHING"
    if not new_sentences or not pool:
        return "NOTHING"
    known_sentences = [s for _, s in pool]
    sims = kit.similarity(new_sentences, known_sentences)
    i, j = divmod(int(sims.argmax()), sims.shape[1])
    novel = new_sentences[int(sims.max(axis=1).argmin())]
    source = known[pool[j][0]]
    # A label is cased as all the passages write it: a new note may write "Python" only where a sentence starts.
    passages = "\n\n".join([new_info, *known])
    new_topic = as_written(topic(new_info) or "this subject", passages)
    known_topic = topic(known_sentences[j], avoid=[new_topic]) or topic(source, avoid=[new_topic]) or "another subject"
    known_topic = as_written(known_topic, passages)
    shared = [
        as_written(p, passages)
        for p in keyphrases(new_info, 6)
        if p.lower() in source.lower() and p.lower() not in (new_topic.lower(), known_topic.lower())
    ]
    through = f" through {join(shared[:2])}" if shared else ""
    said = (
        f"both say {quote(new_sentences[i], IMPLANT_WORDS)}"  # two notes with one sentence: quoted once
        if same(new_sentences[i], known_sentences[j])
        else f"{quote(new_sentences[i], IMPLANT_WORDS)} beside {quote(known_sentences[j], IMPLANT_WORDS)}"
    )
    text = (
        f"This passage on {new_topic} {_relation(float(sims[i, j]))} an earlier one on {known_topic}{through}: {said}."
    )
    if not same(novel, new_sentences[i]) and not same(novel, known_sentences[j]):
        text += f" It adds {quote(novel, IMPLANT_WORDS)}."
    return text


@answers("entities")
def entities(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The passage's keyphrases as its entities, each with the first sentence of prose that speaks of it."""
    passage = str(fields["passage"])
    limit = int(fields.get("max_entities", 5))
    sentences = source_sentences(passage)
    found: list[dict[str, str]] = []
    for phrase in keyphrases(passage, limit + 2):
        where = next((s for s in sentences if phrase.lower() in s.lower()), None)
        if where and len(found) < limit:
            found.append({"entity": phrase, "learning": shorten(where, ENTITY_WORDS)})
    return json.dumps({"entities": found})


@answers("entity_synthesis")
def entity_synthesis(fields: dict[str, Any], kit: OfflineKit) -> str:
    """What is learnt about an entity; after an earlier note on it, whether the two agree, extend or differ,
    quoting the closest sentence of the earlier notes (never their connectives).
    """
    learning = str(fields["learning"])
    entity = as_written(str(fields["entity"]), f"{learning}\n\n{fields['previous']}")  # "god" → "God"
    said = (excerpt(learning) or [learning.strip()])[0]
    earlier = [s for p in split_passages(str(fields["previous"])) for s in source_sentences(p)]
    earlier = [s for s in earlier if not same(s, said)]
    if not earlier:
        first = shorten(said, ENTITY_WORDS)
        first = first if first.endswith((".", "!", "?", "…")) else first + "."
        return first if entity.lower() in said.lower() else f"{capitalise(entity)}: {first}"
    _, j, sim = kit.closest_pair([said], earlier)
    verdict = "agrees with" if sim > 0.6 else "extends" if sim > 0.3 else "differs from"
    return f"On {entity}, {quote(said)} {verdict} an earlier note, {quote(earlier[j])}."
