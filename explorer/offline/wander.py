"""Offline answers for Wander's prompts.

Every phrase comes from the prompt's own input: keyphrases of the two loci
become themes, their sentences (ranked by embedding similarity) become the
reflections, and the ratings are measured, not guessed: interestingness peaks
when the two concepts are neither near-duplicates nor unrelated.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from explorer.offline import answers
from explorer.offline.kit import OfflineKit
from explorer.prompts import split_passages
from explorer.text import keyphrases, shorten, split_sentences

_LABELLED = re.compile(r"^\[\d+\] \(([^)]*)\) ", re.MULTILINE)
_ACTION_WORDS = re.compile(
    r"\b(use|using|add|added|replace|replaced|avoid|should|must|can now|instead|deprecated|removed|"
    r"call|run|install|set|enable|disable|try|write|prefer|switch|migrate|new)\b",
    re.IGNORECASE,
)


_QUOTED = re.compile(r"“([^”]{12,})”")


# Words of the offline provider's own connectives ("the new passage restates what is known", "what we learn
# about X extends what we knew"): a theme made of them says nothing about the content.
_CONNECTIVE_WORDS = frozenset(
    [
        "passage",
        "restates",
        "echoes",
        "loosely",
        "touches",
        "known",
        "extends",
        "adds",
        "knew",
        "learn",
        "note",
        "first",
        "consistent",
        "perhaps",
        "unexpected",
        "beside",
        "meets",
        "pull",
        "apart",
        "stands",
        "carries",
        "seen",
        "turn",
        "similarity",
    ]
)


def _content(text: str) -> str:
    """The quoted material of an extractive text (offline syntheses, insights and reflections quote their
    sources inside fixed connectives) and what follows the last quote; the text itself when it quotes nothing.
    """
    quoted = [q.rstrip(" …") for q in _QUOTED.findall(text)]
    if not quoted:
        return text
    tail = text[text.rfind("”") + 1 :].lstrip(" ).:").strip()
    parts = [*quoted, tail] if len(tail.split()) >= 4 else quoted
    return " ".join(p if p.endswith((".", "!", "?")) else p + "." for p in parts)


def _phrases(text: str, top: int) -> list[str]:
    found = [p for p in keyphrases(text, top + 3) if not set(p.lower().split()) & _CONNECTIVE_WORDS]
    return found[:top]


MAX_SENTENCES = 12  # per text: enough to choose from, few enough to embed quickly on a CPU


def _sentences(text: str) -> list[str]:
    found = [s for s in split_sentences(text) if len(s.split()) >= 4] or ([text.strip()] if text.strip() else [])
    return found[:MAX_SENTENCES]


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


@answers("wander_dwell")
def dwell(fields: dict[str, Any], kit: OfflineKit) -> str:
    """A dwelling between two loci: their closest and farthest sentences as connection and tension, shared
    keyphrases as themes, and measured (not guessed) interestingness and actionability.
    """
    here, there = _content(str(fields["current_concept"])), _content(str(fields["next_concept"]))
    here_domains, there_domains = _domains(fields.get("current_domains")), _domains(fields.get("next_domains"))
    ours, theirs = _sentences(here), _sentences(there)
    here_phrases, there_phrases = _phrases(here, 4), _phrases(there, 4)
    whole = float(kit.similarity([here], [there])[0, 0])
    sims = kit.similarity(ours, theirs)
    i, j = divmod(int(sims.argmax()), sims.shape[1])
    far_i, far_j = divmod(int(sims.argmin()), sims.shape[1])
    surprise = theirs[int(sims.max(axis=0).argmin())]
    shared_i, shared_j, _ = (
        kit.closest_pair(here_phrases, there_phrases) if here_phrases and there_phrases else (0, 0, 0.0)
    )
    a = here_phrases[shared_i] if here_phrases else "the current locus"
    b = there_phrases[shared_j] if there_phrases else "the encountered locus"
    # Themes: the closest pair first (what links them), then the encountered locus's own salient phrases.
    themes = list(dict.fromkeys(t for t in [b, a, *there_phrases[:2], *here_phrases[:1]] if t))[:5]
    cross = bool(here_domains and there_domains and not set(here_domains) & set(there_domains))
    where = (
        f"from {', '.join(here_domains)} to {', '.join(there_domains)}"
        if cross
        else f"within {', '.join(there_domains or here_domains) or 'one domain'}"
    )
    focus = " ".join(themes[:2])
    pool = ours + theirs
    possibility = [pool[int(np.argmax(kit.similarity([focus], pool)[0]))]] if focus else [theirs[j]]
    answer = {
        "connection": f"Both turn on {a} and {b}: “{shorten(ours[i], 30)}” meets “{shorten(theirs[j], 30)}” "
        f"(similarity {float(sims[i, j]):.2f}).",
        "tension": f"They pull apart where “{shorten(ours[far_i], 25)}” stands against “{shorten(theirs[far_j], 25)}” "
        f"(similarity {float(sims[far_i, far_j]):.2f}).",
        "bridge": f"{where.capitalize()}: {a} carries over as {b}.",
        "surprise": f"Unexpected beside the current locus: “{shorten(surprise, 30)}”.",
        "possibility": f"Perhaps: {shorten(possibility[0], 40)}",
        "themes": themes,
        "interestingness": encounter_interest(whole, cross),
        "actionability": actionability(ours + theirs),
    }
    return json.dumps(answer)


@answers("wander_analogy")
def analogy(fields: dict[str, Any], kit: OfflineKit) -> str:
    """Analogies from passages of other domains: in each, the keyphrase closest to one of the locus's own
    (never the same phrase), with the sentence it comes from.
    """
    concept = _content(str(fields["concept"]))
    block = str(fields["elsewhere"])
    passages, labels = split_passages(block), _labels(block)
    count = int(fields.get("count", 3))
    here_phrases = _phrases(concept, 3) or [shorten(concept, 6)]
    found = []
    # Padded on purpose: an unnumbered block is one passage with no label, read as unlabelled.
    for passage, label in list(zip(passages, labels + [None] * len(passages), strict=False))[:count]:
        passage = _content(passage)
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
        sim = float(sims[i, j])
        best = [s for s in sentences if there_phrases[j].lower() in s.lower()] or sentences[:1]
        found.append(
            {
                "concept": f"{there_phrases[j]}, seen as {here_phrases[i]}: {shorten(best[0], 30)}",
                "domain": label,
                "rationale": f"{here_phrases[i]} and {there_phrases[j]} play the same part (similarity {sim:.2f}).",
            }
        )
    return json.dumps({"analogies": found})


@answers("wander_crystallize")
def crystallize(fields: dict[str, Any], kit: OfflineKit) -> str:
    """A crystal's insight from the recurring themes and the evidence sentences closest to them; its confidence
    is how close the best evidence is.
    """
    themes = [t.strip() for t in str(fields["themes"]).split(",") if t.strip()]
    locus = _content(str(fields["locus"]))
    block = str(fields["evidence"])
    evidence = [_content(e) for e in split_passages(block)]
    focus = ", ".join(themes[:3]) or shorten(locus, 8)
    central = kit.central_sentences(evidence, k=2, focus=focus) if evidence else []
    if not central:
        central = _sentences(locus)[:1]
    support = kit.similarity([focus], evidence)[0] if evidence else []
    confidence = float(sum(sorted(support, reverse=True)[:3]) / max(1, min(3, len(support)))) if len(support) else 0.0
    domains = list(dict.fromkeys([*_domains(fields.get("domains")), *(label for label in _labels(block) if label)]))
    insight = (
        f"{focus.capitalize()} recur across {len(evidence)} encounters and surface again at "
        f"“{shorten(locus, 12)}”: " + " ".join(shorten(s, 30) for s in central)
    )
    return json.dumps(
        {
            "insight": insight,
            "confidence": round(min(1.0, max(0.0, confidence)), 3),
            "actionability": actionability([s for e in evidence for s in _sentences(e)] or _sentences(locus)),
            "domains": domains,
        }
    )


@answers("wander_validate")
def validate(fields: dict[str, Any], kit: OfflineKit) -> str:
    """Whether a crystal's insight holds: valid when enough evidence passages are close to it."""
    insight = str(fields["insight"])
    evidence = split_passages(str(fields["evidence"]))
    if not evidence:
        return json.dumps({"valid": False, "confidence": 0.0, "notes": "no evidence to check the insight against"})
    sims = kit.similarity([insight], evidence)[0]
    supporting = int((sims >= 0.35).sum())
    best = int(sims.argmax())
    valid = supporting >= min(2, len(evidence)) and float(sims.max()) >= 0.45
    notes = (
        f"{'Supported' if valid else 'Not supported'} by {supporting} of {len(evidence)} passages "
        f"(closest, similarity {float(sims[best]):.2f}: “{shorten(evidence[best], 20)}”)."
    )
    return json.dumps({"valid": valid, "confidence": round(float(sims.mean()), 3), "notes": notes})
