"""Text tools the offline provider derives its answers from.

Nothing here invents content: every phrase it returns is a keyphrase found in
the input (YAKE), a sentence of the input (chosen by embedding similarity), or a
fixed connective that says how the pieces relate.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from explorer.providers.embeddings import Embedder
from explorer.text import split_sentences


class OfflineKit:
    """Embedding-backed helpers, seeded so that answers are reproducible."""

    def __init__(self, embedder: Embedder, seed: int = 0):
        self.embedder = embedder
        self.seed = seed

    def rng(self, *salt: object) -> random.Random:
        """A generator seeded by the provider seed and the content being answered."""
        return random.Random(f"{self.seed}|" + "|".join(map(str, salt)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors from the product's own embedder, so offline answers rank by the meaning the map shows."""
        return self.embedder.embed(list(texts))

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix between two lists of texts."""
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        return self.embed(a) @ self.embed(b).T

    def central_sentences(self, texts: Sequence[str], k: int = 2, focus: str | None = None) -> list[str]:
        """The ``k`` sentences of ``texts`` closest to their centroid (or to ``focus``), in reading order."""
        sentences = [s for t in texts for s in split_sentences(t) if len(s.split()) >= 4]
        if len(sentences) <= k:
            return sentences
        vectors = self.embed(sentences)
        target = self.embed([focus])[0] if focus else vectors.mean(axis=0)
        best = sorted(np.argsort(-(vectors @ target))[:k])
        return [sentences[i] for i in best]

    def closest_pair(self, left: Sequence[str], right: Sequence[str]) -> tuple[int, int, float]:
        """Indices and similarity of the most similar (left, right) pair."""
        sims = self.similarity(left, right)
        i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
        return int(i), int(j), float(sims[i, j])
