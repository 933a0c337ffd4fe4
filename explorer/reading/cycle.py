"""The READING cycle for one document, as a pure function.

For each chunk: embed it, find its 5 nearest *earlier* nodes (never itself),
ask for an implant synthesis (kept unless the answer is NOTHING), extract the
entities it speaks of, and relate each entity's learning to what was known of
that entity. No database access here: the caller passes what is known
(:class:`KnownNodes`) and writes the returned nodes and relations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.prompts import format_passages
from explorer.prompts.reading import ENTITIES, ENTITY_SYNTHESIS, IMPLANT
from explorer.providers.embeddings import Embedder
from explorer.providers.gateway import Gateway
from explorer.reading.chunker import DEFAULT_CHUNK_WORDS
from explorer.records import Node, Relation
from explorer.vectors import VectorIndex


@dataclass(frozen=True)
class ReadingConfig:
    chunk_words: int = DEFAULT_CHUNK_WORDS
    neighbours: int = 5
    entity_neighbours: int = 3
    max_entities: int = 3
    relate_min_similarity: float = 0.5


class KnownNodes:
    """What the knowledge base holds, as the READING cycle needs it: vectors
    for neighbour search, and text, year, generation and entity by id.
    """

    def __init__(self, dim: int):
        self.index = VectorIndex(dim)
        self.text: dict[str, str] = {}
        self.year: dict[str, int | None] = {}
        self.generation: dict[str, int] = {}
        self._entity_rows: dict[str, list[int]] = {}

    def add(self, nodes: list[Node]) -> None:
        embedded = [n for n in nodes if n.embedding is not None and n.id not in self.index]
        if not embedded:
            return
        start = len(self.index)
        self.index.add([n.id for n in embedded], np.vstack([n.embedding for n in embedded]))
        for offset, node in enumerate(embedded):
            self.text[node.id] = node.text
            self.year[node.id] = node.year
            self.generation[node.id] = node.generation
            if node.entity:
                self._entity_rows.setdefault(node.entity.lower(), []).append(start + offset)

    def entity_mask(self, entity: str) -> np.ndarray | None:
        rows = self._entity_rows.get(entity.lower())
        if not rows:
            return None
        mask = np.zeros(len(self.index), dtype=bool)
        mask[rows] = True
        return mask


@dataclass
class ReadingResult:
    nodes: list[Node] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    chunks: int = 0
    syntheses: int = 0
    entity_insights: int = 0
    failures: list[str] = field(default_factory=list)


def read_document(
    chunks: list[str],
    *,
    document_id: str,
    year: int | None,
    domain: str | None,
    known: KnownNodes,
    embedder: Embedder,
    gateway: Gateway,
    config: ReadingConfig = ReadingConfig(),
) -> ReadingResult:
    """Run the READING cycle over one document, cut into ``chunks`` by the caller (:func:`~explorer.reading.chunker.chunk_text`).

    ``known`` is extended as chunks are read, so later chunks of the same
    document see the earlier ones; a model failure on one chunk is recorded in
    ``failures`` and the chunk is still kept.
    """
    result = ReadingResult()
    vectors = embedder.embed(chunks)
    for index, (chunk_text_, vector) in enumerate(zip(chunks, vectors)):
        chunk = Node(
            type="raw_chunk",
            text=chunk_text_,
            embedding=vector,
            document_id=document_id,
            chunk_index=index,
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
            if sim >= config.relate_min_similarity
        ]
        _implant(chunk, neighbours, known, embedder, gateway, result)
        _entities(chunk, known, embedder, gateway, config, result)
    return result


def _derived(
    kind: str, text: str, vector: np.ndarray, parents: list[str], known: KnownNodes, source: Node, model: str, **extra
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
        **extra,
    )


def _implant(
    chunk: Node,
    neighbours: list[tuple[str, float]],
    known: KnownNodes,
    embedder: Embedder,
    gateway: Gateway,
    result: ReadingResult,
) -> None:
    ids = [n for n, _ in neighbours]
    answer = gateway.ask(
        IMPLANT,
        {
            "new_info": chunk.text,
            "existing_knowledge": format_passages(
                [known.text[i] for i in ids], [str(known.year[i] or "") or None for i in ids]
            ),
        },
        purpose="implant",
    )
    if not answer.ok:
        result.failures.append(f"chunk {chunk.chunk_index}: implant synthesis failed ({answer.error})")
        return
    if answer.value == "":
        return  # NOTHING: the chunk adds nothing to what is known
    synthesis = _derived(
        "synthesis", answer.value, embedder.embed([answer.value])[0], [chunk.id, *ids], known, chunk, answer.model
    )
    known.add([synthesis])
    result.nodes.append(synthesis)
    result.relations += [Relation(synthesis.id, p, "DERIVES", created_by="reading") for p in synthesis.parent_ids]
    result.syntheses += 1


def _entities(
    chunk: Node, known: KnownNodes, embedder: Embedder, gateway: Gateway, config: ReadingConfig, result: ReadingResult
) -> None:
    answer = gateway.ask(ENTITIES, {"passage": chunk.text, "max_entities": config.max_entities}, purpose="entities")
    if not answer.ok:
        result.failures.append(f"chunk {chunk.chunk_index}: entity extraction failed ({answer.error})")
        return
    items = answer.value[: config.max_entities]
    if not items:
        return
    learning_vectors = embedder.embed([item.learning for item in items])
    pending: list[tuple[str, str, list[str], str]] = []
    for item, learning_vector in zip(items, learning_vectors):
        mask = known.entity_mask(item.entity)
        previous = [] if mask is None else known.index.top_k(learning_vector, config.entity_neighbours, allowed=mask)
        prev_ids = [p for p, _ in previous]
        synthesis = gateway.ask(
            ENTITY_SYNTHESIS,
            {
                "entity": item.entity,
                "learning": item.learning,
                "previous": format_passages([known.text[p] for p in prev_ids]),
            },
            purpose="entity_synthesis",
        )
        if synthesis.ok:
            pending.append((item.entity, synthesis.value, prev_ids, synthesis.model))
        else:
            result.failures.append(f"chunk {chunk.chunk_index}: insight on {item.entity!r} failed ({synthesis.error})")
    if not pending:
        return
    vectors = embedder.embed([text for _, text, _, _ in pending])
    for (entity, text, prev_ids, model), vector in zip(pending, vectors):
        insight = _derived("entity_insight", text, vector, [chunk.id, *prev_ids], known, chunk, model, entity=entity)
        known.add([insight])
        result.nodes.append(insight)
        result.relations += [Relation(insight.id, p, "DERIVES", created_by="reading") for p in insight.parent_ids]
        result.entity_insights += 1
