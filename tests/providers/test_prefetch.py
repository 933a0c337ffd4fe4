"""Embedding ahead gives the rows the model gives, whichever text is asked first, and a model that fails ahead
fails whoever waits for its texts (never a hang, never a wrong row).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from explorer.providers.embeddings import HashingEmbedder
from explorer.providers.prefetch import AHEAD_BATCH, Prefetcher

TEXTS = [f"note {i} on garbage collection and reference counting, part {i % 7}" for i in range(3 * AHEAD_BATCH + 5)]


class Counting(HashingEmbedder):
    """The hashing embedder, counting the texts it was asked for and by which threads."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []
        self.threads: set[str] = set()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.asked += texts
        self.threads.add(threading.current_thread().name)
        return super().embed(texts)


def test_rows_are_the_models_and_each_text_is_embedded_once() -> None:
    model = Counting()
    with Prefetcher(model, TEXTS) as embedder:
        last = embedder.embed(TEXTS[-3:])  # asked out of order: waits for its batch
        other = embedder.embed(["a text nobody said would come"])
        rows = embedder.embed(TEXTS)
    assert np.array_equal(rows, HashingEmbedder().embed(TEXTS))
    assert np.array_equal(last, rows[-3:]) and np.array_equal(
        other, HashingEmbedder().embed(["a text nobody said would come"])
    )
    assert sorted(model.asked) == sorted([*TEXTS, "a text nobody said would come"])
    assert "embedding ahead" in model.threads


class Failing(HashingEmbedder):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if TEXTS[AHEAD_BATCH] in texts:
            raise RuntimeError("the model fell over")
        return super().embed(texts)


def test_a_failure_ahead_reaches_whoever_waits_for_its_texts() -> None:
    with Prefetcher(Failing(), TEXTS) as embedder:
        assert embedder.embed(TEXTS[:2]).shape == (2, 384)  # the first batch was embedded
        with pytest.raises(RuntimeError, match="the model fell over"):
            embedder.embed(TEXTS[AHEAD_BATCH : AHEAD_BATCH + 1])
