"""Idea space as a step sees it: corpus nodes and the session's loci, held in memory.

Why in memory: a step searches the whole corpus several times, and at 100k
nodes a SQL scan costs ~90 ms against a 20 ms budget for the step. The store
stays the source of truth; these are rebuilt from it when its change counter
moves (see ``service``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.records.wander import Locus
from explorer.vectors import VectorIndex

NO_DOMAIN = -1  # the code of a row without a domain (or type)


def cosines(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``matrix @ query`` on one thread.

    Why not BLAS: on two cores its threads contend with the embedding model's and with each other (measured
    here: 8 ms against 1 ms for 10k rows, 17 against 12 for 100k).
    """
    return np.einsum("ij,j->i", matrix, np.asarray(query, dtype=np.float32))


def _coded(values: Sequence[str | None]) -> tuple[np.ndarray, list[str]]:
    """Integer codes per row (``NO_DOMAIN`` for none) and the sorted names they index."""
    names = sorted({v for v in values if v})
    code = {name: i for i, name in enumerate(names)}
    return np.asarray([code[v] if v else NO_DOMAIN for v in values], dtype=np.int32), names


@dataclass
class CorpusSpace:
    """Embedded latest nodes: vectors in a :class:`VectorIndex`, domains and types as integer codes per row,
    and each node's text.

    Why the texts too: a step shows a few nodes' texts to the model and names its candidates by them while it
    thinks, with the file free; reading them there would open the file twice a step. They cost about as much
    memory as the vectors (a 1,500-character chunk against 384 floats).
    """

    index: VectorIndex
    domain_codes: np.ndarray
    domain_names: list[str]
    importance: np.ndarray
    confidence: np.ndarray
    marker: tuple[int, int] = (0, 0)
    texts: list[str] = field(default_factory=list)
    type_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    type_names: list[str] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        dim: int,
        ids: list[str],
        vectors: np.ndarray,
        domains: Sequence[str | None],
        importance: np.ndarray,
        confidence: np.ndarray,
        marker: tuple[int, int] = (0, 0),
        texts: Sequence[str] | None = None,
        types: Sequence[str | None] | None = None,
    ) -> CorpusSpace:
        """The space of the corpus columns the store read (one row per node), domains coded as integers so a
        step can mask by domain without comparing strings.
        """
        index = VectorIndex(dim, capacity=max(1, len(ids)))
        if ids:
            index.add(ids, vectors)
        domain_codes, domain_names = _coded(domains)
        type_codes, type_names = _coded(types if types is not None else [None] * len(ids))
        return cls(
            index,
            domain_codes,
            domain_names,
            np.asarray(importance, dtype=np.float32).reshape(-1),
            np.asarray(confidence, dtype=np.float32).reshape(-1),
            marker,
            list(texts) if texts is not None else [""] * len(ids),
            type_codes,
            type_names,
        )

    def __len__(self) -> int:
        return len(self.index)

    def row(self, node_id: str) -> int | None:
        """The node's row in the index and the per-row arrays, or None when it is not in the space."""
        return self.index.row(node_id)

    def domain(self, row: int) -> str | None:
        """The domain name of a row, or None for a node without one."""
        code = int(self.domain_codes[row])
        return None if code == NO_DOMAIN else self.domain_names[code]

    def codes_of(self, domains: list[str]) -> np.ndarray:
        """The integer codes of these domain names (case-insensitive), for masks over the rows."""
        wanted = {d.lower() for d in domains}
        return np.asarray([i for i, name in enumerate(self.domain_names) if name.lower() in wanted], dtype=np.int32)

    def summaries(self, node_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Node id → {text, type, domain} for the ids in the space (others are left out), without the store."""
        found: dict[str, dict[str, Any]] = {}
        for node_id in node_ids:
            row = self.row(node_id)
            if row is not None:
                code = int(self.type_codes[row])
                found[node_id] = {
                    "text": self.texts[row],
                    "type": None if code == NO_DOMAIN else self.type_names[code],
                    "domain": self.domain(row),
                }
        return found


@dataclass
class LociSpace:
    """One session's loci.

    ``free`` indexes the loci that are not corpus nodes (seed, analogies, injected): loci drawn from nodes are
    found through the corpus index and mapped back by ``by_node``. ``visited`` indexes the loci already
    visited, for novelty, and ``visited_domains`` gathers their domains.
    """

    dim: int
    loci: dict[str, Locus] = field(default_factory=dict)
    by_node: dict[str, str] = field(default_factory=dict)
    by_concept: dict[str, str] = field(default_factory=dict)
    marker: tuple[int, int] = (0, 0)
    free: VectorIndex = field(init=False)
    visited: VectorIndex = field(init=False)
    visited_domains: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.free = VectorIndex(self.dim, capacity=64)
        self.visited = VectorIndex(self.dim, capacity=64)

    @classmethod
    def build(cls, dim: int, loci: list[Locus], marker: tuple[int, int] = (0, 0)) -> LociSpace:
        """The space of a session's stored loci, as a step starts from it."""
        space = cls(dim, marker=marker)
        space.add(loci)
        return space

    def add(self, loci: list[Locus]) -> None:
        """Take in loci a step met, so the next step can find them again by node, concept or meaning."""
        for locus in loci:
            self.loci[locus.id] = locus
            if locus.node_id:
                self.by_node[locus.node_id] = locus.id
            elif locus.embedding is not None:
                self.free.add([locus.id], locus.embedding[None, :])
                self.by_concept.setdefault(locus.concept.strip().lower(), locus.id)
            self.mark_visited(locus)

    def mark_visited(self, locus: Locus) -> None:
        """Count a visited locus in novelty (candidates near where the walk has been score as less new) and its
        domains in the ones seen (a bridge to a domain not seen yet scores higher).
        """
        if locus.visit_count > 0:
            self.visited_domains.update(locus.domains)
            if locus.embedding is not None:
                self.visited.add([locus.id], locus.embedding[None, :])

    def locus_for_node(self, node_id: str) -> Locus | None:
        """The session's locus standing on this corpus node, so meeting the node again revisits it."""
        locus_id = self.by_node.get(node_id)
        return None if locus_id is None else self.loci[locus_id]

    def locus_for_concept(self, concept: str) -> Locus | None:
        """The session's free locus with this concept (case-insensitive), so an analogy proposed twice is one
        locus.
        """
        locus_id = self.by_concept.get(concept.strip().lower())
        return None if locus_id is None else self.loci[locus_id]
