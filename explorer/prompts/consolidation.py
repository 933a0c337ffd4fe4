"""Prompts of consolidation (docs/consolidation.md): a cluster's pattern, a rung of the abstraction ladder, how
two related items relate, and whether two patterns contradict each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from pydantic import BeforeValidator, StrictBool

from explorer.prompts import Prompt
from explorer.prompts.answers import AnswerModel, Label, answer_schema, check, json_object, phrases, text_field

M = TypeVar("M", bound=AnswerModel)


def reads(model: type[M]) -> Callable[[str], M]:
    """The reader of a JSON answer shaped as ``model``."""
    return lambda answer: check(model, json_object(answer))


def _word(value: object) -> object:
    """A one-word choice as models write it ("Refinement", " complement."): lower-cased, trimmed."""
    return value.strip().strip(".").lower() if isinstance(value, str) else value


Sentence = Annotated[str, text_field(300, 1)]
Reason = Annotated[str, text_field(200)]  # one line
Phrases = Annotated[tuple[str, ...], phrases(5, 120)]  # an IF or a THEN: a clause, not a paragraph

# -- a cluster's pattern ----------------------------------------------------------------


class PatternAnswer(AnswerModel):
    """The pattern prompt's JSON: a name, a kind, a description, when it applies and what it does."""

    name: Label
    type: Annotated[Literal["strategy", "technique", "heuristic"], BeforeValidator(_word)] = "strategy"
    description: Sentence
    conditions: Phrases
    actions: Phrases


def read_pattern(answer: str) -> PatternAnswer:
    """The pattern from ``{"name": ..., "description": ..., "conditions": [...], "actions": [...]}``."""
    value = check(PatternAnswer, json_object(answer))
    return value if value.name else value.model_copy(update={"name": value.description[:60]})


PATTERN = Prompt[PatternAnswer](
    kind="consolidation_pattern",
    system="You consolidate experiences into reusable know-how, the way sleep turns a day's episodes into skill.",
    template=(
        "These experiences (kind, outcome) were grouped because they are alike:\n{experiences}\n\n"
        "Strategies they used: {strategies}\nHow they turned out: {outcomes}\n\n"
        "Extract the pattern they share, using only what the experiences show: a short name, a one-sentence "
        "description, the conditions under which it applies (IF ...) and the actions it takes (THEN ...), one to "
        "five of each, and whether it is a strategy, a technique or a heuristic.\n\n"
        'Reply with JSON only: {{"name": "short name", "type": "strategy", "description": "one sentence", '
        '"conditions": ["when ..."], "actions": ["do ..."]}}'
    ),
    reader=read_pattern,
    temperature=0.2,
    max_tokens=600,
    schema=answer_schema(PatternAnswer),
)

# -- a rung of the ladder ---------------------------------------------------------------


class AbstractionAnswer(AnswerModel):
    """The abstraction prompt's JSON: the general item's name and its statement."""

    name: Label
    statement: Sentence


ABSTRACTION = Prompt[AbstractionAnswer](
    kind="consolidation_abstraction",
    system="You build an abstraction ladder: from specific know-how to the general principles behind it.",
    template=(
        "Each item below is a {lower} distilled from experience:\n{items}\n\n"
        "Name the {higher} that covers all of them, and state it in one sentence: what they have in common, "
        "more general than any one of them, not a rewording of one.\n\n"
        'Reply with JSON only: {{"name": "short name", "statement": "one sentence"}}'
    ),
    reader=reads(AbstractionAnswer),
    temperature=0.3,
    max_tokens=150,
    schema=answer_schema(AbstractionAnswer),
)

# -- how two related items relate ----------------------------------------------------------


class RelationAnswer(AnswerModel):
    """The relation prompt's JSON: one of the four relationships, and why."""

    relationship: Annotated[Literal["prerequisite", "alternative", "refinement", "complement"], BeforeValidator(_word)]
    reason: Reason = ""


RELATION = Prompt[RelationAnswer](
    kind="consolidation_relation",
    template=(
        "Two related items of know-how, distilled from experience:\nA: {first}\nB: {second}\n\n"
        "How does A relate to B? prerequisite: A must hold or be done before B; alternative: A and B are "
        "different ways to the same end; refinement: A is a narrower, more specific form of B; complement: "
        "they work together.\n\n"
        'Reply with JSON only: {{"relationship": "complement", "reason": "one line"}}'
    ),
    reader=reads(RelationAnswer),
    temperature=0.0,
    max_tokens=100,
    schema=answer_schema(RelationAnswer),
)

# -- contradiction ------------------------------------------------------------------------


class ContradictionAnswer(AnswerModel):
    """The contradiction prompt's JSON: whether the two patterns conflict, and why."""

    contradicts: StrictBool
    reason: Reason = ""


CONTRADICTION = Prompt[ContradictionAnswer](
    kind="consolidation_contradiction",
    template=(
        "Two patterns distilled from experience apply in similar conditions:\nA: {first}\nB: {second}\n\n"
        "Do they contradict each other: under the same conditions, do they call for conflicting actions?\n\n"
        'Reply with JSON only: {{"contradicts": false, "reason": "one line"}}'
    ),
    reader=reads(ContradictionAnswer),
    temperature=0.0,
    max_tokens=100,
    schema=answer_schema(ContradictionAnswer),
)
