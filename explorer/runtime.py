"""Wires settings to the database, the embedder and the model gateway.

Surfaces (CLI, app, benchmarks, tests) call :func:`open_runtime` once and hand
the pieces to the engine; nothing else in the engine reads settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.offline import OfflineProvider
from explorer.offline.kit import OfflineKit
from explorer.providers.embeddings import CachedEmbedder, Embedder, make_embedder
from explorer.providers.gateway import Gateway
from explorer.settings import Settings
from explorer.store import Database
from explorer.store import calls as call_log
from explorer.store import corpus


@dataclass
class Runtime:
    settings: Settings
    db: Database
    embedder: Embedder
    gateway: Gateway


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

    def log(record: call_log.CallRecord) -> None:
        with db.transaction() as con:
            call_log.log_calls(con, [record])

    gateway = Gateway(settings, OfflineProvider(OfflineKit(cached, settings.seed)), log=log,
                      completion_kwargs=completion_kwargs)
    return Runtime(settings, db, cached, gateway)
