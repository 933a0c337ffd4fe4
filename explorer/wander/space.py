"""Idea space as a step sees it: corpus nodes and the session's loci, held in memory.

Why in memory: a step searches the whole corpus several times, and at 100k
nodes a SQL scan costs ~90 ms against a 20 ms budget for the step. The store
stays the source of truth; these are rebuilt from it when its change counter
moves (see ``service``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from explorer.affinity import term_vectors
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


def _sources(
    ids: Sequence[str],
    documents: Sequence[str | None],
    entities: Sequence[str | None],
    relations: Sequence[tuple[str, str, str]],
) -> tuple[np.ndarray, dict[int, dict[int, set[str]]], dict[int, frozenset[str]]]:
    """Each row's source (its document, or the node itself when it has none) as an integer code, the types of
    the relations that link each pair of sources, and each source's entities.

    Why sources, not nodes: a document is one note, whichever of its chunks, syntheses or insights the walk
    stands on, so what links any of them links the note.
    """
    code: dict[str, int] = {}
    by_node: dict[str, int] = {}
    for node_id, document in zip(ids, documents, strict=True):
        key = f"d:{document}" if document else f"n:{node_id}"
        by_node[str(node_id)] = code.setdefault(key, len(code))
    links: dict[int, dict[int, set[str]]] = {}
    for source, target, kind in relations:
        a, b = by_node.get(source), by_node.get(target)
        if a is not None and b is not None and a != b:
            links.setdefault(a, {}).setdefault(b, set()).add(kind)
            links.setdefault(b, {}).setdefault(a, set()).add(kind)
    named: dict[int, set[str]] = {}
    for node_id, entity in zip(ids, entities, strict=True):
        if entity and entity.strip():
            named.setdefault(by_node[str(node_id)], set()).add(entity.strip().lower())
    sources = np.asarray([by_node[str(i)] for i in ids], dtype=np.int64)
    return sources, links, {k: frozenset(v) for k, v in named.items()}


def _spans(
    row_of: Callable[[str], int | None],
    domain_codes: np.ndarray,
    domain_names: list[str],
    parents: Sequence[Sequence[str] | None],
) -> tuple[dict[int, tuple[str, ...]], dict[int, tuple[int, ...]]]:
    """For each row without a domain of its own that has parents (a dream binds notes of several domains): the
    domains of the nodes it was derived from, and their rows. Rows come oldest first, so a dream of dreams finds
    its parents' spans already made; parents outside the space are left out.

    Why: a step onto or off such a node claims a connection to each of its parents; with no domain it would
    cross from one domain to another unseen, free of the evidence a bridge needs.
    """
    spans: dict[int, tuple[str, ...]] = {}
    parent_rows: dict[int, tuple[int, ...]] = {}
    for row, parent_ids in enumerate(parents):
        if not parent_ids or int(domain_codes[row]) != NO_DOMAIN:
            continue
        rows = tuple(other for parent in parent_ids if (other := row_of(parent)) is not None)
        found: dict[str, None] = {}
        for other in rows:
            code = int(domain_codes[other])
            for name in (domain_names[code],) if code != NO_DOMAIN else spans.get(other, ()):
                found[name] = None
        if rows:
            parent_rows[row] = rows
        if found:
            spans[row] = tuple(found)
    return spans, parent_rows


def _source_vectors(
    sources: np.ndarray, vectors: np.ndarray, type_codes: np.ndarray, type_names: list[str]
) -> np.ndarray:
    """One unit vector per source: the mean of its raw chunks (of all its nodes when it has none)."""
    count = int(sources.max()) + 1 if len(sources) else 0
    if count == 0:
        return np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 0), dtype=np.float32)
    chunk = type_names.index("raw_chunk") if "raw_chunk" in type_names else NO_DOMAIN
    is_chunk = type_codes == chunk
    has_chunk = np.zeros(count, dtype=bool)
    has_chunk[sources[is_chunk]] = True
    use = is_chunk | ~has_chunk[sources]
    sums = np.zeros((count, vectors.shape[1]), dtype=np.float32)
    np.add.at(sums, sources[use], vectors[use])
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return sums / np.where(norms > 0, norms, 1.0)


def _source_terms(
    sources: np.ndarray,
    texts: Sequence[str],
    titles: Sequence[str | None] | None,
    type_codes: np.ndarray,
    type_names: list[str],
) -> sparse.csr_matrix | None:
    """Unit TF-IDF rows of each source's words: its title, then its raw chunks' texts (all its nodes' when it
    has none), as :class:`~explorer.affinity.Affinity` weighs them.
    """
    count = int(sources.max()) + 1 if len(sources) else 0
    if count == 0:
        return None
    chunk = type_names.index("raw_chunk") if "raw_chunk" in type_names else NO_DOMAIN
    is_chunk = type_codes == chunk
    has_chunk = np.zeros(count, dtype=bool)
    has_chunk[sources[is_chunk]] = True
    parts: list[list[str]] = [[] for _ in range(count)]
    for row, source in enumerate(sources):
        source = int(source)
        if not parts[source] and titles is not None and titles[row]:
            parts[source].append(f"{titles[row]}:")
        if is_chunk[row] or not has_chunk[source]:
            parts[source].append(texts[row])
    return term_vectors([" ".join(p) for p in parts])[0]


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
    marker: tuple[int, ...] = (0, 0)
    texts: list[str] = field(default_factory=list)
    type_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    type_names: list[str] = field(default_factory=list)
    titles: list[str | None] = field(default_factory=list)
    entities: list[str | None] = field(default_factory=list)
    sources: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    links: dict[int, dict[int, set[str]]] = field(default_factory=dict)  # source → source → relation types
    source_entities: dict[int, frozenset[str]] = field(default_factory=dict)
    source_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    spans: dict[int, tuple[str, ...]] = field(default_factory=dict)  # see _spans: a dream's parents' domains
    parent_rows: dict[int, tuple[int, ...]] = field(default_factory=dict)  # and their rows
    _bridge_lines: dict[tuple[float, float], float] = field(default_factory=dict, repr=False)
    _terms: tuple[sparse.csr_matrix | None] | None = field(default=None, repr=False)  # see source_terms

    @classmethod
    def build(
        cls,
        dim: int,
        ids: list[str],
        vectors: np.ndarray,
        domains: Sequence[str | None],
        importance: np.ndarray,
        confidence: np.ndarray,
        marker: tuple[int, ...] = (0, 0),
        texts: Sequence[str] | None = None,
        types: Sequence[str | None] | None = None,
        titles: Sequence[str | None] | None = None,
        entities: Sequence[str | None] | None = None,
        documents: Sequence[str | None] | None = None,
        relations: Sequence[tuple[str, str, str]] = (),
        parents: Sequence[Sequence[str] | None] | None = None,
    ) -> CorpusSpace:
        """The space of the corpus columns the store read (one row per node), domains coded as integers so a
        step can mask by domain without comparing strings, and the links between sources (see :meth:`linked`).
        ``parents``: the parent ids of the rows without a domain (others may be None), whose domains they span.
        """
        n = len(ids)
        index = VectorIndex(dim, capacity=max(1, n))
        if ids:
            index.add(ids, vectors)
        domain_codes, domain_names = _coded(domains)
        type_codes, type_names = _coded(types if types is not None else [None] * n)
        nothing: list[str | None] = [None] * n
        entity_list = list(entities) if entities is not None else nothing
        sources, links, source_entities = _sources(ids, documents or nothing, entity_list, relations)
        return cls(
            index,
            domain_codes,
            domain_names,
            np.asarray(importance, dtype=np.float32).reshape(-1),
            np.asarray(confidence, dtype=np.float32).reshape(-1),
            marker,
            list(texts) if texts is not None else [""] * n,
            type_codes,
            type_names,
            list(titles) if titles is not None else nothing,
            entity_list,
            sources,
            links,
            source_entities,
            _source_vectors(sources, np.asarray(vectors, dtype=np.float32), type_codes, type_names),
            *(_spans(index.row, domain_codes, domain_names, parents) if parents is not None else ({}, {})),
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

    def domains(self, row: int) -> list[str]:
        """The domains a row belongs to: its own, or the ones its parents' span (a dream across notes)."""
        domain = self.domain(row)
        return [domain] if domain is not None else list(self.spans.get(row, ()))

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
                    "title": self.titles[row] if row < len(self.titles) else None,
                    "entity": self.entities[row] if row < len(self.entities) else None,
                }
        return found

    @property
    def source_terms(self) -> sparse.csr_matrix | None:
        """Unit TF-IDF rows of each source's words, title first (see :func:`_source_terms`), made when first asked.

        Why not at build: a new session builds the space only to place its seed, and a step that asks for words
        is the first to need them (over a vault of 10,000 notes they take seconds, scikit-learn's import included).
        Steps of two sessions asking at once would both make them, the same rows: harmless.
        """
        if self._terms is None:
            self._terms = (_source_terms(self.sources, self.texts, self.titles, self.type_codes, self.type_names),)
        return self._terms[0]

    @property
    def is_chunk(self) -> np.ndarray:
        """Which rows are raw chunks (the text as read, not derived from it)."""
        if "raw_chunk" not in self.type_names:
            return np.zeros(len(self.type_codes), dtype=bool)
        return self.type_codes == self.type_names.index("raw_chunk")

    def source_similarity(self, row: int, others: np.ndarray) -> np.ndarray:
        """The cosine of ``row``'s source to each of ``others``'s: what two notes have in common, whichever of
        their chunks, syntheses or insights the walk stands on.
        """
        if not len(self.source_vectors):
            return cosines(self.index.matrix[others], self.index.matrix[row])
        return cosines(self.source_vectors[self.sources[others]], self.source_vectors[self.sources[row]])

    def shared_words(self, row: int, others: np.ndarray) -> np.ndarray:
        """The cosine of the TF-IDF word vectors of ``row``'s source and each of ``others``'s: the distinctive
        words and names two notes both use, which a sentence embedding blurs (see :mod:`explorer.affinity`).
        """
        terms = self.source_terms
        if terms is None or not terms.shape[1] or not len(self.sources):
            return np.zeros(len(others), dtype=np.float32)
        mine = terms[int(self.sources[row])]
        return np.asarray((terms[self.sources[others]] @ mine.T).toarray(), dtype=np.float32).ravel()

    def kinship(self, a: np.ndarray, b: np.ndarray, lexical_weight: float) -> np.ndarray:
        """Meaning and words together, ``(cosine + lexical_weight · shared words) / (1 + lexical_weight)``,
        for pairs of sources (codes ``a[i]``, ``b[i]``): the affinity of two notes, in [0, 1].
        """
        meaning = np.einsum("ij,ij->i", self.source_vectors[a], self.source_vectors[b])
        words = np.zeros(len(a), dtype=np.float32)
        if self.source_terms is not None and self.source_terms.shape[1]:
            words = np.asarray(self.source_terms[a].multiply(self.source_terms[b]).sum(axis=1)).ravel()
        return (meaning + lexical_weight * words) / (1.0 + lexical_weight)

    def bridge_line(self, per_note: float, lexical_weight: float, samples: int = 20_000) -> float:
        """The kinship (see :meth:`kinship`) that only the strongest pairs of sources in different domains reach,
        ``per_note`` of them for each source on average, estimated from a fixed sample of such pairs.

        Why a share of this corpus and not a fixed value: what counts as close depends on the embedding model and
        on how dense the corpus is; a bridge is strong when few pairs across domains are as close. Why so many per
        note rather than a fixed share of pairs: pairs grow with the square of the notes, so a share that leaves a
        walk over 300 notes a strong bridge for every other note leaves one over 70 notes a handful in all.
        """
        key = (per_note, lexical_weight)
        if key in self._bridge_lines:
            return self._bridge_lines[key]
        line = 1.0
        if len(self.source_vectors) > 1:
            domains = np.full(len(self.source_vectors), NO_DOMAIN, dtype=np.int64)
            domains[self.sources] = self.domain_codes
            known = domains[domains != NO_DOMAIN]
            across = (len(known) ** 2 - float(np.sum(np.bincount(known) ** 2))) / 2
            rng = np.random.default_rng(0)
            a = rng.integers(0, len(domains), samples)
            b = rng.integers(0, len(domains), samples)
            keep = (domains[a] != domains[b]) & (domains[a] != NO_DOMAIN) & (domains[b] != NO_DOMAIN)
            if keep.any() and across > 0:
                quantile = float(np.clip(1.0 - per_note * len(known) / across, 0.0, 1.0))
                line = float(np.quantile(self.kinship(a[keep], b[keep], lexical_weight), quantile))
        self._bridge_lines[key] = line
        return line

    def linked(self, row: int, others: np.ndarray, weights: Mapping[str, float]) -> np.ndarray:
        """How strongly the graph links ``row``'s source to each of ``others``'s: the largest weight of a type of
        relation between nodes of the two (an UPDATES, a MENTIONS, an EXTENDS …), 0 when none does.
        """
        if not len(self.sources):
            return np.zeros(len(others), dtype=np.float32)
        near = self.links.get(int(self.sources[row]), {})
        return np.asarray(
            [max((weights.get(k, 0.0) for k in near.get(int(s), ())), default=0.0) for s in self.sources[others]],
            dtype=np.float32,
        )

    def shared_entities(self, row: int, others: np.ndarray) -> np.ndarray:
        """How many entities each of ``others``'s source shares with ``row``'s (what reading extracted)."""
        if not len(self.sources):
            return np.zeros(len(others), dtype=np.float32)
        mine = self.source_entities.get(int(self.sources[row]), frozenset())
        if not mine:
            return np.zeros(len(others), dtype=np.float32)
        return np.asarray(
            [len(mine & self.source_entities.get(int(s), frozenset())) for s in self.sources[others]],
            dtype=np.float32,
        )


@dataclass
class LociSpace:
    """One session's loci.

    Loci drawn from nodes are found through the corpus index and mapped back by ``by_node``; those that are
    no node (the seed, injected concepts) by their concept. ``visited`` indexes the loci already visited, for
    novelty, and ``visited_domains`` gathers their domains.
    """

    dim: int
    loci: dict[str, Locus] = field(default_factory=dict)
    by_node: dict[str, str] = field(default_factory=dict)
    by_concept: dict[str, str] = field(default_factory=dict)
    marker: tuple[int, int] = (0, 0)
    visited: VectorIndex = field(init=False)
    visited_domains: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
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
            else:
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
        """The session's locus that is no node with this concept (case-insensitive), so a concept injected twice
        is one locus.
        """
        locus_id = self.by_concept.get(concept.strip().lower())
        return None if locus_id is None else self.loci[locus_id]
