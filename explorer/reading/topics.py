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

import re
from collections import Counter
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import sparse

from explorer.clustering import ClusterConfig, Clusters, density_clusters
from explorer.text import function_words

SEPARATOR = " · "
LARGE = 4096  # chunks from which UMAP lays a corpus out as a large one (:func:`_clustering`)
RANKED_TERMS = 10  # the terms a topic keeps, best first, as BERTopic keeps its top ten words


@dataclass(frozen=True)
class TopicConfig:
    """When topics are looked for, how dense one must be, and how it is named."""

    min_documents: int = 6  # fewer documents without a domain than this: no topics
    min_chunks: int = 3  # chunks a topic holds at least (HDBSCAN's smallest cluster)
    min_topic_documents: int = 2  # documents a topic holds at least; a topic is never one document's own
    topic_share: float = 0.01  # and at least this share of the documents: about a hundred topics at most
    refit_share: float = 0.1  # documents added, against those with a topic, up to which the topics stand
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
    → topic name) stand (:func:`keep_topics`); so a few notes added to a corpus of one subject join its topic
    rather than undo it.

    Example::

        found = find_topics(["a", "a", "b", ...], ["Create a new commit …", …], embedder.embed(texts))
        found.of_document["a"]  # "git · commit"
        [topic.name for topic in found.topics]  # ["git · commit", "list · function"]
    """
    documents = list(dict.fromkeys(document_ids))
    vectors = np.asarray(vectors, dtype=np.float32)
    if len(documents) >= config.min_documents:
        clusters = density_clusters(vectors, _clustering(document_ids, smallest_topic(len(documents), config), config))
        if clusters.groups:
            return _named(documents, _document_of_chunks(document_ids, documents), texts, vectors, clusters, config)
    return keep_topics(document_ids, vectors, previous or {}, config)


def keep_topics(
    document_ids: Sequence[str],
    vectors: np.ndarray,
    previous: Mapping[str, str],
    config: TopicConfig = DEFAULT_TOPICS,
) -> Topics:
    """The ``previous`` topics (document → topic name), standing: their documents keep them, and each other
    document joins the topic whose centre (the unit mean of its documents' chunks) is nearest, if at least
    ``join_similarity`` close; its ``method`` is "kept". No clustering, no naming: a note added to a large corpus
    costs a product of its vectors with the topics' centres.

    Example::

        keep_topics(["a", "b", "new"], vectors, {"a": "git · commit", "b": "list · function"}).of_document["new"]
        # "git · commit", when the new note is about git
    """
    documents = list(dict.fromkeys(document_ids))
    names = sorted({previous[d] for d in documents if d in previous})
    if not names:
        return Topics(of_document=dict.fromkeys(documents))
    vectors = np.asarray(vectors, dtype=np.float32)
    index = {name: position for position, name in enumerate(names)}
    chosen = np.array([index[previous[d]] if d in previous else -1 for d in documents], dtype=np.int64)
    of_chunk = _document_of_chunks(document_ids, documents)
    centres = _unit_means(vectors, chosen[of_chunk], len(names))
    new = np.flatnonzero(chosen < 0)
    chosen[new] = _nearest(_unit_means(vectors, of_chunk, len(documents))[new], centres, np.arange(len(names)), config)
    return _as_topics(documents, chosen, [(name, ()) for name in names], "kept")


def refits(added: int | None, with_topic: int, config: TopicConfig = DEFAULT_TOPICS) -> bool:
    """Whether topics are found again after ``added`` documents came to a corpus where ``with_topic`` hold one:
    for the first topics, when the count is unknown (None), and when more than ``refit_share`` of them came;
    otherwise the topics stand and the new documents join them (:func:`keep_topics`).

    Why a tenth: finding topics again costs seconds to minutes as the corpus grows (UMAP over every chunk) and
    renames every topic, where joining costs a product of the new vectors with the topics' centres; a note edited
    or added in a vault of 10,000 must not cost the vault. Under a tenth new, nine in ten documents the topics were
    drawn from are still there, so their dense regions stand; a tenth of the corpus is ten times the smallest
    topic (``topic_share``), enough to hold a subject of its own, which only a new clustering finds.
    """
    return added is None or with_topic == 0 or added > config.refit_share * with_topic


def smallest_topic(documents: int, config: TopicConfig = DEFAULT_TOPICS) -> int:
    """The fewest documents a topic holds among ``documents``: ``min_topic_documents``, and ``topic_share`` of
    them in a large corpus.

    Why a share: HDBSCAN finds as many dense regions as it is allowed; with a smallest cluster of two notes,
    10,000 notes gave 1,006 topics of 3 to 20 notes, no list a person can choose a walk's scope from. A topic of
    at least 1% of the notes gives at most about a hundred, as BERTopic's users raise ``min_cluster_size`` with
    the corpus; under 200 notes the share is less than two notes and changes nothing.
    """
    return max(config.min_topic_documents, round(config.topic_share * documents))


def _clustering(document_ids: Sequence[str], documents: int, config: TopicConfig) -> ClusterConfig:
    """How the chunks are clustered: clusters of ``documents`` documents at least; from :data:`LARGE` chunks on,
    UMAP starts from a PCA layout and optimises it in 200 epochs.

    Why: a large corpus would otherwise wait a minute for its topics (10,000 notes' chunks, on a loaded machine:
    44 of UMAP's 60 s in the spectral start, 28 s in 500 epochs). The spectral start solves an eigenproblem for
    each part of the neighbour graph, and notes on many matters make many parts; PCA's start keeps the global
    structure as well (Kobak & Linderman 2021) in a fraction of a second. UMAP itself drops to 200 epochs above
    10,000 points, judging a large layout settled by then; 4,096 is where it starts treating data as large.
    """
    plain = ClusterConfig(min_cluster_size=_smallest_cluster(document_ids, documents, config), seed=config.seed)
    return replace(plain, epochs=200, init="pca") if len(document_ids) >= LARGE else plain


def _smallest_cluster(document_ids: Sequence[str], documents: int, config: TopicConfig) -> int:
    """The fewest chunks a cluster holds: ``documents`` documents of the usual length (the median), so a long
    note's own sections do not make a topic of their own.
    """
    per_document = float(np.median(list(Counter(document_ids).values())))
    return max(config.min_chunks, round(documents * per_document))


def _named(
    documents: list[str],
    of_chunk: np.ndarray,
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
    topic_of_chunk = _topic_of_chunks(clusters.labels)
    centres = _unit_means(vectors, topic_of_chunk, len(groups))
    means = _unit_means(vectors, of_chunk, len(documents))
    chosen = _most_chunks(of_chunk, topic_of_chunk, len(documents))
    noise = np.flatnonzero(chosen < 0)
    chosen[noise] = _nearest(means[noise], centres, np.arange(len(groups)), config)
    held = np.bincount(chosen[chosen >= 0], minlength=len(groups))
    small = (held > 0) & (held < smallest_topic(len(documents), config))
    if small.any():
        # a topic left with too few documents is theirs alone: they join the nearest topic that stands, if any
        moving = np.flatnonzero(np.isin(chosen, np.flatnonzero(small)))
        chosen[moving] = _nearest(means[moving], centres, np.flatnonzero(~small), config)
    return _as_topics(documents, chosen, names, clusters.method)


def _as_topics(
    documents: list[str], chosen: np.ndarray, names: list[tuple[str, tuple[str, ...]]], method: str
) -> Topics:
    """Each document's topic (an index into ``names``, -1: none) as :class:`Topics`; topics no document holds
    are left out.
    """
    members: list[list[str]] = [[] for _ in names]
    for document, index in zip(documents, chosen.tolist(), strict=True):
        if index >= 0:
            members[index].append(document)
    topics = [Topic(name, terms, tuple(held)) for (name, terms), held in zip(names, members, strict=True) if held]
    of_document = {
        d: None if index < 0 else names[index][0] for d, index in zip(documents, chosen.tolist(), strict=True)
    }
    return Topics(topics, of_document, method)


def _document_of_chunks(document_ids: Sequence[str], documents: list[str]) -> np.ndarray:
    """Each chunk's document as an index into ``documents``."""
    position = {document: index for index, document in enumerate(documents)}
    return np.array([position[d] for d in document_ids], dtype=np.int64)


def _topic_of_chunks(labels: np.ndarray) -> np.ndarray:
    """Each chunk's topic as an index into the clusters in label order (-1: noise)."""
    kept = np.unique(labels[labels >= 0])
    return np.where(labels >= 0, np.searchsorted(kept, labels), -1).astype(np.int64)


def _unit_means(vectors: np.ndarray, labels: np.ndarray, count: int) -> np.ndarray:
    """The unit mean of the rows of ``vectors`` of each label ``0 … count - 1`` (rows labelled -1 left out): a
    topic's centre, a document's direction.
    """
    rows = np.flatnonzero(labels >= 0)
    membership = sparse.csr_matrix((np.ones(len(rows), np.float32), (labels[rows], rows)), shape=(count, len(vectors)))
    sums = np.asarray(membership @ vectors)
    return sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)


def _most_chunks(of_chunk: np.ndarray, topic_of_chunk: np.ndarray, documents: int) -> np.ndarray:
    """Each document's topic: the one most of its chunks fall in, the first on a tie (-1: all its chunks are
    noise).
    """
    placed = topic_of_chunk >= 0
    pairs, votes = np.unique(np.stack([of_chunk[placed], topic_of_chunk[placed]], axis=1), axis=0, return_counts=True)
    order = np.lexsort((pairs[:, 1], -votes, pairs[:, 0]))  # by document, most votes first, then lowest topic
    first = order[np.r_[True, pairs[order[1:], 0] != pairs[order[:-1], 0]]] if len(order) else order
    chosen = np.full(documents, -1, dtype=np.int64)
    chosen[pairs[first, 0]] = pairs[first, 1]
    return chosen


def _nearest(means: np.ndarray, centres: np.ndarray, among: np.ndarray, config: TopicConfig) -> np.ndarray:
    """For each row of ``means`` (unit vectors), the topic of ``among`` whose centre is nearest, if at least
    ``join_similarity`` close (-1: none).
    """
    if not len(among) or not len(means):
        return np.full(len(means), -1, dtype=np.int64)
    similarity = means @ centres[among].T
    best = similarity.argmax(axis=1)
    close = similarity[np.arange(len(means)), best] >= config.join_similarity
    return np.where(close, among[best], -1).astype(np.int64)


_TERM = re.compile(r"[A-Za-z][a-z]+(?:-[a-z]+)*")


def topic_names(
    topics: Sequence[Sequence[str]], rest: Sequence[str] = (), config: TopicConfig = DEFAULT_TOPICS
) -> list[tuple[str, tuple[str, ...]]]:
    """Each topic's name and its best terms (:data:`RANKED_TERMS`, best first), by class-based TF-IDF over the
    texts of each topic against the others and ``rest`` (the chunks of no topic, which count as one more class);
    names are kept apart, a topic that would share another's taking one term more.

    Why one sparse matrix of counts (classes × terms, as BERTopic builds with scikit-learn's ``CountVectorizer``):
    a thousand topics of 10,000 chunks counted as a dictionary of every term each took seconds in Python loops;
    the matrix counts each chunk's words once and weighs every term of every class in a few array operations.

    Example::

        topic_names([["Create a new commit …", …], ["The list data type …", …]])
        # [("commit · branch", ("commit", "branch", …)), ("list · dictionary", ("list", …))]
    """
    counts, vocabulary = _class_counts([" ".join(texts) for texts in (*topics, rest)])
    total = np.asarray(counts.sum(axis=0)).ravel()
    average = float(total.sum()) / max(1, counts.shape[0])
    # BERTopic's weight: the term's frequency in the class times log(1 + average class size / its frequency)
    weights = sparse.csr_matrix(counts.multiply(np.log(1 + average / np.maximum(total, 1))[np.newaxis, :]))
    named: list[tuple[str, tuple[str, ...]]] = []
    for row in range(len(topics)):
        start, end = weights.indptr[row], weights.indptr[row + 1]
        columns, weight = weights.indices[start:end], weights.data[start:end]
        best = columns[np.lexsort((columns, -weight))[:RANKED_TERMS]]  # ties: the first term alphabetically
        ranked = tuple(vocabulary[column] for column in best)
        named.append((SEPARATOR.join(ranked[: config.terms]), ranked))
    return _apart(named, config)


def _class_counts(texts: list[str]) -> tuple[sparse.csr_matrix, list[str]]:
    """How often each term occurs in each of ``texts`` (one row each), each plural counted with its singular, and
    the terms by column (alphabetical).
    """
    from sklearn.feature_extraction.text import CountVectorizer  # a second to import; only naming needs it

    stop = function_words()

    def terms(text: str) -> list[str]:
        return [w for w in map(str.lower, _TERM.findall(text)) if len(w) > 2 and w not in stop]

    vectorizer = CountVectorizer(analyzer=terms)
    try:
        counts = sparse.csr_matrix(vectorizer.fit_transform(texts))
    except ValueError:  # no text holds a term
        return sparse.csr_matrix((len(texts), 0)), []
    words = list(vectorizer.get_feature_names_out())
    column = {word: index for index, word in enumerate(words)}
    folded = sorted({_singular(word, column) or word for word in words})
    into = {word: index for index, word in enumerate(folded)}
    fold = sparse.csr_matrix(
        (np.ones(len(words)), ([column[w] for w in words], [into[_singular(w, column) or w] for w in words])),
        shape=(len(words), len(folded)),
    )
    return sparse.csr_matrix(counts @ fold), folded


def _apart(named: list[tuple[str, tuple[str, ...]]], config: TopicConfig) -> list[tuple[str, tuple[str, ...]]]:
    """The names with each one shared by two topics made longer by a term, then numbered if still shared."""
    shared = {name for name, count in Counter(name for name, _ in named).items() if count > 1}
    longer = [
        (SEPARATOR.join(ranked[: config.terms + 1]) if name in shared else name, ranked) for name, ranked in named
    ]
    seen: Counter[str] = Counter()
    apart = []
    for name, ranked in longer:
        seen[name] += 1
        apart.append((name if seen[name] == 1 else f"{name} ({seen[name]})", ranked))
    return apart


def _singular(word: str, terms: Container[str]) -> str | None:
    """The singular of ``word`` when ``terms`` hold it too ("branches" → "branch", "lists" → "list"), or None."""
    if word.endswith(("ss", "us", "is")):  # "class", "status", "analysis": no plural's ending
        return None
    for ending, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(ending) and (stem := word[: -len(ending)] + replacement) in terms and len(stem) > 2:
            return stem
    return None
