"""Offline answers for Wander's prompts.

Every phrase comes from the prompt's own input: keyphrases of the two loci
name them and become themes, their sentences (ranked by embedding similarity)
become the reflections, and the ratings are measured, not guessed:
interestingness peaks when the two concepts are neither near-duplicates nor
unrelated. A locus, a residue or a piece of evidence that is an earlier answer
is read for what it quotes (:func:`~explorer.offline.kit.source_sentences`), so
no reflection quotes another's connectives.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from explorer.offline import answers
from explorer.offline.kit import OfflineKit, agreeing, capitalise, content, excerpt, join, quote, same, topic
from explorer.prompts import split_passages
from explorer.text import as_written, keyphrases, shorten

_LABELLED = re.compile(r"^\[\d+\] \(([^)]*)\) ", re.MULTILINE)
_ACTION_WORDS = re.compile(
    r"\b(use|using|add|added|replace|replaced|avoid|should|must|can now|instead|deprecated|removed|"
    r"call|run|install|set|enable|disable|try|write|prefer|switch|migrate|new)\b",
    re.IGNORECASE,
)

MAX_SENTENCES = 12  # per text: enough to choose from, few enough to embed quickly on a CPU


def _sentences(text: str) -> list[str]:
    return excerpt(text)[:MAX_SENTENCES]


def _phrases(text: str, top: int) -> list[str]:
    return keyphrases(content(text), top)


def _labels(block: str) -> list[str | None]:
    """The ``(label)`` of each passage of a format_passages block, None where unlabelled."""
    labels: list[str | None] = []
    for line in block.splitlines():
        if re.match(r"^\[\d+\] ", line):
            match = _LABELLED.match(line)
            labels.append(match[1] if match else None)
    return labels


def _domains(value: Any) -> list[str]:
    text = str(value or "")
    return [] if text in ("", "(none)", "unknown") else [d.strip() for d in text.split(",") if d.strip()]


def actionability(sentences: list[str]) -> float:
    """Share of sentences that say what to do or what changed, scaled so that half of them is 1.0."""
    if not sentences:
        return 0.0
    share = sum(bool(_ACTION_WORDS.search(s)) for s in sentences) / len(sentences)
    return round(min(1.0, 2 * share), 3)


def encounter_interest(similarity: float, cross_domain: bool) -> float:
    """Most interesting at cosine distance 0.5 (related but different), more so across domains."""
    fit = max(0.0, 1.0 - abs((1.0 - similarity) - 0.5) / 0.5)
    return round(min(1.0, 0.8 * fit + (0.2 if cross_domain else 0.05)), 3)


DWELL_WORDS = 20  # a reflection's quotation is cut after this many words: the reflections are 1-2 sentences


@answers("wander_dwell")
def dwell(fields: dict[str, Any], kit: OfflineKit) -> str:
    """A dwelling between two loci, each named by its subject: their closest and farthest sentences as
    connection and tension, the closest pair of their keyphrases as the bridge and the themes, and measured
    (not guessed) interestingness and actionability.
    """
    here_text, there_text = str(fields["current_concept"]), str(fields["next_concept"])
    here_domains, there_domains = _domains(fields.get("current_domains")), _domains(fields.get("next_domains"))
    ours = _sentences(here_text) or [shorten(here_text, 20)]
    theirs = _sentences(there_text) or [shorten(there_text, 20)]
    texts = "\n\n".join(str(v) for v in fields.values())  # the loci, and the themes and resonances of the walk
    # Cased as the two loci and the walk write them: one locus may say "Python" only where a sentence starts.
    here_phrases = [as_written(p, texts) for p in _phrases(here_text, 4)]
    there_phrases = [as_written(p, texts) for p in _phrases(there_text, 4)]
    here_name = here_phrases[0] if here_phrases else "the current locus"
    there_name = as_written(topic(there_text, avoid=[here_name]), texts) or "the encountered locus"
    whole = float(kit.similarity([content(here_text)], [content(there_text)])[0, 0])
    sims = kit.similarity(ours, theirs)
    i, j = divmod(int(sims.argmax()), sims.shape[1])
    far_i, far_j = divmod(int(sims.argmin()), sims.shape[1])
    surprise = theirs[int(sims.max(axis=0).argmin())]
    pair_i, pair_j, _ = kit.closest_pair(here_phrases, there_phrases) if here_phrases and there_phrases else (0, 0, 0)
    a = here_phrases[pair_i] if here_phrases else here_name
    b = there_phrases[pair_j] if there_phrases else there_name
    # Themes: the closest pair first (what links them), then the encountered locus's own salient phrases; a locus
    # with no phrase of its own lends none (its stand-in name is no theme).
    pair = [b if there_phrases else "", a if here_phrases else ""]
    themes = list(dict.fromkeys(t for t in [*pair, *there_phrases[:2], *here_phrases[:1]] if t))[:5]
    cross = bool(here_domains and there_domains and not set(here_domains) & set(there_domains))
    here_domains, there_domains = (
        [as_written(d, texts) for d in here_domains],
        [as_written(d, texts) for d in there_domains],
    )
    where = (
        f"from {join(here_domains)} to {join(there_domains)}"
        if cross
        else f"within {join(there_domains or here_domains) or 'one domain'}"
    )
    link = join([a, b])
    carried = (
        f"{a} {agreeing(a, 'is', 'are')} common ground"
        if a.lower() == b.lower()
        else f"{a} {agreeing(a, 'carries', 'carry')} over as {b}"
    )
    named = {here_name.lower(), there_name.lower()}
    through = join(list(dict.fromkeys(t for t in (a, b) if t.lower() not in named)))
    pool = ours + theirs
    lead = pool[int(np.argmax(kit.similarity([link], pool)[0]))]
    said = (
        f"both say {quote(ours[i], DWELL_WORDS)}"
        if same(ours[i], theirs[j])
        else f"{quote(ours[i], DWELL_WORDS)}, and {quote(theirs[j], DWELL_WORDS)}"
    )
    answer = {
        "connection": f"{capitalise(here_name)} and {there_name} meet{f' through {through}' if through else ''}: "
        f"{said}.",
        "tension": f"They part ways where one says {quote(ours[far_i], DWELL_WORDS)} and the other "
        f"{quote(theirs[far_j], DWELL_WORDS)}.",
        "bridge": f"{capitalise(where)}, {carried}.",
        "surprise": f"Unexpected beside {here_name}: {quote(surprise, DWELL_WORDS)}.",
        "possibility": f"A lead to follow on {link}: {quote(lead, DWELL_WORDS)}.",
        "themes": themes or [here_name],
        "interestingness": encounter_interest(whole, cross),
        "actionability": actionability(ours + theirs),
    }
    return json.dumps(answer)


ANALOGY_WORDS = 30  # an analogy's concept: one sentence of its passage, cut after this many words


@answers("wander_analogy")
def analogy(fields: dict[str, Any], kit: OfflineKit) -> str:
    """Analogies from passages of other domains: in each, the keyphrase closest to one of the locus's own
    (never the same phrase); the concept is the passage's sentence that speaks of it.
    """
    concept = str(fields["concept"])
    block = str(fields["elsewhere"])
    passages, labels = split_passages(block), _labels(block)
    count = int(fields.get("count", 3))
    here_phrases = _phrases(concept, 3) or [shorten(content(concept), 6)]
    found = []
    # Padded on purpose: an unnumbered block is one passage with no label, read as unlabelled.
    for passage, label in list(zip(passages, labels + [None] * len(passages), strict=False))[:count]:
        there_phrases = _phrases(passage, 3)
        sentences = _sentences(passage)
        if not there_phrases or not sentences:
            continue
        sims = kit.similarity(here_phrases, there_phrases)
        for a, x in enumerate(here_phrases):  # a phrase is no analogy of itself
            for b, y in enumerate(there_phrases):
                if x.lower() == y.lower():
                    sims[a, b] = -np.inf
        if not np.isfinite(sims).any():
            continue
        i, j = divmod(int(np.argmax(sims)), sims.shape[1])
        best = [s for s in sentences if there_phrases[j].lower() in s.lower()] or sentences[:1]
        said = shorten(min(best[:3], key=lambda s: len(s.split())), ANALOGY_WORDS)
        found.append(
            {
                "concept": said,
                "domain": label,
                "rationale": f"{capitalise(there_phrases[j])} may play the part that {here_phrases[i]} "
                f"{agreeing(here_phrases[i], 'plays', 'play')} here.",
            }
        )
    return json.dumps({"analogies": found})


@answers("wander_crystallize")
def crystallize(fields: dict[str, Any], kit: OfflineKit) -> str:
    """A crystal's insight: the two evidence passages (of different domains where it can) whose sentences come
    closest to the recurring themes, named by their subjects, and those sentences; its confidence is how close
    the best evidence is.
    """
    themes = [t.strip() for t in str(fields["themes"]).split(",") if t.strip()]
    locus = str(fields["locus"])
    block = str(fields["evidence"])
    evidence = split_passages(block)
    labels = _labels(block) + [None] * len(evidence)
    focus = ", ".join(themes[:3]) or shorten(content(locus), 8)
    pool = [(p, s) for p, text in enumerate(evidence) for s in _sentences(text)] or [
        (-1, s) for s in _sentences(locus)[:1]
    ]
    sims = kit.similarity([focus], [s for _, s in pool])[0] if pool else np.zeros(0)
    chosen: list[tuple[int, str]] = []
    for k in np.argsort(-sims, kind="stable"):
        p, sentence = pool[int(k)]
        other_domain = not chosen or labels[p] != labels[chosen[0][0]] or len(set(labels)) <= 1
        if not chosen or (p != chosen[0][0] and other_domain and sentence != chosen[0][1]):
            chosen.append((p, sentence))
        if len(chosen) == 2:
            break
    support = kit.similarity([focus], evidence)[0] if evidence else []
    confidence = float(sum(sorted(support, reverse=True)[:3]) / max(1, min(3, len(support)))) if len(support) else 0.0
    domains = list(dict.fromkeys([*_domains(fields.get("domains")), *(label for label in _labels(block) if label)]))
    answer = {
        "insight": _insight(chosen, evidence, themes, locus),
        "confidence": round(min(1.0, max(0.0, confidence)), 3),
        "actionability": actionability([s for e in evidence for s in _sentences(e)] or _sentences(locus)),
        "domains": domains,
    }
    return json.dumps(answer)


def _insight(chosen: list[tuple[int, str]], evidence: list[str], themes: list[str], locus: str) -> str:
    """The insight's sentence: what it connects (the subjects of its two quotes), what recurs there, the quotes."""
    subjects: list[str] = []
    for p, sentence in chosen:
        subjects.append(topic(sentence, avoid=subjects) or topic(evidence[p] if p >= 0 else locus) or "this locus")
    recurring = [t for t in themes if t.lower() not in {s.lower() for s in subjects}][:2]
    said = [quote(s, 25) for _, s in chosen]
    if not chosen:
        return shorten(content(locus), 40)
    verb = "recur" if len(recurring) > 1 else agreeing(join(recurring), "recurs", "recur")
    opener = f"{capitalise(join(recurring))} {verb}" if recurring else "A pattern recurs"
    if len(chosen) < 2:
        return f"{opener} around {subjects[0]}: {said[0]}."
    return f"{opener} between {subjects[0]} and {subjects[1]}: {said[0]}, and {said[1]}."


@answers("wander_validate")
def validate(fields: dict[str, Any], kit: OfflineKit) -> str:
    """Whether a crystal's insight holds: valid when enough evidence passages are close to it."""
    insight = str(fields["insight"])
    evidence = split_passages(str(fields["evidence"]))
    if not evidence:
        return json.dumps({"valid": False, "confidence": 0.0, "notes": "No evidence to check the insight against."})
    sims = kit.similarity([insight], evidence)[0]
    supporting = int((sims >= 0.35).sum())
    best = int(sims.argmax())
    valid = supporting >= min(2, len(evidence)) and float(sims.max()) >= 0.45
    said = _sentences(evidence[best])
    closest = said[int(kit.similarity([insight], said)[0].argmax())] if said else ""
    notes = f"{'Supported' if valid else 'Not supported'} by {supporting} of {len(evidence)} passages"
    notes += f"; the closest (similarity {float(sims[best]):.2f}) says {quote(closest, 20)}." if closest else "."
    return json.dumps({"valid": valid, "confidence": round(float(sims.mean()), 3), "notes": notes})
