"""A large corpus that looks like a real one, for ``bench.scale``: ``n`` nodes whose vectors lie where
all-MiniLM-L6-v2 puts real text.

Why not random vectors: random unit vectors, clustered or not, have neighbours that are all alike (every point of a
cluster nearly as far as any other), which makes an approximate index look worse than it is on text and a walk
wander without direction. Why not embedding 100k real chunks: the sample corpus has about 1,500, and embedding
100k texts would take the bench's whole time. So the sample corpus's chunks are embedded by the product's default
model, and each synthetic node is a point between a chunk and one of its ten nearest chunks, moved by a little
noise: the vectors fill in the real ones' neighbourhoods, as a larger corpus on the same subjects would, and each
node's text is the text of the chunk it is nearest to.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from explorer.providers.embeddings import Embedder
from explorer.reading.chunker import chunk_text
from explorer.reading.discovery import Found, expand_paths
from explorer.reading.loaders import SourceText, load_file
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store.dialect import dialect

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
PARTNERS = 10  # a node lies between a chunk and one of its this many nearest chunks
NOISE = 0.1  # length of the noise added to each node's vector (a unit vector's is 1): nearby, not a copy


@dataclass(frozen=True)
class Corpus:
    """Node texts, their unit vectors (rows, float32) and each node's id, in the same order."""

    texts: list[str]
    vectors: np.ndarray

    @property
    def ids(self) -> list[str]:
        """Made from the row number, so a row found by a query is known by its id."""
        return [node_id(row) for row in range(len(self.texts))]


def node_id(row: int) -> str:
    """The synthetic node's UUID for a row."""
    return f"{row:08x}-0000-4000-8000-000000000000"


def row_of(node: str) -> int:
    """The row of a synthetic node's id."""
    return int(str(node)[:8], 16)


def chunks_of(folder: Path) -> list[str]:
    """Every chunk reading would make of the folder's documents."""
    texts = []
    for item in expand_paths([folder]):
        if isinstance(item, Found):
            for source in load_file(item.path):
                if isinstance(source, SourceText):
                    texts += chunk_text(source.text)
    return texts


def sample_chunks(embedder: Embedder) -> Corpus:
    """Every chunk reading makes of the sample corpus, embedded."""
    texts = chunks_of(SAMPLE)
    return Corpus(texts, embedder.embed(texts).astype(np.float32))


def synthetic(chunks: Corpus, n: int, seed: int = 0) -> Corpus:
    """``n`` nodes between neighbouring chunks (see the module's note)."""
    rng = np.random.default_rng(seed)
    sims = chunks.vectors @ chunks.vectors.T
    np.fill_diagonal(sims, -np.inf)
    partners = np.argsort(-sims, axis=1)[:, :PARTNERS]
    base = rng.integers(0, len(chunks.texts), n)
    other = partners[base, rng.integers(0, PARTNERS, n)]
    share = rng.uniform(0.5, 1.0, (n, 1)).astype(np.float32)  # nearer its base chunk, whose text it takes
    noise = rng.normal(size=(n, chunks.vectors.shape[1])).astype(np.float32)
    noise *= NOISE / np.linalg.norm(noise, axis=1, keepdims=True)
    vectors = share * chunks.vectors[base] + (1 - share) * chunks.vectors[other] + noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return Corpus([chunks.texts[b] for b in base], vectors.astype(np.float32))


def write_file(path: Path, corpus: Corpus, embedder: Embedder) -> None:
    """A new database file holding the corpus's nodes, written in bulk as `explorer db copy` writes (a row at a time
    would take minutes).
    """
    runtime = open_runtime(replace(Settings(), db_path=path, embedding_model=embedder.name), embedder=embedder)
    rows = [
        (node, "raw_chunk", text, vector, "python")
        for node, text, vector in zip(corpus.ids, corpus.texts, corpus.vectors, strict=True)
    ]
    with runtime.db.transaction() as con:
        dialect(con).write_rows(con, "nodes", ["id", "type", "text", "embedding", "domain"], rows)
    runtime.db.checkpoint()
    runtime.db.close()
