"""Prompts of the night: the REM exploration judge, the REM cycle's question,
synthesis and dream relation (rem-rag.md), and memory fusion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from explorer.prompts import Prompt, clamp01, clean_text, extract_json
from explorer.prompts.reading import parse_implant

NO_CONNECTION = "NO_CONNECTION"
_NO_CONNECTION = re.compile(r"\W*NO[_ ]CONNECTION\W*", re.IGNORECASE)


# -- REM exploration: the connection judge ----------------------------------------


@dataclass(frozen=True)
class Judgement:
    """The judge's view of one candidate (numbered from 1 as in the prompt)."""

    candidate: int
    novelty: float
    plausibility: float
    usefulness: float
    connection: str | None  # None: NO_CONNECTION
    confidence: float | None = None

    @property
    def average(self) -> float:
        """The mean of the three scores: what a candidate must reach to become a discovery."""
        return (self.novelty + self.plausibility + self.usefulness) / 3


@dataclass(frozen=True)
class JudgeAnswer:
    """Everything the judge said about one seed's candidates, in the order it said it."""

    judgements: tuple[Judgement, ...]
    no_connection: bool = False  # the whole answer was NO_CONNECTION: no candidate connects


def _score(value: object) -> float | None:
    """A 1–5 score, clamped; None when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else min(5.0, max(1.0, number))


def _judgement(entry: object, position: int) -> Judgement | None:
    if not isinstance(entry, dict):
        return None
    novelty, plausibility, usefulness = (_score(entry.get(name)) for name in ("novelty", "plausibility", "usefulness"))
    if novelty is None or plausibility is None or usefulness is None:
        return None
    try:
        candidate = int(entry.get("candidate", position))
    except (TypeError, ValueError):
        return None
    said = entry.get("connection")
    connection: str | None = clean_text(said) if isinstance(said, str) else ""
    if not connection or _NO_CONNECTION.fullmatch(connection) or entry.get("verdict") == NO_CONNECTION:
        connection = None
    return Judgement(
        candidate, novelty, plausibility, usefulness, connection=connection, confidence=clamp01(entry.get("confidence"))
    )


def parse_judge(text: str) -> JudgeAnswer | None:
    """Judgements for the candidates, or ``None`` when the answer is not one.

    Accepts ``{"judgements": [...]}``, a bare list, a single judgement object, or
    the bare word NO_CONNECTION (no candidate connects).
    """
    if text and _NO_CONNECTION.fullmatch(text.strip()):
        return JudgeAnswer((), no_connection=True)
    data = extract_json(text)
    if isinstance(data, dict) and isinstance(data.get("judgements"), list):
        entries = data["judgements"]
    elif isinstance(data, list):
        entries = data
    elif isinstance(data, dict) and "novelty" in data:
        entries = [data]
    else:
        return None
    found = [j for j in (_judgement(e, i) for i, e in enumerate(entries, 1)) if j is not None]
    return JudgeAnswer(tuple(found)) if found else None


REM_JUDGE = Prompt[JudgeAnswer](
    kind="rem_judge",
    system=(
        "You evaluate possible connections between memories during creative exploration, the way a dreaming "
        "mind links distant memories. Be open to non-obvious links, and honest: a forced or trivial link is "
        "NO_CONNECTION."
    ),
    template=(
        "Seed memory ({seed_category}):\n{seed}\n\n"
        "Relations the seed already has:\n{seed_relations}\n\n"
        "Candidate memories reached by wandering the memory graph (none is directly linked to the seed yet):\n"
        "{candidates}\n\n"
        "Relations the candidates already have:\n{candidate_relations}\n\n"
        "For EACH candidate, score its connection to the seed memory:\n"
        "- novelty (1-5): how non-obvious and new the link is\n"
        "- plausibility (1-5): how likely the link is real rather than forced\n"
        "- usefulness (1-5): how much the link would help to recall or reason\n\n"
        "If the average of the three scores is at least {min_score}, describe the connection in one sentence and "
        "give your confidence in it (0-1). Otherwise write NO_CONNECTION as the connection.\n\n"
        "Reply with JSON only, one entry per candidate:\n"
        '{{"judgements": [{{"candidate": 1, "novelty": 4, "plausibility": 3, "usefulness": 4, '
        '"connection": "one sentence", "confidence": 0.7}}, '
        '{{"candidate": 2, "novelty": 2, "plausibility": 1, "usefulness": 2, "connection": "NO_CONNECTION"}}]}}'
    ),
    parse=parse_judge,
    temperature=0.3,  # slightly creative, for the connection's description
    max_tokens=1400,
    json_answer=True,
)


# -- REM cycle (rem-rag.md) -----------------------------------------------------------


def parse_question(text: str) -> str | None:
    """The question: the first non-empty line, without a "Question:" label."""
    for line in (text or "").splitlines():
        line = re.sub(r"^\s*(?:\*\*)?(?:implicit\s+)?question(?:\*\*)?\s*:\s*", "", line, flags=re.IGNORECASE)
        line = clean_text(line.strip("*").strip())
        if len(line.split()) >= 3:
            return line
    return None


REM_QUESTION = Prompt[str](
    kind="rem_question",
    template=(
        "What is the implicit question at the heart which binds the following passages together? "
        "Reply with the question only.\n\n{passages}"
    ),
    parse=parse_question,
    temperature=0.7,
    max_tokens=100,
)

REM_SYNTHESIS = Prompt[str](
    kind="rem_synthesis",
    template=(
        "Write a concise synthesis in exactly 1-2 short paragraphs (no more than 150 words total) that:\n"
        "1. Answers the implicit question\n"
        "2. Reveals non-obvious patterns across the time periods\n"
        "3. Offers insights that emerge from the juxtaposition\n\n"
        "Be direct and specific. Focus on the most important insight.\n\n"
        "Implicit question: {question}\n\n"
        "Original passages:\n{passages}\n\n"
        "Related knowledge:\n{related}"
    ),
    parse=lambda text: clean_text(text) or None,
    temperature=0.7,
    max_tokens=300,
)

DREAM_RELATION = Prompt[str](
    kind="dream_relation",
    template=(
        "New synthesis: {synthesis}\n\n"
        "Related knowledge:\n{related}\n\n"
        "How does this new synthesis relate to what we already know? Answer in one short paragraph (at most 120 "
        "words): what it confirms, what it contradicts, what it adds.\n\n"
        "If it adds nothing new or simply repeats what we already know, respond with exactly: NOTHING"
    ),
    parse=parse_implant,  # the paragraph, or "" for NOTHING
    temperature=0.5,
    max_tokens=250,
)


# -- memory fusion --------------------------------------------------------------------


def parse_fusion(text: str) -> str | None:
    """The merged summary from ``{"summary": "..."}``."""
    data = extract_json(text)
    if isinstance(data, dict) and isinstance(data.get("summary"), str):
        return clean_text(data["summary"]) or None
    return None


FUSION = Prompt[str](
    kind="fusion",
    system="You consolidate fading memories into one clear memory, the way sleep consolidates the day.",
    template=(
        "These related memories are fading. Merge them into one summary that keeps every distinct fact and "
        "drops repetition. The summary must be shorter than the memories together.\n\n"
        "Memories (category, importance):\n{memories}\n\n"
        'Reply with JSON only: {{"summary": "the merged memory"}}'
    ),
    parse=parse_fusion,
    temperature=0.2,
    max_tokens=500,
    json_answer=True,
)
