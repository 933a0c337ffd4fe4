"""Topics found from the notes themselves, for documents no one gave a domain (pure).

Why: notes without a ``domain:`` key, a folder or a tag leave every cross-domain mechanism (bridges, REM's triples
across categories, the map's colours, a walk's scope) with nothing to work with. As BERTopic does, the chunks'
embeddings are clustered by density (:func:`explorer.clustering.density_clusters`: HDBSCAN, on a UMAP reduction
from a dozen chunks on) and each topic is named from its own words by class-based TF-IDF: a term weighs by how
often the topic's chunks use it against how often all the chunks do, so "commit" names the topic of git's pages
and a word every topic uses names none.

Why c-TF-IDF rather than YAKE's keyphrases (``explorer.text.keyphrases``): on git's and Python's pages both name
well (YAKE: "current branch · git" and "Python · list"; c-TF-IDF: "branch · git" and "list · function"), but YAKE
ranks what stands out inside one text, with no regard to the other topics, so two topics of one field may both
take the words the field shares; c-TF-IDF weighs a term against the other topics, which is what a name that tells
topics apart needs, and costs one count of the words. The terms are the words that are not function words (YAKE's
stopwords), a plural counted with its singular; the stricter test of a theme (:func:`explorer.text.is_theme`)
turned away the very words git's pages are about ("commit", "merge", "stash": verbs too, to its lexicon).

A document takes the topic most of its chunks fall in; one whose chunks all fall in none (HDBSCAN's noise) joins
the topic whose centre is nearest, if it is at least ``join_similarity`` close, and stays without one otherwise.
Too few documents (under ``min_documents``) give no topics: a handful of notes shows no structure to find.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from explorer.clustering import ClusterConfig, Clusters, density_clusters
from explorer.text import function_words

SEPARATOR = " · "


@dataclass(frozen=True)
class TopicConfig:
    """When topics are looked for, how dense one must be, and how it is named."""

    min_documents: int = 6  # fewer documents without a domain than this: no topics
    min_chunks: int = 3  # chunks a topic holds at least (HDBSCAN's smallest cluster)
    min_topic_documents: int = 2  # documents a topic holds at least; a topic is never one document's own
    terms: int = 2  # words in a topic's name ("commit · branch"); one more where two topics would share it
    join_similarity: float = 0.3  # how close a document of noise must be to a topic's centre to join it
    seed: int = 0  # UMAP's random state: the same chunks give the same topics


DEFAULT_TOPICS = TopicConfig()


@dataclass(frozen=True)
class Topic:
    """One topic: its name, the terms it was named from (best first) and its documents."""

    name: str
    terms: tuple[str, ...]
    documents: tuple[str, ...]


@dataclass(frozen=True)
class Topics:
    """What :func:`find_topics` found: the topics, each document's (None: none), and how the chunks were clustered."""

    topics: list[Topic] = field(default_factory=list)
    of_document: dict[str, str | None] = field(default_factory=dict)
    method: str = "none"  # how the chunks were clustered; "kept": none found, the previous topics stand


def find_topics(
    document_ids: Sequence[str],
    texts: Sequence[str],
    vectors: np.ndarray,
    config: TopicConfig = DEFAULT_TOPICS,
    previous: Mapping[str, str] | None = None,
) -> Topics:
    """Topics of chunks (the ``i``-th chunk is ``texts[i]``, embedded as ``vectors[i]``, of ``document_ids[i]``),
    each named from its own words, and the topic of each document.

    Where no topics are found (too few documents, or no dense region among them), the ``previous`` ones (document
    → topic name) stand: their documents keep them and each new document joins the nearest, if close enough; so a
    few notes added to a corpus of one subject join its topic rather than undo it.

    Example::

        found = find_topics(["a", "a", "b", ...], ["Create a new commit …", …], embedder.embed(texts))
        found.of_document["a"]  # "git · commit"
        [topic.name for topic in found.topics]  # ["git · commit", "list · function"]
    """
    documents = list(dict.fromkeys(document_ids))
    vectors = np.asarray(vectors, dtype=np.float32)
    rows_of: dict[str, list[int]] = {}
    for row, document in enumerate(document_ids):
        rows_of.setdefault(document, []).append(row)
    if len(documents) >= config.min_documents:
        clusters = density_clusters(
            vectors, ClusterConfig(min_cluster_size=_smallest(document_ids, config), seed=config.seed)
        )
        if clusters.groups:
            return _named(documents, rows_of, texts, vectors, clusters, config)
    return _kept(documents, rows_of, vectors, previous or {}, config)


def _named(
    documents: list[str],
    rows_of: dict[str, list[int]],
    texts: Sequence[str],
    vectors: np.ndarray,
    clusters: Clusters,
    config: TopicConfig,
) -> Topics:
    """The clusters as topics named from their words, each document in the one most of its chunks fall in."""
    groups = clusters.groups
    names = topic_names(
        [[texts[i] for i in rows] for rows in groups],
        [texts[int(i)] for i in np.flatnonzero(clusters.labels == -1)],
        config,
    )
    topic = _topic_of_chunks(clusters.labels)
    centres = _centres(vectors, groups)
    chosen = {d: _document_topic(rows_of[d], topic, vectors, centres, config) for d in documents}
    held = Counter(t for t in chosen.values() if t is not None)
    if small := {t for t in held if held[t] < config.min_topic_documents}:
        # a topic left with one document is that document's own: it joins the nearest topic that stands, if any
        kept = [t for t in range(len(groups)) if t not in small]
        for d in [d for d, t in chosen.items() if t in small]:
            chosen[d] = _nearest(vectors[rows_of[d]], centres, kept, config)
    topics = [
        Topic(name, terms, tuple(d for d in documents if chosen[d] == index))
        for index, (name, terms) in enumerate(names)
    ]
    return Topics(
        [t for t in topics if t.documents],
        {d: None if index is None else topics[index].name for d, index in chosen.items()},
        clusters.method,
    )


def _kept(
    documents: list[str],
    rows_of: dict[str, list[int]],
    vectors: np.ndarray,
    previous: Mapping[str, str],
    config: TopicConfig,
) -> Topics:
    """The previous topics, standing: their documents keep them, the others join the nearest close enough."""
    names = sorted({previous[d] for d in documents if d in previous})
    if not names:
        return Topics(of_document=dict.fromkeys(documents))
    centres = _centres(
        vectors, [[r for d in documents if previous.get(d) == name for r in rows_of[d]] for name in names]
    )
    every = list(range(len(names)))
    chosen = {
        d: names.index(previous[d]) if d in previous else _nearest(vectors[rows_of[d]], centres, every, config)
        for d in documents
    }
    topics = [Topic(name, (), tuple(d for d in documents if chosen[d] == index)) for index, name in enumerate(names)]
    return Topics(topics, {d: None if index is None else names[index] for d, index in chosen.items()}, "kept")


def _smallest(document_ids: Sequence[str], config: TopicConfig) -> int:
    """The fewest chunks a cluster holds: ``min_topic_documents`` documents of the usual length (the median), so a
    long note's own sections do not make a topic of their own.
    """
    per_document = float(np.median(list(Counter(document_ids).values())))
    return max(config.min_chunks, round(config.min_topic_documents * per_document))


def _topic_of_chunks(labels: np.ndarray) -> list[int | None]:
    """Each chunk's topic as an index into the clusters in label order (None: noise)."""
    order = {label: index for index, label in enumerate(sorted(set(labels.tolist()) - {-1}))}
    return [order.get(int(label)) for label in labels]


def _centres(vectors: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    """Each topic's centre: the unit mean of its chunks' vectors."""
    centres = np.vstack([vectors[rows].mean(axis=0) for rows in groups])
    return centres / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)


def _document_topic(
    rows: list[int], topic: list[int | None], vectors: np.ndarray, centres: np.ndarray, config: TopicConfig
) -> int | None:
    """The topic most of the document's chunks fall in (the first such on a tie); for a document whose chunks all
    fall in none, the nearest topic close enough, or None.
    """
    votes = Counter(t for r in rows if (t := topic[r]) is not None)
    if votes:
        return max(sorted(votes), key=lambda t: votes[t])
    return _nearest(vectors[rows], centres, list(range(len(centres))), config)


def _nearest(vectors: np.ndarray, centres: np.ndarray, among: list[int], config: TopicConfig) -> int | None:
    """The topic of ``among`` whose centre is nearest the unit mean of ``vectors``, if close enough."""
    if not among:
        return None
    mean = vectors.mean(axis=0)
    similarity = centres[among] @ (mean / max(float(np.linalg.norm(mean)), 1e-12))
    best = int(np.argmax(similarity))
    return among[best] if similarity[best] >= config.join_similarity else None


_TERM = re.compile(r"[A-Za-z][a-z]+(?:-[a-z]+)*")


def topic_names(
    topics: Sequence[Sequence[str]], rest: Sequence[str] = (), config: TopicConfig = DEFAULT_TOPICS
) -> list[tuple[str, tuple[str, ...]]]:
    """Each topic's name and its ranked terms, by class-based TF-IDF over the texts of each topic against the
    others and ``rest`` (the chunks of no topic, which count as one more class); names are kept apart, a topic
    that would share another's taking one term more.

    Example::

        topic_names([["Create a new commit …", …], ["The list data type …", …]])
        # [("commit · branch", ("commit", "branch", …)), ("list · dictionary", ("list", …))]
    """
    counts = [_words(texts) for texts in (*topics, rest)]
    total = Counter[str]()
    for count in counts:
        total.update(count)
    singular = {word: stem for word in total if (stem := _singular(word, total)) is not None}
    counts = [_folded(count, singular) for count in counts]
    total = Counter[str]()
    for count in counts:
        total.update(count)
    average = sum(total.values()) / max(1, len(counts))
    named: list[tuple[str, tuple[str, ...]]] = []
    for count in counts[: len(topics)]:
        # BERTopic's weight: the term's frequency in the class times log(1 + average class size / its frequency)
        weight = {term: n * math.log(1 + average / total[term]) for term, n in count.items()}
        ranked = tuple(sorted(weight, key=lambda term: (-weight[term], term)))
        named.append((SEPARATOR.join(ranked[: config.terms]), ranked))
    return _apart(named, config)


def _apart(named: list[tuple[str, tuple[str, ...]]], config: TopicConfig) -> list[tuple[str, tuple[str, ...]]]:
    """The names with each one shared by two topics made longer by a term, then numbered if still shared."""
    shared = {name for name, _ in named if [n for n, _ in named].count(name) > 1}
    longer = [
        (SEPARATOR.join(ranked[: config.terms + 1]) if name in shared else name, ranked) for name, ranked in named
    ]
    seen: Counter[str] = Counter()
    apart = []
    for name, ranked in longer:
        seen[name] += 1
        apart.append((name if seen[name] == 1 else f"{name} ({seen[name]})", ranked))
    return apart


def _words(texts: Sequence[str]) -> Counter[str]:
    """How often each term a topic can be named by occurs in ``texts``, lower-cased."""
    stop = function_words()
    words = Counter(w.lower() for text in texts for w in _TERM.findall(text))
    return Counter({w: n for w, n in words.items() if len(w) > 2 and w not in stop})


def _folded(count: Counter[str], singular: dict[str, str]) -> Counter[str]:
    """``count`` with each plural counted with its singular."""
    folded = Counter[str]()
    for word, n in count.items():
        folded[singular.get(word, word)] += n
    return folded


def _singular(word: str, terms: Counter[str]) -> str | None:
    """The singular of ``word`` when ``terms`` hold it too ("branches" → "branch", "lists" → "list"), or None."""
    if word.endswith(("ss", "us", "is")):  # "class", "status", "analysis": no plural's ending
        return None
    for ending, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(ending) and (stem := word[: -len(ending)] + replacement) in terms and len(stem) > 2:
            return stem
    return None
