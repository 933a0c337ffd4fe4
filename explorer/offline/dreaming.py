"""Offline answers for the prompts of the night (judge, REM question, REM
synthesis, dream relation, fusion), each derived from the prompt's own input.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from explorer.offline import answers
from explorer.offline.judging import shared_phrases
from explorer.offline.kit import OfflineKit
from explorer.offline.reading import implant
from explorer.prompts import split_passages
from explorer.text import keyphrases, shorten


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


@answers("rem_question")
def rem_question(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The keyphrases the passages share, asked about; else each passage's own keyphrase."""
    passages = split_passages(str(fields["passages"]))
    counts: Counter[str] = Counter()
    first_seen: dict[str, str] = {}
    for index, passage in enumerate(passages):
        others = [p for k, p in enumerate(passages) if k != index]
        for phrase in shared_phrases(passage, others, 6):
            key = phrase.lower()
            counts[key] += 1
            first_seen.setdefault(key, phrase)
    shared = [first_seen[key] for key, _ in counts.most_common(3)]
    if shared:
        return (
            f"What do these passages reveal about {_join(shared)}, and how does that understanding change "
            "from one passage to the next?"
        )
    own = [phrases[0] for phrases in (keyphrases(p, 1) for p in passages) if phrases]
    return f"What links {_join(own or ['these passages'])}, and what does setting them side by side reveal?"


@answers("rem_synthesis")
def rem_synthesis(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The sentences of the passages and related knowledge nearest the question, under 150 words."""
    question = str(fields["question"])
    passages = split_passages(str(fields["passages"]))
    related = split_passages(str(fields["related"]))
    chosen = kit.central_sentences(passages, k=2, focus=question)
    chosen += [s for s in kit.central_sentences(related, k=1, focus=question) if s not in chosen]
    if not chosen:
        chosen = [shorten(p, 25) for p in passages[:2]]
    themes = keyphrases(" ".join(passages), 3)
    body = " ".join(f"“{shorten(s, 30)}”" for s in chosen)
    close = f" Side by side, they turn on {_join(themes)}." if themes else ""
    return f"In answer to the question, the passages converge: {body}{close}"


@answers("dream_relation")
def dream_relation(fields: dict[str, Any], kit: OfflineKit) -> str:
    """As the READING cycle's implant: NOTHING when the synthesis repeats what is known."""
    return implant({"new_info": fields["synthesis"], "existing_knowledge": fields["related"]}, kit)


FUSION_SHARE = 0.6  # the summary aims at this share of the sources' length


@answers("fusion")
def fusion(fields: dict[str, Any], kit: OfflineKit) -> str:
    """An extractive summary: the most central sentences, added while it stays short."""
    memories = split_passages(str(fields["memories"]))
    budget = FUSION_SHARE * sum(len(m) for m in memories)
    ranked = kit.central_sentences(memories, k=max(1, len(memories)))
    if not ranked:
        ranked = [shorten(m, 20) for m in memories]
    themes = keyphrases(" ".join(memories), 3)
    prefix = f"On {_join(themes)}: " if themes else ""
    kept: list[str] = []
    for sentence in ranked:
        if kept and len(prefix + " ".join([*kept, shorten(sentence, 25)])) > budget:
            break
        kept.append(shorten(sentence, 25))
    return json.dumps({"summary": prefix + " ".join(kept)})
