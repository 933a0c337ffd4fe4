"""Wires settings to the database, the embedder and the model gateway.

Surfaces (CLI, app, benchmarks, tests) call :func:`open_runtime` once and hand
the pieces to the engine; nothing else in the engine reads settings.
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

import numpy as np

from explorer.offline import OfflineProvider
from explorer.offline.kit import OfflineKit
from explorer.prompts import check_answer_caps
from explorer.providers.deadline import Interrupter
from explorer.providers.embeddings import CachedEmbedder, Embedder, make_embedder
from explorer.providers.gateway import Gateway
from explorer.providers.structured import forms_file
from explorer.settings import Settings, SettingsError
from explorer.store import Connection, Store, StoreError, corpus, open_database
from explorer.store import calls as call_log

T = TypeVar("T")
C = TypeVar("C")


class Caches:
    """What the engine keeps in memory between calls, one of each kind per runtime.

    A kind is a class the engine area defines (Wander's corpus space and session memories, say) and constructs
    without arguments; it says itself when what it holds is stale. Kept on the runtime, a cache is dropped with
    it and never shared by two runtimes, whose databases may differ.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[type, object] = {}

    def of(self, kind: type[C]) -> C:
        """This runtime's ``kind``, made on first use."""
        with self._lock:
            if kind not in self._kept:
                self._kept[kind] = kind()
            return cast(C, self._kept[kind])


@dataclass
class Runtime:
    """Everything the engine needs, opened once per surface: the database, the embedder, the model gateway,
    the buffers that batch their writes and the caches that spare rereading the store.
    """

    settings: Settings
    db: Store
    embedder: Embedder
    gateway: Gateway
    calls: WriteBuffer[call_log.CallRecord]
    vectors: WriteBuffer[tuple[str, np.ndarray]]
    caches: Caches = field(default_factory=Caches)

    def flush(self) -> None:
        """Write what the buffers hold (call log, new embeddings)."""
        self.calls.flush()
        self.vectors.flush()


def open_runtime(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    completion_kwargs: dict[str, Any] | None = None,
    create: bool = True,
) -> Runtime:
    """Open the database, embedder and gateway the settings name, with the caches and call log wired in.

    ``embedder`` replaces the configured one (tests and benchmarks pass a fast one); ``completion_kwargs``
    are handed to litellm on every model call (tests use them for canned responses). With ``nats_url`` set,
    every event stored through this runtime is also published to that NATS server. ``create=False`` is for
    those that only read: a database file that does not exist is refused (:class:`DatabaseMissing`), not made.
    """
    if settings.answer_caps:  # checking them imports every prompt and its answer model: not for no caps
        try:
            check_answer_caps(settings.answer_caps)
        except ValueError as exc:
            raise SettingsError(f"setting answer_caps: {exc}") from exc
    requests = Interrupter()  # the embedder's and the gateway's: a cancel interrupts a remote embedding too
    inner = embedder or make_embedder(
        settings.embedding_model,
        settings.api_base,
        settings.timeout_s,
        retries=settings.retries,
        requests=requests,
        runtime=settings.embedding_runtime,
    )
    db = open_database(
        settings.db_path,
        embedding_model=inner.name,
        embedding_dim=inner.dim,
        lock_wait_s=settings.lock_wait_s,
        create=create,
    )

    def load(hashes: list[str]) -> dict[str, np.ndarray]:
        vectors.flush()
        with db.connect() as con:
            return corpus.cached_embeddings(con, inner.name, hashes)

    def stored_hashes() -> set[str]:
        with db.connect() as con:
            return corpus.cached_hashes(con, inner.name)

    vectors: WriteBuffer[tuple[str, np.ndarray]] = WriteBuffer(
        db, lambda con, items: corpus.cache_embeddings(con, inner.name, dict(items)), size=256
    )
    cached = CachedEmbedder(inner, load, lambda fresh: vectors.extend(fresh.items()), stored_hashes)
    calls: WriteBuffer[call_log.CallRecord] = WriteBuffer(db, call_log.log_calls)
    gateway = Gateway(
        settings,
        OfflineProvider(OfflineKit(cached, settings.seed)),
        log=calls.append,
        completion_kwargs=completion_kwargs,
        requests=requests,
        run_failures=(StoreError,),
        forms_cache=forms_file(settings.db_path),
    )
    runtime = Runtime(settings, db, cached, gateway, calls, vectors)
    if settings.nats_url:
        from explorer.nats_publisher import publish_events  # nats-py is imported only by those who publish

        publish_events(db, settings.nats_url)
    return runtime


class WriteBuffer(Generic[T]):
    """Writes rows in batches: a write per item would reopen the file each time.
    Flushed when it holds ``size`` items or is ``max_age_s`` old, when a surface
    calls :meth:`flush`, and at exit. Thread-safe: model calls in flight at once all log here.
    """

    def __init__(self, db: Store, write: Callable[[Connection, list[T]], None], size: int = 32, max_age_s: float = 2.0):
        self.db = db
        self.write = write
        self.size = size
        self.max_age_s = max_age_s
        self._pending: list[T] = []
        self._oldest = 0.0
        self._lock = threading.RLock()
        atexit.register(self.flush)

    def append(self, item: T) -> None:
        """Queue one row, written with the next batch."""
        self.extend([item])

    def extend(self, items: Iterable[T]) -> None:
        """Queue rows; the batch is written once it is full or old enough."""
        with self._lock:
            if not self._pending:
                self._oldest = time.monotonic()
            self._pending.extend(items)
            if len(self._pending) >= self.size or time.monotonic() - self._oldest >= self.max_age_s:
                self.flush()

    def flush(self) -> None:
        """Write what is queued now; rows that could not be written stay queued for the next try."""
        with self._lock:
            if not self._pending:
                return
            pending, self._pending = self._pending, []
            try:
                with self.db.transaction(fenced=False) as con:  # what was done stands, whoever ends the run
                    self.write(con, pending)
            except StoreError:
                if not sys.is_finalizing():
                    self._pending = pending + self._pending
                    raise
