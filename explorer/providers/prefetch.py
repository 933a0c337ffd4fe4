"""Embedding ahead: the texts a run will ask for, embedded in order on a thread while the run works on those
before them, so reading, placing and writing overlap the model instead of waiting for it.

Why a thread is enough: the model's work (torch's or ONNX Runtime's kernels, the Rust tokenizer) runs outside
the GIL, so the run's own Python (linking, writing rows) goes on beside it; a batch of notes takes the model
about as long as everything else takes for the batch before, and the two no longer add up.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from explorer.providers.embeddings import Embedder

AHEAD_BATCH = 64  # texts the model embeds at once: no cheaper per text when larger, and the count moves


class Prefetcher:
    """An :class:`~explorer.providers.embeddings.Embedder` over ``inner`` that has started embedding ``ahead``
    (in order, :data:`AHEAD_BATCH` at a time, on its own thread); asked for a text among them, it waits for
    that text's batch, and any other text it embeds at once. Use it as a context manager: leaving stops the
    thread after its current batch. A failure of the model ahead is raised to whoever waits for its texts. The
    model is asked by one thread at a time (the cache in front of it is not made for two).

    Example::

        with Prefetcher(runtime.embedder, chunk_texts) as embedder:
            read_documents(batch, known=known, embedder=embedder, gateway=gateway)  # waits only for its own
    """

    def __init__(self, inner: Embedder, ahead: Sequence[str]):
        self.inner = inner
        self.name = inner.name
        self._ahead = list(dict.fromkeys(ahead))
        self._known = set(self._ahead)
        self._vectors: dict[str, np.ndarray] = {}
        self._failure: BaseException | None = None
        self._ready = threading.Condition()
        self._stop = threading.Event()
        self._model = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="embedding ahead", daemon=True)

    @property
    def dim(self) -> int:
        """The inner model's width."""
        return self.inner.dim

    def __enter__(self) -> Prefetcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit rows of ``texts``: those embedded ahead when their turn has come, the others now."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        others = [text for text in dict.fromkeys(texts) if text not in self._known]
        now = dict(zip(others, self._embed(others), strict=True)) if others else {}
        ready = [text for text in texts if text not in now]
        with self._ready:
            self._ready.wait_for(lambda: self._failure is not None or all(t in self._vectors for t in ready))
            if not all(t in self._vectors for t in ready):
                assert self._failure is not None
                raise self._failure
            return np.vstack([now[t] if t in now else self._vectors[t] for t in texts])

    def _run(self) -> None:
        try:
            for start in range(0, len(self._ahead), AHEAD_BATCH):
                if self._stop.is_set():
                    return
                part = self._ahead[start : start + AHEAD_BATCH]
                vectors = self._embed(part)
                with self._ready:
                    self._vectors.update(zip(part, vectors, strict=True))
                    self._ready.notify_all()
        except BaseException as exc:  # the waiting run raises it: a model that fails ahead fails the run
            with self._ready:
                self._failure = exc
                self._ready.notify_all()

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._model:
            return self.inner.embed(texts)
