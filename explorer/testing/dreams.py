"""A dream as the REM cycle stores one, for tests that need a dream to show or link to without dreaming it: what REM
dreams over a corpus is the dreaming tests' concern, and over the test corpora it may dream nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from explorer.providers.embeddings import Embedder
from explorer.records import Node


def dream_node(embedder: Embedder, text: str, question: str, parents: Sequence[Node], confidence: float = 0.7) -> Node:
    """A ``rem_dream`` node dreamt from ``parents`` (dated as the first), answering ``question`` with ``text``."""
    return Node(
        type="rem_dream",
        text=text,
        year=parents[0].year,
        generation=1,
        parent_ids=[p.id for p in parents],
        confidence=confidence,
        metadata={"question": question, "model": "offline-extractive"},
        embedding=embedder.embed([text])[0],
    )
