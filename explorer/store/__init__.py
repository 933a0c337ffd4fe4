"""The storage layer: the only place in the product that speaks SQL.

A database is a DuckDB file (:class:`Database`, the embedded default) or a PostgreSQL server with pgvector
(:class:`~explorer.store.postgres.PostgresDatabase`, a team's shared store); :func:`open_database` picks by
what ``EXPLORER_DB`` names. Both own their connections and schema; the modules beside them hold the queries for
one part of the product each (``corpus``, ``events``, ``calls`` …), as functions that take a connection and
typed records, written once for both (:mod:`explorer.store.dialect`).
"""

from __future__ import annotations

from pathlib import Path

from explorer.settings import is_server_url, shown_location
from explorer.store.database import Connection, Database, DatabaseBusy, SchemaMismatch, Store, StoreError

__all__ = ["Connection", "Database", "DatabaseBusy", "SchemaMismatch", "Store", "StoreError", "open_database"]


def open_database(
    location: str | Path,
    *,
    embedding_model: str,
    embedding_dim: int,
    lock_wait_s: float = 15.0,
    create: bool = True,
) -> Store:
    """The database ``location`` names: a ``postgresql://`` URL is a PostgreSQL server, anything else a file.

    Example::

        db = open_database("postgresql://ana@db.lan/kb", embedding_model="all-MiniLM-L6-v2", embedding_dim=384)
        db.schema_version()  # opening migrates a new database
    """
    if not is_server_url(location):
        return Database(
            location,
            embedding_model=embedding_model,
            embedding_dim=embedding_dim,
            lock_wait_s=lock_wait_s,
            create=create,
        )
    try:
        from explorer.store.postgres import PostgresDatabase
    except ImportError as exc:  # psycopg and pgvector come with the postgres extra
        raise StoreError(
            f"cannot use {shown_location(location)}: PostgreSQL support is not installed "
            "(pip install 'dream-explorer[postgres]')"
        ) from exc
    return PostgresDatabase(
        str(location),
        embedding_model=embedding_model,
        embedding_dim=embedding_dim,
        lock_wait_s=lock_wait_s,
        create=create,
    )
