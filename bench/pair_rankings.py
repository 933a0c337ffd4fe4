"""How far a ranking of pairs by content alone can go on the bridges benchmark: the ceiling a mechanism meets.

    python -m bench.pair_rankings [--variant explicit|implicit] [--data DIR]

Every discovery mechanism proposes pairs of entries; the bridges benchmark compares
them with the top *n* cross-domain pairs by MiniLM cosine at the same count. A
mechanism that draws on content only cannot beat the best content-only ranking of
*all* pairs, so this prints the precision at *n* and the lift over cosine of the
rankings tried (each over every cross-domain pair of the entries, not a part of them):

- cosine: the anchor itself;
- hybrid: cosine plus the cosine of TF-IDF terms (:mod:`explorer.affinity`, what dreams and exploration rank by);
- CSLS: the hybrid corrected for hubness (each entry's mean similarity to its *k* nearest taken off,
  as bilingual lexicon induction does);
- mutual rank: how high each entry ranks the other;
- shared neighbours: the hybrid plus the number of nearest neighbours two entries share;
- best sentence: late interaction, each entry's sentence closest to the other entry as a whole (a reference sits
  in one sentence, which the whole text's embedding dilutes), both ways averaged, plus the terms' cosine;
- domain-centred: the hybrid over embeddings with half their domain's mean taken off (what domains share is not
  what links two entries of different domains).

The counts run from a dozen (what exploration and crystals propose) to 500: at a dozen the anchor's top pairs are
near-synonyms, which only cosine itself ranks first.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.bridges import DEV, Entry, load_entries, load_truth
from explorer.affinity import term_vectors
from explorer.providers.embeddings import LocalEmbedder
from explorer.text import split_sentences

COUNTS = (12, 25, 50, 75, 100, 150, 200, 250, 300, 500)
NEIGHBOURS = 10


def _without_self(scores: np.ndarray) -> np.ndarray:
    scores = scores.copy()
    np.fill_diagonal(scores, -np.inf)
    return scores


def csls(scores: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """``2·s(a, b) − r(a) − r(b)``, r an entry's mean score to its ``k`` nearest."""
    r = np.sort(_without_self(scores), axis=1)[:, -k:].mean(axis=1)
    return 2 * scores - r[:, None] - r[None, :]


def mutual_rank(scores: np.ndarray) -> np.ndarray:
    """Minus the sum of the ranks each entry gives the other (0 is the best)."""
    ranks = np.argsort(np.argsort(-_without_self(scores), axis=1), axis=1)
    return -(ranks + ranks.T).astype(np.float64)


def shared_neighbours(scores: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """The score, plus a tenth of the number of ``k`` nearest neighbours the two entries share."""
    nearest = np.argsort(-_without_self(scores), axis=1)[:, :k]
    graph = np.zeros_like(scores)
    graph[np.repeat(np.arange(len(scores)), k), nearest.ravel()] = 1.0
    return scores + 0.1 * (graph @ graph.T)


def best_sentence(entries: list[Entry], vectors: np.ndarray, embedder: LocalEmbedder) -> np.ndarray:
    """``s[a, b]``: the cosine of ``a``'s sentence closest to ``b``'s whole text, averaged with ``s[b, a]``."""
    owners, sentences = [], []
    for row, entry in enumerate(entries):
        for sentence in split_sentences(entry.text):
            owners.append(row)
            sentences.append(f"{entry.title}: {sentence}")
    to_texts = embedder.embed(sentences) @ vectors.T
    best = vectors @ vectors.T  # an entry with no sentence keeps its whole text's cosine
    owner = np.array(owners)
    for row in np.unique(owner):
        best[row] = to_texts[owner == row].max(axis=0)
    return (best + best.T) / 2


def domain_centred(entries: list[Entry], vectors: np.ndarray, share: float = 0.5) -> np.ndarray:
    """Cosines after taking ``share`` of its domain's mean vector off each embedding."""
    domains = np.array([e.domain for e in entries])
    centred = vectors.copy()
    for domain in np.unique(domains):
        members = domains == domain
        centred[members] -= share * vectors[members].mean(axis=0)
    centred /= np.linalg.norm(centred, axis=1, keepdims=True)
    return centred @ centred.T


def main() -> None:
    """Print each ranking's precision at each count, and its lift over cosine."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=("explicit", "implicit"), default="implicit")
    parser.add_argument("--data", type=Path, default=DEV, help="a folder laid out as bridges-dev")
    args = parser.parse_args()
    entries, truth = load_entries(args.data, args.variant), load_truth(args.data)
    texts = [f"{e.title}: {e.text}" for e in entries]
    embedder = LocalEmbedder()
    vectors = embedder.embed(texts)
    cosine = vectors @ vectors.T
    terms, _ = term_vectors(texts)
    shared_terms = (terms @ terms.T).toarray()
    hybrid = cosine + shared_terms
    rows, cols = np.triu_indices(len(entries), 1)
    cross = np.array([entries[i].domain != entries[j].domain for i, j in zip(rows, cols, strict=True)])
    rows, cols = rows[cross], cols[cross]
    hit = np.array([frozenset((entries[i].title, entries[j].title)) in truth for i, j in zip(rows, cols, strict=True)])

    def precision(scores: np.ndarray) -> list[float]:
        order = np.argsort(-scores[rows, cols], kind="stable")
        return [float(hit[order[:n]].mean()) for n in COUNTS]

    rankings: dict[str, Callable[[], np.ndarray]] = {
        "cosine": lambda: cosine,
        "hybrid": lambda: hybrid,
        "CSLS (hybrid)": lambda: csls(hybrid),
        "mutual rank (hybrid)": lambda: mutual_rank(hybrid),
        "shared neighbours": lambda: shared_neighbours(hybrid),
        "best sentence + terms": lambda: best_sentence(entries, vectors, embedder) + shared_terms,
        "domain-centred hybrid": lambda: domain_centred(entries, vectors) + shared_terms,
    }
    anchor = precision(cosine)
    print(f"{args.variant}: {len(entries)} entries, {int(hit.sum())} true pairs of {len(hit)} cross-domain pairs")
    print(f"  {'n':<24}" + "".join(f"{n:>7}" for n in COUNTS))
    print(f"  {'precision of cosine':<24}" + "".join(f"{p:7.2f}" for p in anchor))
    print("  lift over cosine at n")
    for name, ranking in rankings.items():
        found = precision(ranking())
        print(f"  {name:<24}" + "".join(f"{p / a:6.2f}x" for p, a in zip(found, anchor, strict=True)))


if __name__ == "__main__":
    main()
