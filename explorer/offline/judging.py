"""The offline judge of REM exploration: scores a seed's candidates on the evidence measured for each.

The engine measures, for every candidate, its affinity with the seed (meaning
plus shared distinctive terms), how that compares with random pairs of the
knowledge base (a percentile) and the distinctive terms they share. A judge that
scored fluency, or raw similarity, would keep almost everything; this one keeps
what the evidence singles out: a link stronger than nearly all pairs here, made
of terms the two actually share. Where nothing was measured it falls back on
embedding similarity and shared keyphrases.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from explorer.affinity import Evidence
from explorer.offline import answers
from explorer.offline.kit import OfflineKit, join, quote
from explorer.prompts import split_passages
from explorer.prompts.dreaming import NO_CONNECTION, JudgementAnswer
from explorer.text import as_written, keyphrases, prose_sentences

_NUMBERED = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
# Percentiles at which a link is plausible, from 2 to 5: a link must beat nearly every pair of the base. Measured on
# the bridges benchmark's verdicts (48 each): it keeps 31% of the candidates without names and 52% with them, where
# (98.5, 99.3, 99.7, 99.9) kept 19-23%, on the floor of the 20-60% a judge that discriminates keeps.
PLAUSIBLE_AT = (98.0, 99.0, 99.5, 99.8)
# Shares of the affinity owed to shared terms (affinity − meaning) at which a link is useful, from 2 to 5:
# words two notes both use are what a reader can follow from one to the other.
USEFUL_AT = (0.08, 0.15, 0.25, 0.35)
# Meaning above which a link is less novel, from 4 down to 2: near-paraphrases teach little.
FAMILIAR_AT = (0.55, 0.65)
# The longest connection the judge's answer may hold, read from its schema so the two never disagree: a longer
# one is refused, and its candidate left unjudged (a kept link lost).
CONNECTION_CHARS: int = JudgementAnswer.model_json_schema()["properties"]["connection"]["maxLength"]
QUOTE_WORDS = (20, 12, 8, 5)  # words quoted from each memory, fewer until the connection fits


def measured(block: str) -> dict[int, Evidence]:
    """The evidence of each candidate by number; empty when the engine measured none."""
    found = {}
    for match in _NUMBERED.finditer(block):
        evidence = Evidence.read(match.group(2))
        if evidence is not None:
            found[int(match.group(1))] = evidence
    return found


def _shared_phrases(text: str, others: list[str], top: int = 8) -> list[str]:
    """The keyphrases of ``text`` that the other texts also contain."""
    pool = " ".join(others).lower()
    return [p for p in keyphrases(text, top) if p.lower() in pool]


def _score(value: float) -> int:
    """A 1–5 score from a value in [0, 1]."""
    return int(1 + 4 * float(np.clip(value, 0.0, 1.0)) + 0.5)


def _on_evidence(evidence: Evidence) -> tuple[int, int, int]:
    """(novelty, plausibility, usefulness): plausible as the percentile is high, useful as much of the affinity
    comes from shared terms, novel as the meanings are apart.
    """
    plausibility = 1 + sum(evidence.percentile >= p for p in PLAUSIBLE_AT)
    usefulness = 1 + sum(evidence.lexical >= u for u in USEFUL_AT)
    novelty = 4 - sum(evidence.cosine >= f for f in FAMILIAR_AT)
    return novelty, plausibility, usefulness


def _on_similarity(seed: str, text: str, similarity: float) -> tuple[int, int, int]:
    shared = _shared_phrases(seed, [text])
    return (
        _score((0.9 - similarity) / 0.6),
        _score((similarity - 0.05) / 0.55),
        _score(min(1.0, 0.35 * len(shared) + 0.5 * max(similarity, 0.0))),
    )


def _reason(kept: bool, evidence: Evidence | None, similarity: float) -> str:
    if evidence is None:
        return f"{'Close' if kept else 'Not close'} enough in meaning (similarity {similarity:.2f})."
    terms = (
        f"sharing {join([f'“{t}”' for t in evidence.shared_terms[:3]])}"
        if evidence.shared_terms
        else "with no term in common"
    )
    strength = f"stronger than {evidence.percentile:.1f}% of pairs here"
    return f"Kept: {strength}, {terms}." if kept else f"Not kept: only {strength}, {terms}."


def _connection(seed: str, text: str, evidence: Evidence | None, kit: OfflineKit) -> str:
    ours, theirs = prose_sentences(seed) or [seed], prose_sentences(text) or [text]
    i, j, _ = kit.closest_pair(ours, theirs)
    terms = list(evidence.shared_terms[:2]) if evidence and evidence.shared_terms else _shared_phrases(seed, [text])[:2]
    both = f"{seed}\n\n{text}"  # a term is cased as the two write it: "Java", never the shared token "java"
    about = f"Both concern {join([as_written(t, both) for t in terms])}" if terms else "The two meet"
    for words in QUOTE_WORDS:
        connection = f"{about}: {quote(ours[i], words)} and {quote(theirs[j], words)}."
        if len(connection) <= CONNECTION_CHARS:
            return connection
    return f"{about}."


@answers("rem_judge")
def rem_judge(fields: dict[str, Any], kit: OfflineKit) -> str:
    """A verdict for every candidate: scores on the measured evidence (else on similarity), a reason, and for
    the kept ones the connection in a sentence.
    """
    seed = str(fields["seed"])
    candidates = split_passages(str(fields["candidates"]))
    if not candidates:
        return NO_CONNECTION
    min_score = float(fields.get("min_score", 3.0))
    evidence = measured(str(fields.get("candidate_evidence", "")))
    similarities = kit.similarity([seed], candidates)[0]
    judgements = []
    for number, (text, similarity) in enumerate(zip(candidates, similarities, strict=True), 1):
        found = evidence.get(number)
        novelty, plausibility, usefulness = (
            _on_evidence(found) if found else _on_similarity(seed, text, float(similarity))
        )
        kept = (novelty + plausibility + usefulness) / 3 >= min_score
        entry: dict[str, Any] = {
            "candidate": number,
            "novelty": novelty,
            "plausibility": plausibility,
            "usefulness": usefulness,
            "connection": _connection(seed, text, found, kit) if kept else NO_CONNECTION,
            "reason": _reason(kept, found, float(similarity)),
        }
        if kept:
            entry["confidence"] = round(float(np.clip(similarity, 0.0, 1.0)), 3)
        judgements.append(entry)
    return json.dumps({"judgements": judgements})
