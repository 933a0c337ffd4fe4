"""The REM cycle (docs/dreaming.md#rem-cycle), as a pure function.

Each dream: three nodes that bear on each other across categories, the first
from the current period (:mod:`explorer.dreaming.triads`; the original design's were
drawn at random); the implicit question that binds them; the nodes nearest that question; a synthesis of all
of it; then how that synthesis relates to its own nearest neighbours. The
answer to that last step is the dream, stored as a ``rem_dream`` node whose
parents are the three nodes and whose generation is one more than the deepest
of them.

Unlike the original, which kept every dream, a dream that adds nothing is
dropped: when the model says it adds nothing, or when it is a near-duplicate
(cosine above ``duplicate_similarity``) of a node already known, including
dreams from earlier in the same cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from explorer.affinity import Affinity
from explorer.dreaming.triads import DEFAULT_TRIADS, TriadConfig, binding, current_period, sample_triads
from explorer.prompts import Prompt, fitting, format_passages
from explorer.prompts.dreaming import DREAM_RELATION, REM_QUESTION, REM_SYNTHESIS
from explorer.providers.budget import Budget
from explorer.providers.embeddings import Embedder
from explorer.providers.gateway import Gateway, Usage
from explorer.reading.chunker import is_code
from explorer.records import Node, Progress, Relation, begin, in_phase
from explorer.vectors import VectorIndex

CREATED_BY = "rem_cycle"

T = TypeVar("T")


@dataclass(frozen=True)
class RemConfig:
    """How many dreams a REM cycle dreams, how much it reads around each, and when a dream is dropped as a
    near-duplicate or linked to what it resembles.
    """

    dreams: int = 100
    related: int = 5  # nodes nearest the question
    neighbours: int = 5  # nodes nearest the synthesis
    # The most words of passages one prompt quotes: the three memories and as many related ones as fit with them;
    # the synthesis and its neighbours. Eight passages of real documentation (600 tokens each) overran 4,096.
    prompt_words: int = 1500
    duplicate_similarity: float = 0.95
    relate_min_similarity: float = 0.5  # a dream EXTENDS the neighbours at least this close
    triads: TriadConfig = DEFAULT_TRIADS


DEFAULT_REM = RemConfig()


class DreamFailed(Exception):
    """A step of one dream failed; the cycle counts it and goes on."""


@dataclass
class RemResult:
    """The dreams kept, with their relations, for the service to write in one transaction; and how many were
    dropped or failed, and why.
    """

    current_year: int | None = None
    nodes: list[Node] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    dropped: int = 0
    duplicates: int = 0  # of the dropped: near-duplicates (the rest were judged empty)
    failures: int = 0
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)


def latest_year(nodes: Sequence[Node]) -> int | None:
    """The corpus's current year, which every dream draws one node from when no year is asked for."""
    years = [n.year for n in nodes if n.year is not None]
    return max(years) if years else None


def dreamable(nodes: Sequence[Node]) -> list[Node]:
    """Current nodes with text and an embedding, code blocks aside: a dream binds what notes say, and a block of
    code (a chunk of its own, :func:`~explorer.reading.chunker.is_code`) says it in another language.
    """
    return [n for n in nodes if n.is_latest and n.embedding is not None and n.text.strip() and not is_code(n.text)]


def primary(nodes: Sequence[Node]) -> list[Node]:
    """The memories a dream binds: what was read or fused, not what was derived from it (syntheses, insights,
    earlier dreams), whose text mixes several sources; all of them while what was read is a single source.
    """
    read = [n for n in nodes if n.memory_type != "derived"]
    return read if len({n.document_id for n in read}) > 1 else list(nodes)


class DreamtOver:
    """What a REM cycle dreams over: the nodes known when it began and the dreams it kept since, findable by
    meaning, with the text, year and generation a dream reads of each.

    Why not the READING cycle's :class:`~explorer.reading.cycle.KnownNodes`: it also indexes every chunk's words for
    the titles they mention, which a dream never asks (1.5 s for 1,000 notes before the first dream).
    """

    def __init__(self, dim: int):
        self.index = VectorIndex(dim)
        self.text: dict[str, str] = {}
        self.year: dict[str, int | None] = {}
        self.generation: dict[str, int] = {}

    def add(self, nodes: Sequence[Node]) -> None:
        """Make nodes findable (those with a vector, once each), so later dreams are checked against them."""
        embedded = [(n, n.embedding) for n in nodes if n.embedding is not None and n.id not in self.index]
        if not embedded:
            return
        self.index.add([n.id for n, _ in embedded], np.vstack([vector for _, vector in embedded]))
        for node, _ in embedded:
            self.text[node.id] = node.text
            self.year[node.id] = node.year
            self.generation[node.id] = node.generation


@dataclass
class Draft:
    """One dream as the models left it, before it is checked against the dreams kept before it."""

    parents: list[str]
    usage: Usage = field(default_factory=Usage)
    question: str = ""
    synthesis: str = ""
    related: list[str] = field(default_factory=list)
    neighbours: list[str] = field(default_factory=list)
    text: str = ""  # "": judged to add nothing
    model: str = ""
    error: str | None = None


def _ask(
    gateway: Gateway, prompt: Prompt[T], fields: dict[str, Any], draft: Draft, budget: Budget | None
) -> tuple[T, str]:
    """The parsed answer and the model that gave it; a failed call ends this dream (:class:`DreamFailed`)."""
    answer = gateway.ask(prompt, fields, purpose=prompt.kind, budget=budget)
    draft.usage.add(answer)
    value = answer.value
    if value is None or not answer.ok:
        raise DreamFailed(f"{prompt.kind} failed ({answer.error})")
    return value, answer.model


def _words(ids: Sequence[str], known: DreamtOver) -> int:
    return sum(len(known.text[i].split()) for i in ids)


def _within(ids: Sequence[str], known: DreamtOver, words: int) -> list[str]:
    """The nodes of ``ids`` a prompt quotes within ``words`` words, nearest first (see :func:`fitting`)."""
    return [ids[position] for position in fitting([known.text[i] for i in ids], words)]


def _passages(ids: Sequence[str], known: DreamtOver) -> str:
    return format_passages([known.text[i] for i in ids], [str(known.year[i]) if known.year[i] else None for i in ids])


def draft_dream(
    triad: Sequence[Node],
    known: DreamtOver,
    gateway: Gateway,
    embedder: Embedder,
    config: RemConfig,
    budget: Budget | None = None,
) -> Draft:
    """The three model calls of one dream (question, synthesis, how it relates), over the nodes known when the
    cycle began; the dream's trouble is kept in ``Draft.error``, never raised, so the other dreams go on.
    """
    draft = Draft(parents=[n.id for n in triad])
    try:
        passages = _passages(draft.parents, known)
        draft.question, _ = _ask(gateway, REM_QUESTION, {"passages": passages}, draft, budget)
        vector = embedder.embed([draft.question])[0]
        related = [i for i, _ in known.index.top_k(vector, config.related, exclude=draft.parents)]
        draft.related = _within(related, known, config.prompt_words - _words(draft.parents, known))
        draft.synthesis, _ = _ask(
            gateway,
            REM_SYNTHESIS,
            {"question": draft.question, "passages": passages, "related": _passages(draft.related, known)},
            draft,
            budget,
        )
        neighbours = [i for i, _ in known.index.top_k(embedder.embed([draft.synthesis])[0], config.neighbours)]
        draft.neighbours = _within(neighbours, known, config.prompt_words - len(draft.synthesis.split()))
        draft.text, draft.model = _ask(
            gateway,
            DREAM_RELATION,
            {"synthesis": draft.synthesis, "related": _passages(draft.neighbours, known)},
            draft,
            budget,
        )
    except DreamFailed as exc:
        draft.error = str(exc)
    except Exception as exc:  # one dream's trouble must not end the night
        draft.error = f"{type(exc).__name__}: {exc}"
    return draft


def keep_dream(
    draft: Draft,
    known: DreamtOver,
    embedder: Embedder,
    config: RemConfig,
    current_year: int | None,
    result: RemResult,
    confidence: float,
) -> Node | None:
    """The dream's node, as sure as the ``confidence`` measured of its memories' binding, unless it adds nothing
    or nearly repeats a node already known (this cycle's dreams included); its relations go to ``result``.
    """
    if draft.text == "":
        result.dropped += 1  # judged to add nothing to what is known
        return None
    vector = embedder.embed([draft.text])[0]
    nearest = known.index.top_k(vector, max(1, config.neighbours))
    if nearest and nearest[0][1] > config.duplicate_similarity:
        result.dropped += 1
        result.duplicates += 1
        return None
    parents = draft.parents
    node = Node(
        type="rem_dream",
        text=draft.text,
        embedding=vector,
        year=current_year,
        generation=1 + max(known.generation.get(p, 0) for p in parents),
        parent_ids=parents,
        confidence=confidence,
        memory_type="derived",
        learned_from="rem",
        metadata={
            "question": draft.question,
            "synthesis": draft.synthesis,
            "related_ids": draft.related,
            "neighbour_ids": draft.neighbours,
            "model": draft.model,
        },
    )
    result.relations += [Relation(node.id, p, "DERIVES", created_by=CREATED_BY) for p in parents]
    result.relations += [
        Relation(node.id, other, "EXTENDS", created_by=CREATED_BY, confidence=round(sim, 4))
        for other, sim in nearest[: config.neighbours]
        if sim >= config.relate_min_similarity and other not in parents
    ]
    return node


def rem_cycle(
    nodes: Sequence[Node],
    gateway: Gateway,
    embedder: Embedder,
    config: RemConfig = DEFAULT_REM,
    *,
    current_year: int | None,
    rng: np.random.Generator,
    budget: Budget | None = None,
    progress: Progress | None = None,
    affinity: Affinity | None = None,
) -> RemResult:
    """Dream ``config.dreams`` times over ``nodes`` (current nodes with vectors).

    Every triad is sampled first, from the primary memories as they were when the
    cycle began, by their ``affinity`` (built over them when not given); the
    dreams are then drafted with up to ``gateway.concurrency`` in flight, over
    what was known when the cycle began; and kept in the order they were
    sampled, each checked against the nodes known then and the dreams kept
    before it. So a run is the same for a seed whatever the concurrency.
    ``current_year`` None means an undated corpus: anchors from anywhere. When
    the base holds fewer related pairs across sources than dreams are asked,
    the rest are not dreamt: no model was asked, so nothing failed (the
    service's report says no further set of memories was found).
    """
    pool = dreamable(nodes)
    result = RemResult(current_year=current_year)
    known = DreamtOver(embedder.dim)
    known.add(pool)
    memories = primary(pool)
    triads: list[list[Node]] = []
    if len(memories) >= 2:
        affinity = affinity or Affinity.of_nodes(memories)
        begin(progress, "choosing what each dream binds")
        anchors = current_period(memories, current_year, config.dreams)
        triads = sample_triads(anchors, memories, affinity, config.dreams, rng, config.triads)
    drafts = gateway.map(
        lambda t: draft_dream(t, known, gateway, embedder, config, budget), triads, in_phase(progress, "dreaming")
    )
    confidences = [binding(triad, affinity) for triad in triads] if affinity is not None else []
    for number, (draft, confidence) in enumerate(zip(drafts, confidences, strict=True), 1):
        result.usage.merge(draft.usage)
        if draft.error is not None:
            result.failures += 1
            result.errors.append(f"dream {number}: {draft.error}")
            continue
        node = keep_dream(draft, known, embedder, config, current_year, result, confidence)
        if node is not None:
            known.add([node])
            result.nodes.append(node)
    return result
