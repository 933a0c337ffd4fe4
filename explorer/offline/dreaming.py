"""Offline answers for the prompts of the night (REM question, REM synthesis,
dream relation, fusion), each derived from the prompt's own input.

A dream's text is what a reviewer reads: the things its passages are about, the
sentences that bind them, and the nearest thing already known. Passages that
are earlier answers are read for what they quote (:func:`~explorer.offline.kit.source_sentences`),
so a dream never nests a synthesis inside a synthesis.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np

from explorer.offline import answers
from explorer.offline.kit import OfflineKit, capitalise, content, excerpt, join, quote, same, source_sentences, topic
from explorer.offline.reading import NOTHING_SIMILARITY
from explorer.prompts import split_passages
from explorer.prompts.dreaming import FUSION_CHARS
from explorer.text import as_written, keyphrases, shorten

SYNTHESIS_QUOTE_WORDS = 25  # three quotations and their connectives stay well under the 150 words asked


@answers("rem_question")
def rem_question(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The keyphrases the passages share, asked about; else what links each passage's own subject."""
    passages = [content(p) for p in split_passages(str(fields["passages"]))]
    counts: Counter[str] = Counter()
    first_seen: dict[str, str] = {}
    for index, passage in enumerate(passages):
        others = " ".join(p for k, p in enumerate(passages) if k != index).lower()
        for phrase in keyphrases(passage, 6):
            if phrase.lower() in others:
                counts[phrase.lower()] += 1
                first_seen.setdefault(phrase.lower(), phrase)
    everything = "\n\n".join(passages)  # a phrase is cased as all of them write it: one may say "Java" first only
    shared = [as_written(first_seen[key], everything) for key, _ in counts.most_common(3)]
    if shared:
        return f"What do these passages say about {join(shared)}, and how does that change from one to the next?"
    own: list[str] = []
    for passage in passages:
        found = topic(passage, avoid=own)
        if found:
            own.append(found)
    return f"What links {join(own)}?" if len(own) >= 2 else "What question do these passages answer together?"


@answers("rem_synthesis")
def rem_synthesis(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The two passages that speak most to the question, named by their subjects, each by its sentence nearest
    the question; and the related knowledge's nearest sentence, under 150 words.
    """
    question = str(fields["question"])
    passages = split_passages(str(fields["passages"]))
    related = [s for p in split_passages(str(fields["related"])) for s in source_sentences(p)]
    pool = [(p, s) for p, text in enumerate(passages) for s in excerpt(text)]
    if not pool:
        pool = [(p, shorten(text, SYNTHESIS_QUOTE_WORDS)) for p, text in enumerate(passages)]
    sims = kit.similarity([question], [s for _, s in pool])[0]
    chosen: list[tuple[int, str]] = []
    for k in np.argsort(-sims, kind="stable"):
        p, sentence = pool[int(k)]
        if all(p != q and not same(sentence, s) for q, s in chosen):
            chosen.append((p, sentence))
        if len(chosen) == 2:
            break
    subjects: list[str] = []
    for p, sentence in chosen:
        subjects.append(topic(sentence, avoid=subjects) or topic(passages[p], avoid=subjects) or "another subject")
    said = [quote(s, SYNTHESIS_QUOTE_WORDS) for _, s in chosen]
    if len(chosen) == 1:
        text = f"On {subjects[0]}, one passage answers: {said[0]}."
    else:
        text = f"{capitalise(subjects[0])} and {subjects[1]} meet on this question: one passage says {said[0]}, "
        text += f"another {said[1]}."
    extra = [s for s in related if not any(same(s, c) for _, c in chosen)]
    if extra:
        best = extra[int(kit.similarity([question], extra)[0].argmax())]
        text += f" Related knowledge adds {quote(best, SYNTHESIS_QUOTE_WORDS)}."
    return text


@answers("dream_relation")
def dream_relation(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The synthesis and the nearest known sentence it does not already quote; NOTHING when the synthesis all
    but repeats something known.
    """
    synthesis = str(fields["synthesis"])
    known = split_passages(str(fields["related"]))
    if known and float(kit.similarity([synthesis], known)[0].max()) >= NOTHING_SIMILARITY:
        return "NOTHING"
    said = source_sentences(synthesis)
    body = synthesis.strip() if said else " ".join(excerpt(synthesis)[:3])
    if not body:
        return "NOTHING"
    pool = [(p, s) for p, text in enumerate(known) for s in source_sentences(text)]
    pool = [(p, s) for p, s in pool if not same(s, synthesis)]  # never quote again what the synthesis says
    if not pool:
        return body
    sims = kit.similarity([synthesis], [s for _, s in pool])[0]
    best = int(sims.argmax())
    subject = topic(pool[best][1]) or topic(known[pool[best][0]]) or "a related subject"
    closeness = "close to" if float(sims[best]) > 0.55 else "nearest to"
    return f"{body} Of what is known, it comes {closeness} a note on {subject}: {quote(pool[best][1], 25)}."


FUSION_SHARE = 0.6  # the summary aims at this share of the sources' length
NEAR_DUPLICATE = 0.9  # a sentence this close to one already kept repeats it


@answers("fusion")
def fusion(fields: dict[str, Any], kit: OfflineKit) -> str:
    """An extractive summary: the memories' most central sentences, each once, added while it stays short,
    given in the order the memories gave them.
    """
    memories = split_passages(str(fields["memories"]))
    budget = min(FUSION_CHARS, FUSION_SHARE * sum(len(m) for m in memories))  # FUSION_CHARS: what is accepted
    sentences = list(dict.fromkeys(s for m in memories for s in excerpt(m))) or [shorten(m, 20) for m in memories]
    if not sentences:
        return json.dumps({"summary": ""})
    vectors = kit.embed(sentences)
    centre = vectors.mean(axis=0)
    kept: list[int] = []
    for index in np.argsort(-(vectors @ centre), kind="stable"):
        index = int(index)
        if any(float(vectors[index] @ vectors[k]) >= NEAR_DUPLICATE for k in kept):
            continue
        if kept and len(" ".join(sentences[k] for k in [*kept, index])) > budget:
            break
        kept.append(index)
    return json.dumps({"summary": " ".join(sentences[k] for k in sorted(kept))})
