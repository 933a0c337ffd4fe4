"""PostgreSQL with pgvector: the store a team shares, beside the embedded DuckDB file.

``EXPLORER_DB=postgresql://user:pass@host:5432/dbname`` selects it (:func:`explorer.store.open_database`). The
store's modules speak to it through the same functions as to the file: a :class:`PgConnection` behaves as a
DuckDB connection does where they use one (``execute`` with ``?`` placeholders returns the connection, then
``fetchall``/``fetchone``), and carries the :class:`PgDialect` for what is said differently (the ``vector``
type, its cosine distance, columns as NumPy arrays).

Why a pool and no turns: PostgreSQL admits many writers, so processes on many machines work at once; each unit
of work borrows a connection for as long as it reads or writes (never while a model thinks: read → think →
write) and gives it back. Why autocommit outside :meth:`PostgresDatabase.transaction`: a statement alone commits
at once, as on the file, so no transaction stays open between units of work.

Migrations come from ``migrations/postgres/`` (the same numbers as the file's), applied under an advisory lock so
two processes opening a new database at once do not both migrate it.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import psycopg
from psycopg import errors as pg_errors
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool, PoolTimeout

from explorer.errors import Remedy
from explorer.settings import shown_location, without_password
from explorer.store.database import (
    DatabaseBusy,
    DatabaseFailure,
    DatabaseMissing,
    DatabaseUnavailable,
    StoreError,
    UnitsOfWork,
    WriteConflict,
    apply_migration,
    check_embedding_model,
    migrations,
    too_new,
)
from explorer.store.dialect import insert_vector_rows
from explorer.store.postgres_bulk import PgBulk

MIGRATIONS = "explorer.store.migrations.postgres"
# Candidates an HNSW search keeps (pgvector's default is 40). `python -m bench.recall`, all-MiniLM-L6-v2 chunks:
# recall@10 against exact search 1.000 on the sample corpus and 0.994 on the bridges set from 20 on, 0.6-1.6 ms a
# query; 100 leaves room for the larger corpora where recall falls, at a millisecond.
EF_SEARCH = 100
_MIGRATION_LOCK = 0x45585044  # pg_advisory_xact_lock key: "EXPD"
_CONFLICTS = (
    pg_errors.UniqueViolation,
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.LockNotAvailable,
)


@functools.lru_cache(maxsize=4096)
def _placeholders(sql: str) -> str:
    """DuckDB's ``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled first)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgDialect(PgBulk):
    """PostgreSQL's side of :class:`explorer.store.dialect.Dialect`."""

    name = "postgres"
    row_lock = " FOR UPDATE"
    corpus_version = "SELECT version FROM corpus_changes"
    corpus_edited = None  # the triggers of migration 015 count every change of a node's or document's domain

    def vector(self, dim: int) -> str:
        """The ``vector`` type of pgvector."""
        return f"vector({int(dim)})"

    def distance(self, column: str, parameter: str) -> str:
        """Pgvector's cosine distance, ``<=>``: the operator its HNSW index serves."""
        return f"({column} <=> {parameter})"

    def fetch_numpy(self, con: Any, sql: str, parameters: Sequence[object] = ()) -> dict[str, np.ndarray]:
        """The rows fetched, turned into columns."""
        return _columns(con.execute(sql, list(parameters)).cursor)

    # Multi-row INSERTs, each vector a list of floats (pgvector and ``real[]`` both take one on the way in).
    insert_vectors = staticmethod(insert_vector_rows)


def _columns(cursor: psycopg.Cursor[Any]) -> dict[str, np.ndarray]:
    """The rest of a statement's rows as NumPy columns by name, as DuckDB's ``fetchnumpy`` gives them (a vector
    column: an object array holding one array a row).
    """
    names = [column.name for column in cursor.description or []]
    rows = cursor.fetchall()
    columns: dict[str, np.ndarray] = {}
    for index, name in enumerate(names):
        values = [row[index] for row in rows]
        if any(isinstance(value, (list, tuple, np.ndarray)) for value in values):
            column = np.empty(len(values), dtype=object)  # one item a row, whatever each holds (lists vary)
            for row, value in enumerate(values):
                column[row] = value
            columns[name] = column
        else:
            columns[name] = np.array(values)
    return columns


DIALECT = PgDialect()


class PgConnection:
    """A pooled psycopg connection as the store's functions use a DuckDB one (see the module's note)."""

    dialect = DIALECT

    def __init__(self, raw: psycopg.Connection[Any]):
        self.raw = raw
        self.cursor = raw.cursor()

    def execute(self, sql: str, parameters: Sequence[object] | None = None) -> PgConnection:
        """Run one statement (``?`` placeholders); the connection, to fetch its rows from."""
        if parameters is None:  # no placeholders to fill: the text as written (a migration's statements)
            self.cursor.execute(sql)
        else:
            self.cursor.execute(_placeholders(sql), [_storable(value) for value in parameters])
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> PgConnection:
        """Run one statement for each row of parameters."""
        self.cursor.executemany(_placeholders(sql), [[_storable(value) for value in row] for row in rows])
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        """The last statement's rows."""
        return self.cursor.fetchall()

    def fetchone(self) -> tuple[Any, ...] | None:
        """The last statement's next row."""
        return self.cursor.fetchone()

    def fetchnumpy(self) -> dict[str, np.ndarray]:
        """The last statement's rows as columns, as DuckDB's ``fetchnumpy`` gives them."""
        return _columns(self.cursor)


def _storable(value: object) -> object:
    """A value as PostgreSQL can hold it: its text types refuse the NUL character, which DuckDB keeps, so a NUL in
    a name or a document (a paste, a fuzzer) becomes U+FFFD, the replacement character, rather than a failure.
    """
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, list):
        return [_storable(item) for item in value]
    return value


def _lost_server(exc: psycopg.Error) -> bool:
    """Whether the error says the server is away rather than that it refused the statement: the client's own
    connection errors carry no SQLSTATE; the server's say class 08 (connection exception) or 57P (shut down,
    crashed, not accepting connections yet).
    """
    return isinstance(exc, psycopg.OperationalError) and (exc.sqlstate is None or exc.sqlstate[:3] in ("57P", "08"))


def store_error(exc: psycopg.Error) -> Exception:
    """What psycopg's exception means, as the store says it (:func:`explorer.store.database.store_error`)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, _CONFLICTS):
        return WriteConflict(f"another process or request wrote the same data at the same time ({first}); try again")
    if _lost_server(exc):
        return DatabaseUnavailable(f"the database server cannot be reached now ({first}); nothing was kept")
    return DatabaseFailure(f"the database refused this: {first}")


@contextmanager
def _in_store_words() -> Iterator[None]:
    try:
        yield
    except psycopg.Error as exc:
        raise store_error(exc) from exc


class _VectorText(Loader):
    """pgvector's text form, ``[1,2,3]``, as a float32 array (a vector is written as a plain list of floats,
    which pgvector casts on the way in, so no dumper is needed).
    """

    format = Format.TEXT

    def load(self, data: Buffer) -> np.ndarray:
        return np.array(bytes(data)[1:-1].split(b","), dtype=np.float32)


class _VectorBinary(Loader):
    """pgvector's binary form: two 16-bit counts, then big-endian float32s."""

    format = Format.BINARY

    def load(self, data: Buffer) -> np.ndarray:
        return np.frombuffer(bytes(data), dtype=">f4", offset=4).astype(np.float32)


def _text_json(data: str | bytes) -> str:
    """JSON columns as their text, as DuckDB returns them (the store parses what it needs)."""
    return data.decode() if isinstance(data, bytes) else data


class PostgresDatabase(UnitsOfWork):
    """A PostgreSQL database with pgvector, created (migrated) on first use; see the module's note.

    ``path`` is a folder of this machine for what the store keeps beside a database (a worker's log, the app's
    uploads), named after the server and database; ``location`` is the URL as it may be shown.
    """

    dialect = DIALECT

    def __init__(
        self,
        url: str,
        *,
        embedding_model: str,
        embedding_dim: int,
        lock_wait_s: float = 15.0,
        create: bool = True,
        pool_size: int = 10,
        beside: Path | None = None,
    ):
        super().__init__()
        self.url = url
        self.location = shown_location(url)
        self.create = create
        self.embedding_model = embedding_model
        self.embedding_dim = int(embedding_dim)
        self.lock_wait_s = lock_wait_s
        self.pool_size = pool_size
        parts = urlsplit(url)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{parts.hostname or 'local'}-{parts.path.strip('/') or 'postgres'}")
        self.path = (beside or Path.home() / ".local" / "share" / "dream-explorer") / f"postgres-{name}"
        self._pool: ConnectionPool | None = None
        self._opening = threading.Lock()

    # -- connections -------------------------------------------------------

    def _open(self) -> ConnectionPool:
        """Migrate the database (once per process), then start the pool of connections to it."""
        with self._opening:
            if self._pool is None:
                self._migrate()
                self._pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self.pool_size,
                    kwargs={"autocommit": True},
                    configure=self._configure,
                    # a connection the server dropped (a restart) is found out before it is lent, not by the
                    # first statement of whoever borrowed it
                    check=ConnectionPool.check_connection,
                    open=True,
                    name="explorer",
                )
            return self._pool

    def _configure(self, raw: psycopg.Connection[Any]) -> None:
        info = TypeInfo.fetch(raw, "vector")
        if info is not None:  # pgvector is there (its migration made sure): vectors come back as NumPy arrays
            raw.adapters.register_loader(info.oid, _VectorText)
            raw.adapters.register_loader(info.oid, _VectorBinary)
        set_json_loads(_text_json, raw)
        raw.execute("SELECT set_config('lock_timeout', %s, false)", [f"{int(self.lock_wait_s * 1000)}ms"])
        raw.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(EF_SEARCH)])

    def _connect_once(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, int(self.lock_wait_s)))
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:  # unreachable, or a URL libpq cannot read
            first = (str(exc).strip().splitlines() or ["no answer"])[0]
            raise StoreError(f"cannot open database {self.location}: {without_password(first, self.url)}") from exc

    @contextmanager
    def connect(self, *, checkpoint: bool = True) -> Iterator[PgConnection]:
        """A connection for one unit of work, borrowed from the pool; nested calls share it. ``checkpoint`` is
        the file's concern (PostgreSQL has nothing to fold), taken for the same call to work on both.
        """
        con = getattr(self._local, "con", None)
        if con is not None:
            with _in_store_words():
                yield con
            return
        pool = self._open()
        raw, pooled = self._borrow(pool)
        self._local.committed = []
        con = PgConnection(raw)
        self._enter(con)
        try:
            with _in_store_words():
                yield con
        finally:
            self._leave(con)
            con.cursor.close()
            if pooled:
                pool.putconn(raw)
            else:
                raw.close()
            self._announce()

    def _borrow(self, pool: ConnectionPool) -> tuple[psycopg.Connection[Any], bool]:
        """A connection for a unit of work, and whether it is the pool's, within :attr:`lock_wait_s`.

        Why not only the pool's: after the server restarts, the pool finds its connections broken and makes new
        ones with a growing backoff (1, 2, 4, 8 s …), so it may lend none for seconds after the server is back;
        a worker's job waiting on it failed although nothing was wrong any more. So while the pool holds fewer
        connections than it may (it is reconnecting, not busy), a connection of the unit's own is made instead.
        """
        deadline = time.monotonic() + self.lock_wait_s
        while True:
            try:
                return pool.getconn(timeout=max(0.05, min(1.0, deadline - time.monotonic()))), True
            except PoolTimeout as exc:
                reconnecting = pool.get_stats().get("pool_size", 0) < self.pool_size
                if reconnecting:
                    try:
                        raw = psycopg.connect(self.url, autocommit=True, connect_timeout=2)
                    except psycopg.Error:
                        pass
                    else:
                        self._configure(raw)
                        return raw, False
                if time.monotonic() < deadline:
                    continue
                if reconnecting:
                    raise DatabaseUnavailable(
                        f"the database server of {self.location} cannot be reached now; nothing was done"
                    ) from exc
                raise DatabaseBusy(
                    f"database {self.location} is busy: no connection came free in {self.lock_wait_s:.0f} s; try "
                    "again, or raise EXPLORER_LOCK_WAIT"
                ) from exc

    @contextmanager
    def transaction(self, *, fenced: bool = True) -> Iterator[PgConnection]:
        """All of the block's writes, or none of them; first the :attr:`fence` unless not ``fenced``."""
        with self.connect() as con:
            if getattr(self._local, "in_tx", False):
                yield con
                return
            self._local.in_tx, self._local.pending = True, []
            try:
                with _in_store_words(), con.raw.transaction():
                    self._pass_fence(con, fenced)
                    yield con
                self._local.committed += self._local.pending
            finally:
                self._local.in_tx, self._local.pending = False, []

    def checkpoint(self) -> None:
        """Nothing to fold: the server keeps its own log."""

    def close(self) -> None:
        """Close the pool's connections (a server that stops, a test that ends)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    # -- schema ------------------------------------------------------------

    def _migrate(self) -> None:
        """Apply the migrations this database lacks, one transaction each, under an advisory lock."""
        with self._connect_once() as raw, _in_store_words():
            con = PgConnection(raw)
            if not self.create and con.execute("SELECT to_regclass('schema_version')").fetchone() == (None,):
                raise DatabaseMissing(
                    f"there is no Dream Explorer database at {self.location}", remedy=Remedy.CHECK_DATABASE
                )
            with raw.transaction():
                con.execute("SELECT pg_advisory_xact_lock(?)", [_MIGRATION_LOCK])
                con.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                    "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                )
                current = int(con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0])  # type: ignore[index]
                too_new(current, self.location)
                for version, name, sql in migrations(MIGRATIONS):
                    if version > current:
                        apply_migration(con, version, name, sql, self.embedding_model, self.embedding_dim)
            check_embedding_model(con, self.location, self.embedding_model, self.embedding_dim)

    def schema_version(self) -> int:
        """The migration the database stands at (asking opens and migrates it)."""
        with self.connect() as con:
            row = con.execute("SELECT max(version) FROM schema_version").fetchone()
            return int(row[0]) if row else 0
