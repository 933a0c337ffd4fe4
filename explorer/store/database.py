"""The one DuckDB file: connections, transactions, migrations.

Why short-lived connections: DuckDB lets only one process hold a read-write
connection to a file, and a second process's connect fails at once ("Could not
set lock on file"). The app and the CLI share one database, so every unit of
work opens a connection, does its work and closes it; a connect that meets the
lock is retried with backoff until ``lock_wait_s`` runs out, and then the user
gets one clear line (:class:`DatabaseBusy`), not a traceback.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from explorer.errors import ExplorerError, Remedy

Connection = duckdb.DuckDBPyConnection

_LOCK_MARKERS = ("Could not set lock", "Conflicting lock")


class StoreError(ExplorerError):
    """A database problem the user can act on; the message is one clear line."""


class DatabaseBusy(StoreError):
    """Another process held the database for longer than we were willing to wait."""


class SchemaMismatch(StoreError):
    """The database was made by another embedding model or a newer version."""


def _is_lock_error(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.IOException) and any(m in str(exc) for m in _LOCK_MARKERS)


def _migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every file in migrations/, in order."""
    found = []
    for entry in resources.files("explorer.store.migrations").iterdir():
        match = re.fullmatch(r"(\d{3})_(\w+)\.sql", entry.name)
        if match:
            found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found)


def latest_version() -> int:
    """The schema version this program writes: a file newer than it is refused rather than misread."""
    return _migrations()[-1][0]


def scalar(con: Connection, sql: str, params: Sequence[object] = ()) -> Any:
    """The single value an aggregate query returns (a count, a max): every such query yields exactly one row."""
    row = con.execute(sql, list(params)).fetchone()
    if row is None:
        raise StoreError(f"query returned no row: {sql}")
    return row[0]


class Database:
    """A DuckDB file, created and migrated on first use.

    ``embedding_model`` and ``embedding_dim`` describe the embedder the file is
    built for: vectors are stored as ``FLOAT[dim]`` arrays, so a file made with
    one model cannot silently take vectors of another.
    """

    def __init__(self, path: str | Path, *, embedding_model: str, embedding_dim: int, lock_wait_s: float = 15.0):
        self.path = Path(path)
        self.embedding_model = embedding_model
        self.embedding_dim = int(embedding_dim)
        self.lock_wait_s = lock_wait_s
        self._local = threading.local()
        self._migrated = False

    # -- connections -------------------------------------------------------

    def _open(self) -> Connection:
        deadline = time.monotonic() + self.lock_wait_s
        delay = 0.02
        while True:
            try:
                return duckdb.connect(str(self.path))
            except duckdb.IOException as exc:
                if not _is_lock_error(exc):
                    raise StoreError(f"cannot open database {self.path}: {exc}") from exc
                if time.monotonic() >= deadline:
                    holder = re.search(r"PID (\d+)", str(exc))
                    who = f" (process {holder[1]})" if holder else ""
                    raise DatabaseBusy(
                        f"database {self.path} is busy: another program{who} kept it locked for "
                        f"{self.lock_wait_s:.0f} s; try again, or raise EXPLORER_LOCK_WAIT"
                    ) from exc
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection for one unit of work; nested calls share the open one."""
        con = getattr(self._local, "con", None)
        if con is not None:
            yield con
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = self._open()
        self._local.con = con
        try:
            if not self._migrated:
                self._migrate(con)
            yield con
        finally:
            self._local.con = None
            con.close()

    @property
    def held(self) -> bool:
        """Whether this thread has the file open now (model calls must never run while it does)."""
        return getattr(self._local, "con", None) is not None

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """All of the block's writes, or none of them."""
        with self.connect() as con:
            if getattr(self._local, "in_tx", False):
                yield con
                return
            con.execute("BEGIN TRANSACTION")
            self._local.in_tx = True
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            else:
                con.execute("COMMIT")
            finally:
                self._local.in_tx = False

    # -- schema ------------------------------------------------------------

    def _migrate(self, con: Connection) -> None:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        current = int(scalar(con, "SELECT coalesce(max(version), 0) FROM schema_version"))
        pending = [m for m in _migrations() if m[0] > current]
        if current > latest_version():
            raise SchemaMismatch(
                f"database {self.path} has schema version {current}, newer than this program ({latest_version()}); "
                "upgrade Dream Explorer"
            )
        for version, name, sql in pending:
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(sql.replace("{dim}", str(self.embedding_dim)))
                con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [version, name])
                if version == 1:
                    con.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [["embedding_model", self.embedding_model], ["embedding_dim", str(self.embedding_dim)]],
                    )
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        self._check_embedding_model(con)
        self._migrated = True

    def _check_embedding_model(self, con: Connection) -> None:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if (
            meta.get("embedding_model") != self.embedding_model
            or int(meta.get("embedding_dim", 0)) != self.embedding_dim
        ):
            raise SchemaMismatch(
                f"database {self.path} was built with embeddings from {meta.get('embedding_model')} "
                f"({meta.get('embedding_dim')} dims), not {self.embedding_model} ({self.embedding_dim} dims)",
                remedy=Remedy.OTHER_DATABASE,
                subject=str(self.path),
            )

    def schema_version(self) -> int:
        """The migration the file stands at; asking opens and migrates the file, so it also proves the file usable."""
        with self.connect() as con:
            return int(scalar(con, "SELECT max(version) FROM schema_version"))
