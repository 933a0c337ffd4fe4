"""Copy a whole database into a new one, either way between a DuckDB file and PostgreSQL (or file to file, server
to server): ``explorer db copy SRC DST``.

What is copied: every table the source and the destination share, found in their schemas (so a table a new
migration makes is copied too, with no list here to forget it), every column by name. ``schema_version`` is
not: opening the destination migrated it, and its migrations wrote their own rows. Nor are procrastinate's tables
(the job queue a server keeps beside the product's: its jobs are for that server's workers) or a table only the
source has: the report names them.

Why the source's ``meta`` decides the embedding model: the vectors are the source's; the destination is created
with that model and dimension, and a destination made with another is refused when it is opened.

Why one transaction for the destination: a copy that fails half way (the disk, a count that does not match)
leaves it as empty as it was, to try again. Why one for the source, reading one snapshot: a server that workers
still write to is copied as it stood when the copy began, every table of the same moment (a file is the copy's
alone while it reads). Why refuse a destination with rows: a copy merged into another
database would mix two sets of ids and two histories; the person chooses a new database instead.

Rows move in batches (:data:`BATCH_ROWS`): read with the source's :meth:`~explorer.store.dialect.Dialect.read_rows`,
written with the destination's ``write_rows`` (a registered Arrow table into DuckDB, COPY into PostgreSQL),
which convert what differs (vectors, UUIDs, arrays, JSON text). Then each sequence that numbers rows (``seq``)
is moved past the copied numbers, and every table's rows are counted on both sides.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.records import Progress
from explorer.settings import without_password
from explorer.store import open_database
from explorer.store.database import (
    Connection,
    Database,
    DatabaseCorrupt,
    DatabaseMissing,
    SchemaMismatch,
    Store,
    StoreError,
    scalar,
)
from explorer.store.dialect import dialect, identifier

BATCH_ROWS = 2000  # rows a batch: 2000 nodes of 384 dims are ~25 MB as Python floats, COPY or Arrow per batch
MIGRATED = ("schema_version", "corpus_changes")  # written by the destination's own migrations (and triggers)
OTHERS = ("procrastinate_",)  # tables another program keeps beside ours: the job queue of a server
WRITTEN_BY_OPENING = "meta"  # its embedding model's rows are written when the destination is created


class DestinationNotEmpty(StoreError):
    """The destination already holds rows: a copy goes into a new, empty database."""


class CopyMismatch(StoreError):
    """A table's rows counted in the destination are not the source's: nothing of the copy was kept."""


@dataclass(frozen=True)
class TableCopy:
    """One table copied: its rows in the source and in the destination afterwards."""

    name: str
    source: int
    copied: int


@dataclass(frozen=True)
class CopyReport:
    """What :func:`copy_database` did, for the command's summary and ``--json``."""

    source: str
    destination: str
    embedding_model: str
    embedding_dim: int
    tables: tuple[TableCopy, ...]
    skipped: tuple[str, ...]
    seconds: float

    @property
    def rows(self) -> int:
        """Rows in the destination's copied tables."""
        return sum(table.copied for table in self.tables)

    def to_json(self) -> dict[str, Any]:
        """The shape ``explorer db copy --json`` prints (README, "Team server")."""
        return {
            "source": self.source,
            "destination": self.destination,
            "embedding_model": self.embedding_model,
            "embedding_dim": self.embedding_dim,
            "tables": {table.name: {"source": table.source, "copied": table.copied} for table in self.tables},
            "skipped": list(self.skipped),
            "rows": self.rows,
            "seconds": round(self.seconds, 2),
        }


def copy_database(
    source: str | Path,
    destination: str | Path,
    *,
    progress: Progress | None = None,
    lock_wait_s: float = 15.0,
    batch_rows: int = BATCH_ROWS,
) -> CopyReport:
    """Copy every row of ``source`` into ``destination`` (a file path or a ``postgresql://`` URL each), which is
    created with the source's embedding model; refused if it holds rows. See the module's note.

    Example::

        report = copy_database("explorer.duckdb", "postgresql://ana@db.lan/kb")
        report.to_json()["tables"]["nodes"]  # {'source': 11043, 'copied': 11043}
    """
    started = time.perf_counter()
    model, dim = stored_embedding_model(source)
    src = open_database(source, embedding_model=model, embedding_dim=dim, lock_wait_s=lock_wait_s, create=False)
    dst = open_database(destination, embedding_model=model, embedding_dim=dim, lock_wait_s=lock_wait_s)
    if _same(src, dst):
        raise StoreError(f"{src.location} is both the source and the destination; copy into another database")
    _refuse_another_model(destination, dst.location, model, dim)
    try:
        with src.transaction() as read, dst.transaction() as write:
            dialect(read).read_snapshot(read)
            shared, skipped = _tables(read, write)
            _refuse_rows(write, shared, dst.location)
            counts = {table: int(scalar(read, f"SELECT count(*) FROM {identifier(table)}")) for table in shared}
            tick = _ticker(progress, sum(counts.values()))
            for table in shared:
                _copy_table(read, write, table, batch_rows, tick)
            tables = tuple(_verified(write, table, counts[table]) for table in shared)
    finally:
        src.close()
        dst.close()
    return CopyReport(
        source=src.location,
        destination=dst.location,
        embedding_model=model,
        embedding_dim=dim,
        tables=tables,
        skipped=tuple(skipped),
        seconds=time.perf_counter() - started,
    )


def stored_embedding_model(location: str | Path) -> tuple[str, int]:
    """The embedding model and dimension a database was built with (its ``meta``), read before it is opened as
    the product opens it, which needs them. Refuses a location with no Dream Explorer database.
    """
    unopened = open_database(location, embedding_model="", embedding_dim=0, create=False)  # opens nothing yet
    meta = (
        _file_meta(unopened.path) if isinstance(unopened, Database) else _server_meta(str(location), unopened.location)
    )
    try:
        return meta["embedding_model"], int(meta["embedding_dim"])
    except (KeyError, ValueError) as exc:
        raise DatabaseCorrupt(f"{unopened.location} does not say which embedding model built it") from exc


def _refuse_another_model(destination: str | Path, shown: str, model: str, dim: int) -> None:
    """Refuse a destination built for other embeddings, in the copy's own words (opening it would say so too, but
    with a remedy for ``--db``, which this command does not take); one that is not there yet is made with ours.
    """
    try:
        theirs = stored_embedding_model(destination)
    except DatabaseMissing:
        return
    if theirs != (model, dim):
        raise SchemaMismatch(
            f"database {shown} was built with embeddings from {theirs[0]} ({theirs[1]} dims), not the "
            f"source's {model} ({dim} dims); copy into a new, empty database"
        )


def _file_meta(path: Path) -> dict[str, str]:
    """A file's ``meta``, read through a read-only connection of its own (nothing of this process has it open)."""
    import duckdb

    if not path.is_file():
        raise DatabaseMissing(f"there is no database at {path}")
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            return dict(con.execute("SELECT key, value FROM meta").fetchall())
    except duckdb.CatalogException as exc:
        raise DatabaseMissing(f"{path} is not a Dream Explorer database (it has no meta table)") from exc
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(f"cannot read database {path}: {first}") from exc


def _server_meta(url: str, shown: str) -> dict[str, str]:
    """A PostgreSQL database's ``meta``, read through a connection of its own."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=15) as con:
            return dict(con.execute("SELECT key, value FROM meta").fetchall())
    except psycopg.errors.UndefinedTable as exc:
        raise DatabaseMissing(f"there is no Dream Explorer database at {shown}") from exc
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(f"cannot open database {shown}: {without_password(first, url)}") from exc


def _same(source: Store, destination: Store) -> bool:
    if isinstance(source, Database) and isinstance(destination, Database):
        return source.path.resolve() == destination.path.resolve()
    return source.location == destination.location  # a file's is its path, a server's its URL without password


def _table_names(con: Connection) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
        "AND table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
    ).fetchall()
    return [row[0] for row in rows]


def _tables(read: Connection, write: Connection) -> tuple[list[str], list[str]]:
    """The tables to copy (both databases have them) and those left: a table only the source has, and the job
    queue's (the jobs queued on a server are that server's workers' to run, not the destination's).
    """
    theirs = set(_table_names(write))
    source = [table for table in _table_names(read) if table not in MIGRATED]
    ours = [t for t in source if t in theirs and not t.startswith(OTHERS)]
    return ours, [t for t in source if t not in ours]


def _columns(con: Connection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
        "AND table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [row[0] for row in rows]


def _refuse_rows(con: Connection, tables: list[str], where: str) -> None:
    """Refuse a destination that holds anything but what creating it wrote."""
    full = [
        table
        for table in tables
        if table != WRITTEN_BY_OPENING and con.execute(f"SELECT 1 FROM {identifier(table)} LIMIT 1").fetchall()
    ]
    if full:
        raise DestinationNotEmpty(
            f"database {where} is not empty (it has rows in {', '.join(full)}); copy into a new, empty database"
        )


def _copy_table(
    read: Connection, write: Connection, table: str, batch_rows: int, tick: Callable[[int, str], None]
) -> None:
    """Every row of ``table``, batch by batch; then its sequences moved past the copied numbers. Of ``meta``, the
    rows creating the destination wrote are left out (the same, or opening it would have refused the model).
    """
    columns = _columns(read, table)
    written: set[str] = set()
    if table == WRITTEN_BY_OPENING:
        written = {key for (key,) in write.execute("SELECT key FROM meta").fetchall()}
    with (
        dialect(write).loading(write, table),
        closing(dialect(read).read_rows(read, table, columns, batch_rows)) as batches,
    ):
        for batch in batches:
            rows = [row for row in batch if row[0] not in written] if written else batch
            dialect(write).write_rows(write, table, columns, rows)
            tick(len(batch), table)
    dialect(write).continue_sequences(write, table)


def _verified(con: Connection, table: str, source: int) -> TableCopy:
    """The table's count in the destination, which must be the source's."""
    copied = int(scalar(con, f"SELECT count(*) FROM {identifier(table)}"))
    if copied != source:
        raise CopyMismatch(
            f"table {table} has {copied} rows after the copy, not the source's {source}; nothing was kept"
        )
    return TableCopy(table, source, copied)


def _ticker(progress: Progress | None, total: int) -> Callable[[int, str], None]:
    """A callback counting rows written into the ``(done, total, note)`` progress."""
    done = 0

    def tick(rows: int, table: str) -> None:
        nonlocal done
        done += rows
        if progress is not None:
            progress(done, total, table)

    if progress is not None:
        progress(0, total, "")
    return tick
