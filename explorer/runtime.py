"""Wires settings to the database, the embedder and the model gateway.

Surfaces (CLI, app, benchmarks, tests) call :func:`open_runtime` once and hand
the pieces to the engine; nothing else in the engine reads settings.
"""

from __future__ import annotations

import atexit
import sys
import time
from dataclasses import dataclass
from typing import Any

from explorer.offline import OfflineProvider
from explorer.offline.kit import OfflineKit
from explorer.providers.embeddings import CachedEmbedder, Embedder, make_embedder
from explorer.providers.gateway import Gateway
from explorer.settings import Settings
from explorer.store import Database, StoreError
from explorer.store import calls as call_log
from explorer.store import corpus


@dataclass
class Runtime:
    settings: Settings
    db: Database
    embedder: Embedder
    gateway: Gateway
    calls: "CallLogBuffer"


def open_runtime(settings: Settings, *, embedder: Embedder | None = None,
                 completion_kwargs: dict[str, Any] | None = None) -> Runtime:
    inner = embedder or make_embedder(settings.embedding_model, settings.api_base, settings.timeout_s)
    db = Database(settings.db_path, embedding_model=inner.name, embedding_dim=inner.dim, lock_wait_s=settings.lock_wait_s)

    def load(hashes: list[str]):
        with db.connect() as con:
            return corpus.cached_embeddings(con, inner.name, hashes)

    def save(vectors):
        with db.transaction() as con:
            corpus.cache_embeddings(con, inner.name, vectors)

    cached = CachedEmbedder(inner, load, save)

    calls = CallLogBuffer(db)
    gateway = Gateway(settings, OfflineProvider(OfflineKit(cached, settings.seed)), log=calls.append,
                      completion_kwargs=completion_kwargs)
    return Runtime(settings, db, cached, gateway, calls)


class CallLogBuffer:
    """Writes call records in batches: a write per call would reopen the file
    for every prompt. Flushed when it holds ``size`` records or is ``max_age_s``
    old, when a surface calls :meth:`flush`, and at exit."""

    def __init__(self, db: Database, size: int = 32, max_age_s: float = 2.0):
        self.db = db
        self.size = size
        self.max_age_s = max_age_s
        self._pending: list[call_log.CallRecord] = []
        self._oldest = 0.0
        atexit.register(self.flush)

    def append(self, record: call_log.CallRecord) -> None:
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append(record)
        if len(self._pending) >= self.size or time.monotonic() - self._oldest >= self.max_age_s:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        try:
            with self.db.transaction() as con:
                call_log.log_calls(con, pending)
        except StoreError:
            if not sys.is_finalizing():
                self._pending = pending + self._pending
                raise
