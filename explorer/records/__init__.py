"""Typed records of the corpus and memory graph, as they cross module boundaries.

The vocabulary is the product's own: a *node* is anything the knowledge base
holds (a raw chunk, a synthesis, an entity insight, a dream, a fused memory, a
pattern); a *relation* is a typed, weighted edge between two nodes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

import numpy as np

NodeType = Literal["raw_chunk", "synthesis", "entity_insight", "rem_dream", "fused", "pattern", "abstraction"]
RelationType = Literal["UPDATES", "EXTENDS", "DERIVES", "MENTIONS", "LINKS"]  # LINKS: a [[wikilink]]
MemoryType = Literal["regular", "static_profile", "derived", "superseded"]
# Why a document was retired: the file it was read from was edited (its new text is another document), or is gone.
Retired = Literal["changed", "removed"]
# Where a document's domain came from, strongest first: a person or the file said it, the folder it sits in,
# its first tag, or a topic found from the notes themselves (explorer/reading/domains.py).
DomainOrigin = Literal["given", "folder", "tag", "topic"]
DOMAIN_ORIGINS: tuple[DomainOrigin, ...] = ("given", "folder", "tag", "topic")

NODE_TYPES: tuple[str, ...] = (
    "raw_chunk",
    "synthesis",
    "entity_insight",
    "rem_dream",
    "fused",
    "pattern",
    "abstraction",
)


class Progress(Protocol):
    """How a long run tells whoever shows it how far it got; each surface draws it its own way (the command
    line a bar on stderr, the app a progress bar, a job its stored progress).

    ``phase`` names what the run does now, in words a person reads ("loading the embedding model", "embedding",
    "dreaming"), told before that work starts, so no stretch of a run goes unexplained; ``done`` of ``total``
    counts the phase's items (``total`` 0: not countable, a spinner) and ``note`` names the one it is on. A run
    that names no phase leaves ``phase`` empty. Tell a phase with :func:`begin`; give a part of a run its own
    name with :func:`in_phase`.

    Example::

        begin(progress, "embedding", total=len(batches))
        for done, batch in enumerate(batches, 1):
            embed(batch)
            progress(done, len(batches), f"{done * 256} chunks", "embedding")
    """

    def __call__(self, done: int, total: int, note: str, /, phase: str = "") -> None:
        """One report: ``done`` of ``total`` in ``phase``, on ``note``."""


def unheard(done: int, total: int, note: str, phase: str = "") -> None:
    """The :class:`Progress` of a run nobody follows (one carried out within a request)."""


def begin(progress: Progress | None, phase: str, total: int = 0, note: str = "") -> None:
    """Tell ``progress`` (if any) that ``phase`` starts now, with ``total`` items (0: not countable)."""
    if progress is not None:
        progress(0, total, note, phase)


def in_phase(progress: Progress | None, name: str) -> Progress | None:
    """``progress`` for a part of a run called ``name`` (a night's "dreaming"): its reports carry ``name``, before
    the part's own phase when it names one ("exploring: measuring affinities").
    """
    if progress is None:
        return None
    outer = progress

    def report(done: int, total: int, note: str, phase: str = "") -> None:
        outer(done, total, note, f"{name}: {phase}" if phase else name)

    return report


def new_id() -> str:
    """A fresh UUID as text: records get their id when made, so they can refer to each other before any write."""
    return str(uuid.uuid4())


# The fewest first digits of an id taken as the id (the pages show 8): fewer would name a record by chance. Every
# lookup by id takes them (explorer/store/ids.py), and so do the app's links.
SHORT_ID_DIGITS = 4
# The most a page of a list (sessions, jobs, dreams …) may ask for or skip: more than any database here holds, well
# within what DuckDB's LIMIT and OFFSET take. Every surface's paging bounds are this one.
PAGE_MAX = 1_000_000


@dataclass(frozen=True)
class Document:
    """One ingested source; its content hash makes ingestion idempotent."""

    title: str
    content_hash: str
    source: str | None = None
    path: str | None = None
    year: int | None = None
    domain: str | None = None
    word_count: int = 0
    aliases: tuple[str, ...] = ()  # other titles: the same text found under another name, a note's `aliases`
    tags: tuple[str, ...] = ()  # a vault note's tags (explorer.reading.vault.normal_tag)
    links: tuple[str, ...] = ()  # the notes its [[wikilinks]] name, as written, resolved or not
    retired_because: Retired | None = None  # its file changed or is gone: kept for what cites it, not read from
    domain_origin: DomainOrigin | None = None  # where ``domain`` came from (None: it has none)
    id: str = field(default_factory=new_id)

    @property
    def names(self) -> tuple[str, ...]:
        """Every title the document goes by: its own, then its aliases."""
        return (self.title, *self.aliases)


@dataclass(frozen=True)
class SourceFile:
    """A file read into the knowledge base: its absolute path, the size and modification time it had when read
    (None: read it again next time) and the documents it held, so a folder read again skips what did not change.
    """

    path: str
    size: int | None
    mtime_ns: int | None
    document_ids: tuple[str, ...]

    def unchanged(self, size: int, mtime_ns: int) -> bool:
        """Whether the file on disk is as it was read (its size and modification time): not worth opening."""
        return (self.size, self.mtime_ns) == (size, mtime_ns)


@dataclass
class Node:
    """A unit of knowledge with its provenance (parents, generation, origin)."""

    type: NodeType
    text: str
    embedding: np.ndarray | None = None
    document_id: str | None = None
    chunk_index: int | None = None
    section: str | None = None  # a raw chunk's heading in its document ("OPTIONS", "page 3", "assistant")
    year: int | None = None
    domain: str | None = None
    entity: str | None = None
    generation: int = 0
    parent_ids: list[str] = field(default_factory=list)
    category: str | None = None
    importance: float = 0.5
    prominence: float = 1.0
    confidence: float = 1.0
    memory_type: MemoryType = "regular"
    is_latest: bool = True
    superseded_by: str | None = None
    learned_from: str | None = None
    source_text: str | None = None
    metadata: dict | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None
    created_at: datetime | None = None
    id: str = field(default_factory=new_id)


@dataclass(frozen=True)
class Relation:
    """A directed edge; ``created_by`` names the process that found it."""

    source_id: str
    target_id: str
    type: RelationType
    created_by: str
    confidence: float = 1.0
    description: str | None = None
    scores: dict | None = None
    id: str = field(default_factory=new_id)


@dataclass(frozen=True)
class NoteLink:
    """A link between a node and another document's chunk, as a node's detail lists it: ``kind`` LINKS (a
    wikilink the person wrote in the vault) or MENTIONS (found by reading: the text names the other's title);
    ``outgoing`` when this node is the one that links or mentions.
    """

    kind: RelationType
    outgoing: bool
    node_id: str
    title: str


PendingStep = Literal["implant", "entities", "insight"]


@dataclass(frozen=True)
class PendingReading:
    """A step of the READING cycle the model could not do for a chunk that was stored (it failed, timed out, or
    the budget refused it). Kept, so the next ingest of the same document or ``explorer ingest --retry-failed``
    completes it: without it, an outage during ingest lost that enrichment for good.

    ``related_ids`` is what the step was to be read against, fixed when it first failed: the earlier nodes an
    implant is made among, or what was known of an insight's entity.
    """

    chunk_id: str
    step: PendingStep
    error: str
    entity: str = ""  # an insight's entity ("" for the chunk's own steps)
    learning: str = ""  # what the chunk teaches about ``entity`` (an insight's question)
    related_ids: tuple[str, ...] = ()
    attempts: int = 1

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the item: one per chunk and step, one per entity for insights."""
        return (self.chunk_id, self.step, self.entity)


@dataclass(frozen=True)
class Verdict:
    """A judge's word on one candidate link, kept or not, with its scores, its reason and the evidence it was
    shown: what a person reads to see why a link was made or refused.
    """

    seed_id: str
    candidate_id: str
    novelty: float
    plausibility: float
    usefulness: float
    kept: bool
    reason: str
    connection: str | None = None
    evidence: str | None = None
    created_by: str = "rem_exploration"
    created_at: datetime | None = None
    id: str = field(default_factory=new_id)
