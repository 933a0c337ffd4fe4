"""The READING cycle for one document, as a pure function.

For each chunk: embed it, find its 5 nearest *earlier* nodes (never itself),
link it to the documents it names and the earlier chunks that name its own
(:mod:`~explorer.reading.mentions`), ask for an implant synthesis among the
neighbours that are related to it (none related: no synthesis, as if the answer
were NOTHING; kept unless the answer is NOTHING), extract the entities it speaks of, and relate each
entity's learning to what was known of that entity. The model calls are made concurrently, in two rounds over several
documents at once (see :func:`read_documents`). No database access here: the
caller passes what is known (:class:`KnownNodes`) and writes the returned nodes
and relations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.affinity import random_pairs, relation_floor
from explorer.prompts import Prompt, format_passages
from explorer.prompts.reading import ENTITIES, ENTITY_SYNTHESIS, IMPLANT, EntityLearning
from explorer.providers.budget import Budget
from explorer.providers.embeddings import Embedder
from explorer.providers.gateway import Answer, Gateway
from explorer.reading.chunker import DEFAULT_CHUNK_WORDS, is_code
from explorer.reading.mentions import LinkIndex, MentionIndex
from explorer.reading.vault import wikilink_names
from explorer.records import Node, NodeType, PendingReading, Progress, Relation, begin, in_phase
from explorer.vectors import VectorIndex


@dataclass(frozen=True)
class ReadingConfig:
    """The READING cycle's knobs (docs/reading.md#parameters): how a text is cut, how many earlier nodes each chunk
    is implanted among, and how many entities it speaks of are followed.
    """

    chunk_words: int = DEFAULT_CHUNK_WORDS
    neighbours: int = 5
    entity_neighbours: int = 3
    max_entities: int = 3
    relate_min_similarity: float = 0.5
    reference_pairs: int = 20_000  # random pairs of the knowledge base the implant's floor is measured on
    # Documents read together: their model calls are in flight at once, and none builds on another's syntheses.
    # Fixed, not the concurrency setting, so what is read does not depend on how fast it is read.
    documents_together: int = 8
    # False: chunks are placed and linked, and the model's steps (implants, entities, insights) are left pending,
    # never asked (``PendingReading.attempts`` 0), for `explorer enrich` to do later: searchable in minutes.
    enrich: bool = True


DEFAULT_READING = ReadingConfig()
DEFERRED = "left for later"  # a pending step's error when it was never asked (ReadingConfig.enrich false)
VAULT = "vault"  # who made a LINKS relation: the person, writing a [[wikilink]] in their vault


class KnownNodes:
    """What the knowledge base holds, as the READING cycle needs it: vectors
    for neighbour search, text, year, generation and entity by id, and the
    documents' titles with the chunk that stands for each (its first).
    """

    def __init__(self, dim: int):
        self.index = VectorIndex(dim)
        self.text: dict[str, str] = {}
        self.year: dict[str, int | None] = {}
        self.generation: dict[str, int] = {}
        self.mentions = MentionIndex()
        self.links = LinkIndex()  # a vault's wikilinks
        self.first_chunk: dict[str, str] = {}
        self.chunks: set[str] = set()  # what was read, as opposed to what was derived from it
        self._entity_rows: dict[str, list[int]] = {}

    def add_names(self, document_id: str, names: Sequence[str]) -> None:
        """Make a document linkable by its title and aliases, once its first chunk is known."""
        if document_id in self.first_chunk:
            for name in names:
                self.mentions.add_title(document_id, name)

    def add_wikilinks(self, document_id: str, names: Sequence[str], links: Sequence[str]) -> None:
        """Make a stored note resolvable by the names a wikilink may call it by, and keep its own wikilinks for
        the notes they name that are read later.
        """
        self.links.add_names(document_id, names)
        self.links.add_links(document_id, links)

    def add(self, nodes: list[Node]) -> None:
        """Make new nodes findable, so later chunks (of this document or the next) build on them."""
        embedded = [(n, n.embedding) for n in nodes if n.embedding is not None and n.id not in self.index]
        if not embedded:
            return
        for node, _ in embedded:
            if node.type == "raw_chunk":
                self.chunks.add(node.id)
            if node.type == "raw_chunk" and node.document_id:
                self.mentions.add_text(node.id, node.text, node.document_id)
                if node.chunk_index == 0:
                    self.first_chunk[node.document_id] = node.id
        start = len(self.index)
        self.index.add([n.id for n, _ in embedded], np.vstack([vector for _, vector in embedded]))
        for offset, (node, _) in enumerate(embedded):
            self.text[node.id] = node.text
            self.year[node.id] = node.year
            self.generation[node.id] = node.generation
            if node.entity:
                self._entity_rows.setdefault(node.entity.lower(), []).append(start + offset)

    def relation_floor(self, pairs: int) -> float | None:
        """The similarity below which a known node is not related to a chunk: where the similarities of pairs of
        the chunks read (``pairs`` of them at most, drawn the same way each time) split into the related and the
        rest (:func:`~explorer.affinity.relation_floor`); None when they do not split so. Only what was read is
        measured: a synthesis quotes two notes and an insight a line of one, which would blur the two groups.
        """
        rows = np.array([row for row, node in enumerate(self.index.ids) if node in self.chunks], dtype=np.int64)
        left, right = random_pairs(len(rows), pairs, np.random.default_rng(0))
        matrix = self.index.matrix
        return relation_floor(np.sort(np.einsum("ij,ij->i", matrix[rows[left]], matrix[rows[right]])))

    def entity_mask(self, entity: str) -> np.ndarray | None:
        """The rows that speak of ``entity`` (None when none do), so its new learning is related only to
        what was known of that same entity.
        """
        rows = self._entity_rows.get(entity.lower())
        if not rows:
            return None
        mask = np.zeros(len(self.index), dtype=bool)
        mask[rows] = True
        return mask


Placed = tuple[Node, list[tuple[str, float]]]  # a chunk and its nearest earlier nodes, with their similarity
Learning = tuple[Node, list[str], dict[str, Any]]  # the chunk, what was known of the entity, the prompt's fields


@dataclass
class ReadingResult:
    """What reading one document produced (its chunks, syntheses and entity insights with their relations),
    for the caller to write in one transaction, and what failed along the way: said in ``failures``, and kept
    as ``pending`` steps to be asked again.
    """

    nodes: list[Node] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    chunks: int = 0
    syntheses: int = 0
    entity_insights: int = 0
    failures: list[str] = field(default_factory=list)
    pending: list[PendingReading] = field(default_factory=list)
    deferred: list[PendingReading] = field(default_factory=list)  # steps left for later, never asked
    retried: list[tuple[str, str, str]] = field(default_factory=list)  # the pending steps asked again

    @property
    def completed(self) -> list[tuple[str, str, str]]:
        """The pending steps asked again that are done now (those that failed again are in ``pending``)."""
        failed = {item.key for item in self.pending}
        return [key for key in self.retried if key not in failed]

    def fail(self, chunk: Node, item: PendingReading, what: str) -> None:
        """A step failed for ``chunk``: say so, and keep it to be asked again."""
        self.failures.append(f"chunk {chunk.chunk_index}: {what} failed ({item.error})")
        self.pending.append(item)


@dataclass(frozen=True)
class DocumentText:
    """One document as the READING cycle takes it: its id, its text cut into chunks
    (:func:`~explorer.reading.chunker.chunk_text`), and what it says of itself; ``sections`` is each chunk's
    section title, in order (empty: the document has no sections).
    """

    document_id: str
    chunks: list[str]
    year: int | None = None
    domain: str | None = None
    title: str | None = None
    aliases: tuple[str, ...] = ()  # its other names: a wikilink or a mention may call it by them too
    path: str | None = None  # the file it was read from: a wikilink may call it by the file's name
    links: tuple[str, ...] = ()  # the notes its own wikilinks name
    sections: Sequence[str | None] = ()


def read_documents(
    documents: Sequence[DocumentText],
    *,
    known: KnownNodes,
    embedder: Embedder,
    gateway: Gateway,
    config: ReadingConfig = DEFAULT_READING,
    budget: Budget | None = None,
    progress: Progress | None = None,
) -> list[ReadingResult]:
    """Run the READING cycle over documents read together, a result for each; ``progress`` hears its phases
    (placing the chunks, the implants and entities, the entities' insights), each before it starts.

    Every chunk is placed first, in order, among what ``known`` held and the
    chunks before it; its implant is made among the neighbours above the
    knowledge base's relation floor (:meth:`KnownNodes.relation_floor`, measured
    once every chunk is placed), and a chunk with none is not implanted: a note
    on bees is not synthesised with one on git because git was all there was.
    Then the models are asked in two rounds, each with up to
    ``gateway.concurrency`` calls in flight: every chunk's implant and entities,
    then every entity's insight; so a chunk's syntheses build on what was known
    and on the chunks before it, not on the syntheses of the documents read with
    it. What the models said is kept in chunk order, so a run does not depend on
    the concurrency. A model failure on one chunk is recorded in its document's
    ``failures`` and the chunk is still kept; ``known`` is extended with
    everything kept.

    Example::

        known = load_known(runtime)  # explorer.reading.ingest
        document = DocumentText("doc-1", chunk_text(text), year=2008, title="Garbage collection")
        [result] = read_documents([document], known=known, embedder=runtime.embedder, gateway=runtime.gateway)
        result.chunks, result.syntheses, result.failures  # nothing is stored: the caller writes the result
    """
    results = {d.document_id: ReadingResult() for d in documents}
    placed = []
    titles = ", ".join(d.title or d.document_id for d in documents)
    begin(progress, "placing chunks among what is known", note=titles)
    for d in documents:
        own = _place_chunks(d.chunks, d.document_id, d.year, d.domain, known, embedder, config, results, d.sections)
        placed += own
        if d.title:
            _link_mentions(d.document_id, (d.title, *d.aliases), [chunk for chunk, _ in own], known, results)
        if own:
            _link_wikilinks(d, own[0][0], known, results[d.document_id])
    implants = related_neighbours(placed, known.relation_floor(config.reference_pairs))
    themed = [(chunk, near) for chunk, near in placed if not is_code(chunk.text)]  # code names no entity, no theme
    if not config.enrich:
        _defer(implants, themed, results)
        return [results[d.document_id] for d in documents]
    _enrich(
        implants,
        themed,
        [],
        known=known,
        embedder=embedder,
        gateway=gateway,
        config=config,
        budget=budget,
        results=results,
        progress=progress,
    )
    return [results[d.document_id] for d in documents]


def read_pending(
    items: Sequence[PendingReading],
    chunks: Mapping[str, Node],
    *,
    known: KnownNodes,
    embedder: Embedder,
    gateway: Gateway,
    config: ReadingConfig = DEFAULT_READING,
    budget: Budget | None = None,
) -> dict[str, ReadingResult]:
    """Ask again for the steps a READING cycle could not do: a result for each document they belong to, by id.

    Each step is asked as it would have been: an implant among the nodes it was first placed among, an insight
    against what was first known of its entity; entities found now are related to everything known now. The
    result's ``completed`` names the steps done, its ``pending`` those that failed again (or anew: the insight
    of an entity found only now). ``chunks`` holds the stored chunk of every item (an item without one is left).

    Example::

        results = read_pending(items, {c.id: c for c in stored_chunks}, known=known, embedder=embedder,
                               gateway=gateway)
        results[document_id].completed, results[document_id].pending  # nothing is stored: the caller writes
    """
    results: dict[str, ReadingResult] = {}
    implants: list[Placed] = []
    entities: list[Placed] = []
    learnings: list[Learning] = []
    for item in items:
        chunk = chunks.get(item.chunk_id)
        if chunk is None:
            continue
        results.setdefault(str(chunk.document_id), ReadingResult()).retried.append(item.key)
        related = [node for node in item.related_ids if node in known.text]
        if item.step == "implant":
            implants.append((chunk, [(node, 0.0) for node in related]))
        elif item.step == "entities":
            entities.append((chunk, []))
        else:
            learnings.append(_learning(chunk, item.entity, item.learning, related, known))
    _enrich(
        implants,
        entities,
        learnings,
        known=known,
        embedder=embedder,
        gateway=gateway,
        config=config,
        budget=budget,
        results=results,
    )
    return results


def _enrich(
    implants: list[Placed],
    entities: list[Placed],
    learnings: list[Learning],
    *,
    known: KnownNodes,
    embedder: Embedder,
    gateway: Gateway,
    config: ReadingConfig,
    budget: Budget | None,
    results: dict[str, ReadingResult],
    progress: Progress | None = None,
) -> None:
    """The model's two rounds: the implants of ``implants`` and the entities of ``entities`` together, then the
    insight of every entity found and of every learning given; what came back is added to ``results``.
    """
    first: list[tuple[Prompt[Any], dict[str, Any]]]
    first = [(IMPLANT, _implant_fields(neighbours, chunk, known)) for chunk, neighbours in implants]
    first += [(ENTITIES, {"passage": chunk.text, "max_entities": config.max_entities}) for chunk, _ in entities]
    answers = gateway.ask_each(first, budget=budget, progress=in_phase(progress, "implants and entities"))
    learnings = _learnings(entities, answers[len(implants) :], known, embedder, config, results) + learnings
    insights = gateway.ask_each(
        [(ENTITY_SYNTHESIS, fields) for _, _, fields in learnings],
        budget=budget,
        progress=in_phase(progress, "relating entities"),
    )
    _keep_implants(implants, answers[: len(implants)], known, embedder, results)
    _keep_insights(learnings, insights, known, embedder, results)


def _defer(implants: list[Placed], entities: list[Placed], results: dict[str, ReadingResult]) -> None:
    """Leave the model's first round for later: each chunk's implant (among the neighbours it has now) and its
    entities, kept pending as never asked; the insights follow from the entities when they are asked.
    """
    for chunk, neighbours in implants:
        related = tuple(node for node, _ in neighbours)
        results[str(chunk.document_id)].deferred.append(
            PendingReading(chunk.id, "implant", DEFERRED, related_ids=related, attempts=0)
        )
    for chunk, _ in entities:
        results[str(chunk.document_id)].deferred.append(PendingReading(chunk.id, "entities", DEFERRED, attempts=0))


def _place_chunks(
    chunks: list[str],
    document_id: str,
    year: int | None,
    domain: str | None,
    known: KnownNodes,
    embedder: Embedder,
    config: ReadingConfig,
    results: dict[str, ReadingResult],
    sections: Sequence[str | None] = (),
) -> list[Placed]:
    """Each chunk as a node with its nearest earlier nodes (never itself), linked to the close ones that were
    read (a synthesis or an insight is context for the implant, not a source to link: its text mixes several).
    """
    result = results[document_id]
    placed = []
    vectors = embedder.embed(chunks)
    for index, (text, vector) in enumerate(zip(chunks, vectors, strict=True)):
        chunk = Node(
            type="raw_chunk",
            text=text,
            embedding=vector,
            document_id=document_id,
            chunk_index=index,
            section=sections[index] if sections else None,
            year=year,
            domain=domain,
            learned_from="reading",
            importance=0.5,
        )
        neighbours = known.index.top_k(vector, config.neighbours, exclude=[chunk.id])
        known.add([chunk])
        result.nodes.append(chunk)
        result.chunks += 1
        result.relations += [
            Relation(chunk.id, other, "EXTENDS", created_by="reading", confidence=round(sim, 4))
            for other, sim in neighbours
            if sim >= config.relate_min_similarity and other in known.chunks
        ]
        placed.append((chunk, neighbours))
    return placed


def related_neighbours(placed: list[Placed], floor: float | None) -> list[Placed]:
    """The chunks with the neighbours at or above ``floor`` (all of them when there is no floor yet), leaving out
    the chunks with none: what the implant synthesis is asked about.
    """
    kept = [
        (chunk, [(n, sim) for n, sim in neighbours if floor is None or sim >= floor]) for chunk, neighbours in placed
    ]
    return [(chunk, neighbours) for chunk, neighbours in kept if neighbours]


def _link_mentions(
    document_id: str, names: Sequence[str], chunks: list[Node], known: KnownNodes, results: dict[str, ReadingResult]
) -> None:
    """MENTIONS relations both ways: from this document's chunks to the documents they name, and from the
    earlier chunks that name this document (by its title or an alias, ``names``) to its first chunk, once each.
    """
    result = results[document_id]
    own = {chunk.id for chunk in chunks}
    for chunk in chunks:
        for mention in known.mentions.find(chunk.text, exclude=document_id):
            target = known.first_chunk[mention.document_id]
            result.relations.append(
                Relation(chunk.id, target, "MENTIONS", created_by="reading", description=mention.title)
            )
    if chunks and chunks[0].chunk_index == 0:
        linked = set(own)
        for name in names:
            for earlier in known.mentions.naming(document_id, name):
                if earlier not in linked:
                    linked.add(earlier)
                    result.relations.append(
                        Relation(earlier, chunks[0].id, "MENTIONS", created_by="reading", description=name)
                    )
        known.add_names(document_id, names)


def _link_wikilinks(document: DocumentText, first: Node, known: KnownNodes, result: ReadingResult) -> None:
    """LINKS relations both ways between notes' first chunks: from this note to the known notes its wikilinks
    name, and from the known notes whose wikilinks name this one (read before it, their links waited for it).
    A wikilink to a note not known yet is kept in ``known`` until that note comes.
    """
    own = document.document_id
    names = wikilink_names((document.title or "", *document.aliases), document.path)
    known.links.add_names(own, names)
    for other, target in known.links.resolve(own, document.links).items():
        if other in known.first_chunk:
            result.relations.append(
                Relation(first.id, known.first_chunk[other], "LINKS", created_by=VAULT, description=target)
            )
    for other, target in known.links.linking(own, names).items():
        if other in known.first_chunk:
            result.relations.append(
                Relation(known.first_chunk[other], first.id, "LINKS", created_by=VAULT, description=target)
            )
    known.links.add_links(own, document.links)


def alias_links(known: KnownNodes, document_id: str, alias: str, names: Sequence[str]) -> list[Relation]:
    """MENTIONS relations for a document's new alias: from every known chunk that names the alias (none of the
    document's own, none that already names it by another of its ``names``) to its first chunk.

    Example::

        relations = alias_links(known, document_id, "GC", ["Garbage collection"])  # MENTIONS to its first chunk
    """
    first = known.first_chunk.get(document_id)
    if first is None:
        return []
    linked = {c for name in names for c in known.mentions.naming(document_id, name)}
    return [
        Relation(chunk, first, "MENTIONS", created_by="reading", description=alias)
        for chunk in known.mentions.naming(document_id, alias)
        if chunk not in linked and known.mentions.document_of(chunk) != document_id
    ]


def _implant_fields(neighbours: list[tuple[str, float]], chunk: Node, known: KnownNodes) -> dict[str, Any]:
    ids = [n for n, _ in neighbours]
    passages = format_passages([known.text[i] for i in ids], [str(known.year[i] or "") or None for i in ids])
    return {"new_info": chunk.text, "existing_knowledge": passages}


def _derived(
    kind: NodeType,
    text: str,
    vector: np.ndarray,
    parents: list[str],
    known: KnownNodes,
    source: Node,
    model: str,
    entity: str | None = None,
) -> Node:
    generation = 1 + max((known.generation.get(p, 0) for p in parents), default=0)
    return Node(
        type=kind,
        text=text,
        embedding=vector,
        document_id=source.document_id,
        year=source.year,
        domain=source.domain,
        generation=generation,
        parent_ids=parents,
        learned_from="reading",
        memory_type="derived",
        metadata={"model": model},
        entity=entity,
    )


def _keep_implants(
    placed: list[Placed],
    answers: list[Answer[str]],
    known: KnownNodes,
    embedder: Embedder,
    results: dict[str, ReadingResult],
) -> None:
    """Each chunk's implant synthesis as a node derived from the chunk and its neighbours, in chunk order; all
    embedded in one call (one at a time cost ~30 ms each, four times a batch's share).
    """
    kept = []
    for (chunk, neighbours), answer in zip(placed, answers, strict=True):
        text = answer.value if answer.ok else None
        if text is None:
            related = tuple(n for n, _ in neighbours)
            item = PendingReading(chunk.id, "implant", str(answer.error), related_ids=related)
            results[str(chunk.document_id)].fail(chunk, item, "implant synthesis")
        elif text:  # "": NOTHING, the chunk adds nothing to what is known
            kept.append((chunk, [n for n, _ in neighbours], text, answer.model))
    vectors = embedder.embed([text for _, _, text, _ in kept])
    for (chunk, ids, text, model), vector in zip(kept, vectors, strict=True):
        synthesis = _derived("synthesis", text, vector, [chunk.id, *ids], known, chunk, model)
        known.add([synthesis])
        result = results[str(chunk.document_id)]
        result.nodes.append(synthesis)
        result.relations += [Relation(synthesis.id, p, "DERIVES", created_by="reading") for p in synthesis.parent_ids]
        result.syntheses += 1


def _learnings(
    placed: list[Placed],
    answers: list[Answer[list[EntityLearning]]],
    known: KnownNodes,
    embedder: Embedder,
    config: ReadingConfig,
    results: dict[str, ReadingResult],
) -> list[Learning]:
    """What each chunk teaches about each entity it names, with what was already known of that entity (the
    learnings embedded in one call).
    """
    found: list[tuple[Node, EntityLearning]] = []
    for (chunk, _), answer in zip(placed, answers, strict=True):
        if answer.ok and answer.value is not None:
            found += [(chunk, item) for item in answer.value[: config.max_entities]]
        else:
            pending = PendingReading(chunk.id, "entities", str(answer.error))
            results[str(chunk.document_id)].fail(chunk, pending, "entity extraction")
    learnings: list[Learning] = []
    for (chunk, item), vector in zip(found, embedder.embed([item.learning for _, item in found]), strict=True):
        mask = known.entity_mask(item.entity)
        previous = [] if mask is None else known.index.top_k(vector, config.entity_neighbours, allowed=mask)
        learnings.append(_learning(chunk, item.entity, item.learning, [p for p, _ in previous], known))
    return learnings


def _learning(chunk: Node, entity: str, learning: str, previous: list[str], known: KnownNodes) -> Learning:
    """An insight's question: what ``chunk`` teaches about ``entity``, beside what was known of it."""
    fields = {"entity": entity, "learning": learning, "previous": format_passages([known.text[p] for p in previous])}
    return (chunk, previous, fields)


def _keep_insights(
    learnings: list[Learning],
    answers: list[Answer[str]],
    known: KnownNodes,
    embedder: Embedder,
    results: dict[str, ReadingResult],
) -> None:
    kept = []
    for (chunk, prev_ids, fields), answer in zip(learnings, answers, strict=True):
        if answer.ok and answer.value is not None:
            kept.append((chunk, prev_ids, fields["entity"], answer.value, answer.model))
        else:
            entity, learning = fields["entity"], fields["learning"]
            item = PendingReading(chunk.id, "insight", str(answer.error), entity, learning, tuple(prev_ids))
            results[str(chunk.document_id)].fail(chunk, item, f"insight on {entity!r}")
    if not kept:
        return
    vectors = embedder.embed([text for _, _, _, text, _ in kept])
    for (chunk, prev_ids, entity, text, model), vector in zip(kept, vectors, strict=True):
        insight = _derived("entity_insight", text, vector, [chunk.id, *prev_ids], known, chunk, model, entity=entity)
        known.add([insight])
        result = results[str(chunk.document_id)]
        result.nodes.append(insight)
        result.relations += [Relation(insight.id, p, "DERIVES", created_by="reading") for p in insight.parent_ids]
        result.entity_insights += 1
