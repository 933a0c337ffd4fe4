"""Affinity: how strongly two memories bear on each other, with the evidence for it.

An embedding's cosine alone is what a similarity search already offers. Two
notes that refer to each other usually also share *distinctive* terms — the
rare words and names both use, which a sentence embedding blurs — so the
affinity of two memories is the cosine of their embeddings plus the cosine of
their TF-IDF term vectors (hybrid retrieval). On the bridges benchmark this
ranks human cross-references above plain cosine at every count.

An affinity is also put in proportion: its *percentile* among random pairs of
the same knowledge base says whether it is strong here, which a raw cosine
cannot (models and corpora differ in their typical similarity). Judges read the
percentile and the shared terms as evidence; samplers rank by the affinity.

Pure: built from texts and vectors the caller passes, no store access.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from explorer.providers.embeddings import Embedder
from explorer.records import Node, Progress

EMBED_TOGETHER = 64  # memories embedded at once before the count moves (the local model encodes 64 at a time)


@dataclass(frozen=True)
class AffinityConfig:
    """How affinity weighs distinctive terms beside meaning, and how it is put in proportion."""

    lexical_weight: float = 1.0  # TF-IDF cosine counts as much as the embedding cosine
    reference_pairs: int = 20_000  # random pairs the percentile is measured against
    shared_terms: int = 4  # distinctive terms named as evidence


DEFAULT_AFFINITY = AffinityConfig()


@dataclass(frozen=True)
class Evidence:
    """Why two memories are thought to bear on each other: the numbers and the words."""

    affinity: float
    cosine: float
    lexical: float
    percentile: float  # share of random pairs of the knowledge base with a lower affinity, in [0, 100]
    shared_terms: tuple[str, ...]

    def line(self) -> str:
        """The evidence in one line, as judges are shown it (:meth:`read` reads it back)."""
        terms = ", ".join(self.shared_terms) or "none"
        return (
            f"affinity {self.affinity:.2f} (stronger than {self.percentile:.1f}% of pairs here); "
            f"meaning {self.cosine:.2f}; shared distinctive terms: {terms}"
        )

    @classmethod
    def read(cls, line: str) -> Evidence | None:
        """The evidence a :meth:`line` states (its share owed to terms derived), or None when ``line`` is not
        one: how a judge with no model reads what it was shown.
        """
        match = _LINE.search(line)
        if match is None:
            return None
        affinity, percentile, cosine = (float(match.group(i)) for i in (1, 2, 3))
        terms = tuple(t.strip() for t in match.group(4).split(",") if t.strip() and t.strip() != "none")
        return cls(affinity, cosine, affinity - cosine, percentile, terms)


_LINE = re.compile(
    r"affinity (-?[\d.]+) \(stronger than ([\d.]+)% of pairs here\); meaning (-?[\d.]+); "
    r"shared distinctive terms: (.*)"
)


class Affinity:
    """Affinity between the memories it was built over (ids with their texts and unit vectors)."""

    def __init__(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        vectors: np.ndarray,
        config: AffinityConfig = DEFAULT_AFFINITY,
        seed: int = 0,
    ):
        self.ids = list(ids)
        self.config = config
        self.row = {node_id: i for i, node_id in enumerate(self.ids)}
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.terms, self.vocabulary = term_vectors(texts)
        self._reference = self._reference_affinities(np.random.default_rng(seed))

    @classmethod
    def of_nodes(
        cls,
        nodes: Sequence[Node],
        titles: dict[str, str] | None = None,
        embedder: Embedder | None = None,
        config: AffinityConfig = DEFAULT_AFFINITY,
        progress: Progress | None = None,
    ) -> Affinity:
        """Affinity over nodes with vectors. A node's text is headed by its document's title when ``titles``
        (document id → title) knows it, since a title names the subject its chunks leave implicit; with an
        ``embedder``, those headed texts are embedded (the embedder's cache keeps them) in place of the stored
        vectors of the bare chunks, :data:`EMBED_TOGETHER` at a time, each batch counted to ``progress`` (the
        first run on a corpus embeds them all: minutes on a large one).
        """
        titles = titles or {}
        texts = titled_texts(nodes, titles)
        if embedder is not None and titles:
            rows = []
            for start in range(0, len(texts), EMBED_TOGETHER):
                rows.append(embedder.embed(texts[start : start + EMBED_TOGETHER]))
                if progress:
                    progress(min(start + EMBED_TOGETHER, len(texts)), len(texts), "memories embedded with their titles")
            vectors = np.vstack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float32)
        else:
            vectors = np.vstack([np.asarray(n.embedding, dtype=np.float32) for n in nodes])
        return cls([n.id for n in nodes], texts, vectors, config)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.row

    def _pair(self, i: int, j: int) -> tuple[float, float]:
        cosine = float(self.vectors[i] @ self.vectors[j])
        lexical = float(self.terms[i].multiply(self.terms[j]).sum()) if self.terms.shape[1] else 0.0
        return cosine, lexical

    def score(self, a: str, b: str) -> float:
        """The affinity of two memories (cosine + weighted term cosine)."""
        cosine, lexical = self._pair(self.row[a], self.row[b])
        return cosine + self.config.lexical_weight * lexical

    def _row_scores(self, i: int) -> np.ndarray:
        # One thread (einsum, not BLAS) and the term row made dense: on two cores shared with the embedding model,
        # 3 ms against 17 for the cosines of 10,000 memories, and 1 against 5 for their terms (the same values).
        scores = np.einsum("ij,j->i", self.vectors, self.vectors[i])
        if self.terms.shape[1]:
            scores = scores + self.config.lexical_weight * (self.terms @ self.terms[i].toarray().ravel())
        return scores

    def partners(self, node_id: str, k: int, allowed: Callable[[str], bool] | None = None) -> list[tuple[str, float]]:
        """The ``k`` memories of strongest affinity with ``node_id`` (never itself), those ``allowed`` only."""
        i = self.row[node_id]
        scores = self._row_scores(i)
        order = np.argsort(-scores, kind="stable")
        found = []
        for j in order:
            other = self.ids[int(j)]
            if int(j) == i or (allowed is not None and not allowed(other)):
                continue
            found.append((other, float(scores[j])))
            if len(found) == k:
                break
        return found

    @cached_property
    def floor(self) -> float | None:
        """The affinity below which two memories are not related here (:func:`relation_floor` of this knowledge
        base's random pairs); None when they do not split into the related and the rest.
        """
        return relation_floor(self._reference)

    @property
    def pairs(self) -> int:
        """How many pairs of this knowledge base its percentiles are measured against."""
        return len(self._reference)

    def percentile(self, affinity: float) -> float:
        """The share (in %) of random pairs of this knowledge base whose affinity is lower."""
        if not len(self._reference):
            return 50.0
        return round(100.0 * float(np.searchsorted(self._reference, affinity)) / len(self._reference), 2)

    def evidence(self, a: str, b: str) -> Evidence:
        """The affinity of two memories with its parts, its percentile and the distinctive terms they share."""
        i, j = self.row[a], self.row[b]
        cosine, lexical = self._pair(i, j)
        affinity = cosine + self.config.lexical_weight * lexical
        shared = self.terms[i].multiply(self.terms[j]).tocoo()
        order = np.argsort(-shared.data)[: self.config.shared_terms]
        terms = tuple(self.vocabulary[int(shared.col[k])] for k in order)
        return Evidence(round(affinity, 4), round(cosine, 4), round(lexical, 4), self.percentile(affinity), terms)

    def _reference_affinities(self, rng: np.random.Generator) -> np.ndarray:
        left, right = random_pairs(len(self.ids), self.config.reference_pairs, rng)
        cosine = np.einsum("ij,ij->i", self.vectors[left], self.vectors[right])
        lexical = (
            np.asarray(self.terms[left].multiply(self.terms[right]).sum(axis=1)).ravel() if self.terms.shape[1] else 0.0
        )
        return np.sort(cosine + self.config.lexical_weight * lexical)


def titled_texts(nodes: Sequence[Node], titles: dict[str, str]) -> list[str]:
    """Each node's text headed by its document's title (document id → title) when ``titles`` knows it: what
    :meth:`Affinity.of_nodes` weighs, and embeds with an embedder (so whoever embeds these texts ahead, through the
    embedding cache, spares a dreaming run the work).
    """
    return [f"{titles[n.document_id]}: {n.text}" if n.document_id in titles else n.text for n in nodes]


def random_pairs(n: int, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs of ``n`` memories that a knowledge base's pairs are measured on: every pair once when there are
    at most ``count`` (a small base's distribution is then exact, not a noisy draw of it), else ``count`` random
    pairs of two different memories.
    """
    if n * (n - 1) // 2 <= count:
        left, right = np.triu_indices(n, k=1)
        return left, right
    left = rng.integers(0, n, size=count)
    return left, (left + rng.integers(1, n, size=count)) % n  # never the same memory


def relation_floor(reference: np.ndarray) -> float | None:
    """Where a knowledge base's pair strengths (``reference``, sorted) split into the related and the rest, when
    they do: None when they are not bimodal, or too few to tell.

    A base of a few subjects has two groups of pairs, those within a subject and those across: their strengths
    are bimodal (Sarle's bimodality coefficient above 5/9, a uniform spread's), and the floor is the split that
    best separates the groups (Otsu's: the largest variance between them), halfway across the gap. A base of one
    subject, or of many that blend into one another, has no group of unrelated pairs to set apart, and so no
    floor: each pair is then as related as the base allows. Under four pairs there is no shape to read.
    """
    values = np.asarray(reference, dtype=np.float64)
    if len(values) < 4 or not _bimodal(values):
        return None
    below = np.arange(1, len(values))  # how many pairs fall below each split
    sums = np.cumsum(values)[:-1]
    low, high = sums / below, (values.sum() - sums) / (len(values) - below)
    spread = below * (len(values) - below) * (high - low) ** 2
    split = int(np.argmax(spread)) + 1
    return float((values[split - 1] + values[split]) / 2)


def _bimodal(values: np.ndarray) -> bool:
    """Sarle's bimodality coefficient of ``values`` (at least four) above 5/9, the coefficient of a uniform spread."""
    if values[0] == values[-1]:
        return False
    n = len(values)
    skewness, excess = sample_skew_kurtosis(values)
    coefficient = (skewness**2 + 1) / (excess + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    return coefficient > 5 / 9


def sample_skew_kurtosis(values: np.ndarray) -> tuple[float, float]:
    """The sample skewness and excess kurtosis of ``values`` (at least four, not all equal), bias-corrected: what
    ``scipy.stats.skew`` and ``kurtosis`` give with ``bias=False``. Written out because importing scipy.stats takes
    1-3 s, which every reading of one edited note paid for two moments.
    """
    n = len(values)
    centred = values - values.mean()
    m2, m3, m4 = (float(np.mean(centred**k)) for k in (2, 3, 4))
    skewness = m3 / m2**1.5 * np.sqrt(n * (n - 1)) / (n - 2)
    excess = ((n + 1) * (m4 / m2**2 - 3) + 6) * (n - 1) / ((n - 2) * (n - 3))
    return float(skewness), float(excess)


def term_vectors(texts: Sequence[str]) -> tuple[sparse.csr_matrix, list[str]]:
    """Unit TF-IDF rows (English stop words left out, sub-linear counts), and the vocabulary by column."""
    # Imported here: scikit-learn takes a second to import, and every surface imports this module (the app's
    # first page and each CLI command) while few of them build an affinity.
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=1)
    try:
        matrix = vectorizer.fit_transform(list(texts))
    except ValueError:  # no text holds a word that is not a stop word
        return sparse.csr_matrix((len(texts), 0)), []
    return sparse.csr_matrix(matrix), list(vectorizer.get_feature_names_out())
