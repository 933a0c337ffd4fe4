"""Prompts of the night: the REM exploration judge, the REM cycle's question,
synthesis and dream relation, and memory fusion (docs/dreaming.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from explorer.prompts import AnswerRejected, Prompt, clean_text
from explorer.prompts.answers import (
    AnswerModel,
    OptionalCount,
    OptionalScore01,
    Score15,
    answer_schema,
    check,
    checked_each,
    json_object,
    json_value,
    lower_keys,
    opening,
    prose,
    text_field,
)
from explorer.prompts.reading import read_paragraph

NO_CONNECTION = "NO_CONNECTION"
MAX_JUDGEMENTS = 8  # exploration's candidates a seed, by default: one judgement each
# A merged memory: about 170 words. And a bound llama.cpp's grammar can hold: it refuses a string of 1,200 and
# llama-cpp-python's server then dies (tests/prompts/test_schemas.py).
FUSION_CHARS = 1000
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
    reason: str | None = None  # why, in one line, kept or not

    @property
    def average(self) -> float:
        """The mean of the three scores: what a candidate must reach to become a discovery."""
        return (self.novelty + self.plausibility + self.usefulness) / 3


@dataclass(frozen=True)
class JudgeAnswer:
    """Everything the judge said about one seed's candidates, in the order it said it."""

    judgements: tuple[Judgement, ...]
    no_connection: bool = False  # the whole answer was NO_CONNECTION: no candidate connects


class JudgementAnswer(AnswerModel):
    """One entry of the judge's JSON: three 1–5 scores, the connection in a sentence, a 0–1 confidence."""

    candidate: OptionalCount = None  # its position in the answer stands in
    novelty: Score15
    plausibility: Score15
    usefulness: Score15
    connection: Annotated[str, text_field(240)] = ""  # one sentence
    confidence: OptionalScore01 = None
    reason: Annotated[str, text_field(160)] = ""  # one short line
    verdict: Any = None


class JudgementsAnswer(AnswerModel):
    """The judge's JSON, whole: the shape the model is asked for (the reader takes each judgement on its own, so
    one that does not check out leaves its candidate unjudged and the others kept).
    """

    judgements: Annotated[list[JudgementAnswer], Field(min_length=1, max_length=MAX_JUDGEMENTS)]


def _judgement(entry: JudgementAnswer, position: int) -> Judgement:
    connection: str | None = entry.connection
    if not connection or _NO_CONNECTION.fullmatch(connection) or entry.verdict == NO_CONNECTION:
        connection = None
    return Judgement(
        entry.candidate or position,
        entry.novelty,
        entry.plausibility,
        entry.usefulness,
        connection=connection,
        confidence=entry.confidence,
        reason=" ".join(entry.reason.split()) or None,
    )


def read_judge(text: str) -> JudgeAnswer:
    """Judgements for the candidates.

    Accepts ``{"judgements": [...]}``, a bare list, a single judgement object, or
    the bare word NO_CONNECTION (no candidate connects). A judgement that does not
    check out is left out (its candidate is simply not judged); the answer is
    refused when none does, with the first one's reason.
    """
    if _NO_CONNECTION.fullmatch(text.strip()):
        return JudgeAnswer((), no_connection=True)
    data = lower_keys(json_value(text))
    if isinstance(data, dict) and isinstance(data.get("judgements"), list):
        entries = data["judgements"]
    elif isinstance(data, list):
        entries = data
    elif isinstance(data, dict) and "novelty" in data:
        entries = [data]
    else:
        raise AnswerRejected('judgements: a list is needed ({"judgements": [...]})')
    if not entries:
        raise AnswerRejected("judgements: none given")
    found = checked_each(JudgementAnswer, entries, "judgements")
    return JudgeAnswer(tuple(_judgement(entry, position + 1) for position, entry in found))


def parse_judge(text: str) -> JudgeAnswer | None:
    """The judge's answer, or ``None`` when :data:`REM_JUDGE` refuses it."""
    return REM_JUDGE.parse(text)


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
        "Evidence measured for each candidate (affinity = meaning plus shared distinctive terms, and how it "
        "compares with random pairs of this knowledge base):\n{candidate_evidence}\n\n"
        "For EACH candidate, score its connection to the seed memory on the evidence, not on how well a link "
        "could be phrased:\n"
        "- novelty (1-5): how non-obvious and new the link is\n"
        "- plausibility (1-5): how likely the link is real rather than forced\n"
        "- usefulness (1-5): how much the link would help to recall or reason\n\n"
        "If the average of the three scores is at least {min_score}, describe the connection in one sentence and "
        "give your confidence in it (0-1). Otherwise write NO_CONNECTION as the connection. For every candidate, "
        "kept or not, give the reason for your verdict in one short line.\n\n"
        "Reply with JSON only, one entry per candidate:\n"
        '{{"judgements": [{{"candidate": 1, "novelty": 4, "plausibility": 3, "usefulness": 4, '
        '"connection": "one sentence", "confidence": 0.7, "reason": "one line"}}, '
        '{{"candidate": 2, "novelty": 2, "plausibility": 1, "usefulness": 2, "connection": "NO_CONNECTION", '
        '"reason": "one line"}}]}}'
    ),
    reader=read_judge,
    temperature=0.3,  # slightly creative, for the connection's description
    max_tokens=1500,
    schema=answer_schema(JudgementsAnswer),
)


# -- REM cycle (docs/dreaming.md#rem-cycle) ------------------------------------------


def read_question(text: str) -> str:
    """The question: the first line of three words or more, without a "Question:" label."""
    for line in prose(text, "a question").splitlines():
        line = re.sub(r"^\s*(?:\*\*)?(?:implicit\s+)?question(?:\*\*)?\s*:\s*", "", line, flags=re.IGNORECASE)
        line = clean_text(line.strip("*").strip())
        if len(line.split()) >= 3:
            return line
    raise AnswerRejected(f"no line of three words or more to be a question (it begins {opening(text)})")


def parse_question(text: str) -> str | None:
    """The question, or ``None`` when :data:`REM_QUESTION` refuses the answer."""
    return REM_QUESTION.parse(text)


REM_QUESTION = Prompt[str](
    kind="rem_question",
    template=(
        "What is the implicit question at the heart which binds the following passages together? "
        "Reply with the question only.\n\n{passages}"
    ),
    reader=read_question,
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
    reader=lambda text: prose(text, "a synthesis"),
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
    reader=read_paragraph,  # the paragraph, or "" for NOTHING
    temperature=0.5,
    max_tokens=250,
)


# -- memory fusion --------------------------------------------------------------------


class FusionAnswer(AnswerModel):
    """The fusion prompt's JSON: the summary as text, shorter than what it merges."""

    summary: Annotated[str, text_field(FUSION_CHARS, 1)]


def read_fusion(text: str) -> str:
    """The merged summary from ``{"summary": "..."}``."""
    return check(FusionAnswer, json_object(text)).summary


def parse_fusion(text: str) -> str | None:
    """The summary, or ``None`` when :data:`FUSION` refuses the answer."""
    return FUSION.parse(text)


FUSION = Prompt[str](
    kind="fusion",
    system="You consolidate fading memories into one clear memory, the way sleep consolidates the day.",
    template=(
        "These related memories are fading. Merge them into one summary that keeps every distinct fact and "
        "drops repetition. The summary must be shorter than the memories together.\n\n"
        "Memories (category, importance):\n{memories}\n\n"
        'Reply with JSON only: {{"summary": "the merged memory"}}'
    ),
    reader=read_fusion,
    temperature=0.2,
    max_tokens=350,
    schema=answer_schema(FusionAnswer),
)
