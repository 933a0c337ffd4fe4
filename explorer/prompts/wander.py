"""Prompts of Wander (docs/wander.md): dwelling, analogy, crystallization, validation.

The dwelling prompt (docs/wander.md#dwelling-prompt) is the original design's word for word but its last lines: the
JSON it asks for is described in words, with no value to copy. Shown ``"themes": ["...", "..."]``, a small model held
to the schema by a grammar wrote themes and reflections of dots (SmolLM2-135M, 2 dwellings in 10 refused).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, StrictBool

from explorer.prompts import AnswerRejected, Prompt
from explorer.prompts.answers import (
    AnswerModel,
    Label,
    Score01,
    answer_schema,
    check,
    checked_each,
    json_object,
    json_value,
    labels,
    listed,
    text_field,
)

Sentences = Annotated[str, text_field(400)]  # "1-2 sentences": two of 30 words fit
Reflection = Annotated[str, text_field(400, asked_min=1)]  # each asked for; three of the five are enough
MAX_THEMES = 5  # "3-5 thematic keywords"
MAX_DOMAINS = 4
MAX_ANALOGIES = 3  # the walk's default count: each analogy is one more candidate to embed and ground

# -- dwelling ------------------------------------------------------------------

DWELLING_PROMPT = """You are dwelling at a point in idea space, reflecting on an encounter between two concepts.

CURRENT LOCUS:
{current_concept}
- Domains: {current_domains}
- Abstraction level: {current_abstraction}

ENCOUNTERED LOCUS:
{next_concept}
- Domains: {next_domains}
- Abstraction level: {next_abstraction}

RECENT THEMES FROM THIS SESSION:
{recent_themes}

ACTIVE RESONANCES (patterns we've seen before):
{active_resonances}

Reflect on this encounter. For each question, provide a concise response (1-2 sentences):

1. CONNECTION: What links these two concepts? What do they share?
2. TENSION: Where do they conflict or create productive friction?
3. BRIDGE: What crosses domains here? What translation is possible?
4. SURPRISE: What's unexpected about this juxtaposition?
5. POSSIBILITY: What new concept or insight might emerge from this encounter?

Also extract:
- THEMES: List 3-5 thematic keywords
- INTERESTINGNESS: Rate 0.0-1.0 how interesting this encounter is
- ACTIONABILITY: Rate 0.0-1.0 how actionable insights here might be

Respond in JSON format: an object whose "connection", "tension", "bridge", "surprise" and "possibility" are your
answers to the five questions (each in your own words), whose "themes" is a list of your 3-5 keywords, and whose
"interestingness" and "actionability" are your two ratings."""

REFLECTIONS = ("connection", "tension", "bridge", "surprise", "possibility")


@dataclass(frozen=True)
class Dwelling:
    """The reflection at one step of a wander: five answers about the encounter, its themes (which feed
    resonances) and its ratings (which feed selection and the trace).
    """

    connection: str
    tension: str
    bridge: str
    surprise: str
    possibility: str
    themes: tuple[str, ...]
    interestingness: float
    actionability: float


class DwellingAnswer(AnswerModel):
    """The dwelling prompt's JSON: reflections are text, themes short names, ratings 0–1 scores."""

    connection: Reflection = ""
    tension: Reflection = ""
    bridge: Reflection = ""
    surprise: Reflection = ""
    possibility: Reflection = ""
    themes: Annotated[tuple[str, ...], labels(MAX_THEMES, min_items=1)] = ()
    interestingness: Score01
    actionability: Score01


def read_dwelling(text: str) -> Dwelling:
    """The five reflections, themes and ratings; refused without themes, ratings or most reflections."""
    answer = check(DwellingAnswer, json_object(text))
    reflections = {name: getattr(answer, name) for name in REFLECTIONS}
    given = sum(bool(v.strip(".…").strip()) for v in reflections.values())  # "..." copied says nothing
    if given < 3:
        raise AnswerRejected(f"only {given} of the five reflections given")
    if not answer.themes:
        raise AnswerRejected("themes: none given")
    return Dwelling(
        **reflections,
        themes=answer.themes,
        interestingness=answer.interestingness,
        actionability=answer.actionability,
    )


def parse_dwelling(text: str) -> Dwelling | None:
    """The dwelling, or ``None`` when :data:`DWELLING` refuses the answer."""
    return DWELLING.parse(text)


DWELLING = Prompt[Dwelling](
    kind="wander_dwell",
    template=DWELLING_PROMPT,
    reader=read_dwelling,
    temperature=0.7,
    max_tokens=900,
    schema=answer_schema(DwellingAnswer),
)

# -- analogical reasoning ------------------------------------------------------


@dataclass(frozen=True)
class Analogy:
    """A concept from another domain that shares the locus's structure: a candidate next locus for the walk."""

    concept: str
    domain: str | None
    rationale: str


class AnalogyAnswer(AnswerModel):
    """One analogy: the concept in a sentence, its domain a short name (or none), the shared structure."""

    concept: Annotated[str, text_field(200, 3)]
    domain: Label = ""
    rationale: Sentences = ""


class AnalogiesAnswer(AnswerModel):
    """The analogy prompt's JSON, whole: the shape the model is asked for (the reader takes each analogy on its
    own, so one that does not check out leaves the others).
    """

    analogies: Annotated[list[AnalogyAnswer], Field(max_length=MAX_ANALOGIES)]


def read_analogies(text: str) -> list[Analogy]:
    """``{"analogies": [{concept, domain, rationale}]}`` (or a bare list); an empty list is a valid answer.

    An analogy that does not check out is left out; the answer is refused when none does (with the first
    one's reason), as the others are still good candidates for the walk.
    """
    found = checked_each(AnalogyAnswer, listed(json_value(text), "analogies"), "analogies")
    return [Analogy(analogy.concept, analogy.domain or None, analogy.rationale) for _, analogy in found]


def parse_analogies(text: str) -> list[Analogy] | None:
    """The analogies, or ``None`` when :data:`ANALOGY` refuses the answer."""
    return ANALOGY.parse(text)


ANALOGY = Prompt[list[Analogy]](
    kind="wander_analogy",
    template=(
        "You are exploring idea space by analogy.\n\n"
        "CURRENT LOCUS:\n{concept}\n- Domains: {domains}\n\n"
        "PASSAGES FROM OTHER DOMAINS (for inspiration; you may go beyond them):\n{elsewhere}\n\n"
        "Propose up to {count} concepts from other domains that are analogous to the current locus: things that "
        "share its structure or mechanism while looking different on the surface. For each, name the concept in one "
        "sentence, its domain, and the shared structure.\n\n"
        "Respond in JSON format:\n"
        '{{"analogies": [{{"concept": "...", "domain": "...", "rationale": "..."}}]}}'
    ),
    reader=read_analogies,
    temperature=0.9,
    max_tokens=750,
    schema=answer_schema(AnalogiesAnswer),
)

# -- crystallization -----------------------------------------------------------


@dataclass(frozen=True)
class CrystalDraft:
    """A crystal as first proposed from a recurring pattern, before validation decides whether it is kept."""

    insight: str
    confidence: float
    actionability: float
    domains: tuple[str, ...]


class CrystalAnswer(AnswerModel):
    """The crystallization prompt's JSON: an insight of 1-3 sentences, two 0–1 ratings, domains as short names."""

    insight: Annotated[str, text_field(600, 10)]
    confidence: Score01
    actionability: Score01
    domains: Annotated[tuple[str, ...], labels(MAX_DOMAINS)] = ()


def read_crystal(text: str) -> CrystalDraft:
    """The insight, its ratings and domains; refused for a too-short insight or missing ratings."""
    answer = check(CrystalAnswer, json_object(text))
    return CrystalDraft(answer.insight, answer.confidence, answer.actionability, answer.domains)


def parse_crystal(text: str) -> CrystalDraft | None:
    """The draft, or ``None`` when :data:`CRYSTALLIZE` refuses the answer."""
    return CRYSTALLIZE.parse(text)


CRYSTALLIZE = Prompt[CrystalDraft](
    kind="wander_crystallize",
    template=(
        "A pattern keeps recurring while wandering through idea space.\n\n"
        "RECURRING THEMES: {themes}\n\n"
        "WHERE IT SURFACED NOW:\n{locus}\n- Domains: {domains}\n\n"
        "THE TWO SOURCES IT CONNECTS:\n{connects}\n\n"
        "EVIDENCE (the two sources, then reflections where the pattern appeared):\n{evidence}\n\n"
        "State the single insight this pattern points to about what links the two sources, in 1-3 sentences, "
        "naming both and grounded in the evidence. Rate your "
        "confidence that the evidence supports it (0.0-1.0) and how actionable it is (0.0-1.0), and list the domains "
        "it spans.\n\n"
        "Respond in JSON format:\n"
        '{{"insight": "...", "confidence": 0.X, "actionability": 0.X, "domains": ["..."]}}'
    ),
    reader=read_crystal,
    temperature=0.4,
    max_tokens=350,
    schema=answer_schema(CrystalAnswer),
)

# -- validation ----------------------------------------------------------------


@dataclass(frozen=True)
class Validation:
    """The check of a crystal's insight against its evidence: whether to keep it, and how sure."""

    valid: bool
    confidence: float
    notes: str


class ValidationAnswer(AnswerModel):
    """The validation prompt's JSON: a real boolean verdict (never "yes"), a 0–1 confidence, notes."""

    valid: StrictBool
    confidence: Score01 = 0.5
    notes: Annotated[str, text_field(400)] = ""


def read_validation(text: str) -> Validation:
    """The verdict (it must be a real boolean), a confidence (0.5 when not given) and notes."""
    answer = check(ValidationAnswer, json_object(text))
    return Validation(answer.valid, answer.confidence, answer.notes)


def parse_validation(text: str) -> Validation | None:
    """The validation, or ``None`` when :data:`VALIDATE` refuses the answer."""
    return VALIDATE.parse(text)


VALIDATE = Prompt[Validation](
    kind="wander_validate",
    template=(
        "Check a proposed insight against its evidence before it is kept.\n\n"
        "INSIGHT:\n{insight}\n\n"
        "EVIDENCE:\n{evidence}\n\n"
        "Is the insight supported by the evidence, non-trivial and not a restatement of a single passage? Answer with "
        "a verdict, your confidence in the insight (0.0-1.0) and short notes saying which evidence supports or "
        "contradicts it.\n\n"
        "Respond in JSON format:\n"
        '{{"valid": true, "confidence": 0.X, "notes": "..."}}'
    ),
    reader=read_validation,
    temperature=0.1,
    max_tokens=200,
    schema=answer_schema(ValidationAnswer),
)
