"""PostgreSQL's side of the :class:`~explorer.store.dialect.Dialect` methods that move whole tables (read in
batches, written in bulk, sequences moved on), for :mod:`explorer.store.copying`; ``PgDialect`` inherits them.

Why COPY: one statement streams every row of a batch, each value in its column's text form, which the server
parses with the column's own input function; so a UUID list, JSON text or a timestamp needs no cast in SQL. A
vector is written in pgvector's text form, ``[1.0, 2.0]`` (an array's, ``{1.0,2.0}``, is not one it reads).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from explorer.store.dialect import identifier

# Memory for building an HNSW index after a copy: a graph of 100k 384-dim vectors takes ~200 MB, and once it
# outgrows maintenance_work_mem (64 MB unless the server says otherwise) pgvector builds far slower.
BUILD_MEMORY_KB = 512 * 1024


class PgBulk:
    """``read_rows``, ``write_rows``, ``read_snapshot``, ``loading`` and ``continue_sequences`` on a ``PgConnection``
    (see the Dialect).
    """

    def read_rows(
        self, con: Any, table: str, columns: Sequence[str], batch_rows: int
    ) -> Generator[list[tuple[Any, ...]], None, None]:
        """Through a named cursor: the server keeps the result and hands it over ``batch_rows`` at a time."""
        with con.raw.transaction(), con.raw.cursor(name=f"explorer_copy_{table}") as cursor:
            cursor.itersize = batch_rows
            cursor.execute(f"SELECT {', '.join(map(identifier, columns))} FROM {identifier(table)}")
            while rows := cursor.fetchmany(batch_rows):
                yield rows

    def write_rows(self, con: Any, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """``COPY ... FROM STDIN``, vectors in pgvector's text form (see the module's note)."""
        vectors = _vector_columns(con, table)
        at = [index for index, column in enumerate(columns) if column in vectors]
        names = ", ".join(map(identifier, columns))
        with con.cursor.copy(f"COPY {identifier(table)} ({names}) FROM STDIN") as copy:
            for row in rows:
                values = list(row)
                for index in at:
                    values[index] = _vector_text(values[index])
                copy.write_row(values)

    def read_snapshot(self, con: Any) -> None:
        """Repeatable read, the first statement of the transaction (as PostgreSQL requires)."""
        con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

    @contextmanager
    def loading(self, con: Any, table: str) -> Iterator[None]:
        """The table's HNSW indexes dropped while the rows come in, then made again from their definitions, with
        :data:`BUILD_MEMORY_KB` of memory for the build if the server's setting gives less (for this transaction
        only): a graph that outgrows it is built far slower.
        """
        indexes = con.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? "
            "AND indexdef LIKE '%USING hnsw%'",
            [table],
        ).fetchall()
        for name, _ in indexes:
            con.execute(f"DROP INDEX {identifier(name)}")
        yield
        if indexes:
            # The rows' deferred triggers (the corpus counter, migration 015) fire now: PostgreSQL builds no index
            # on a table with trigger events pending.
            con.execute("SET CONSTRAINTS ALL IMMEDIATE")
            (given,) = con.execute(
                "SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'"
            ).fetchone()
            if given < BUILD_MEMORY_KB:
                con.execute("SELECT set_config('maintenance_work_mem', ?, true)", [f"{BUILD_MEMORY_KB}kB"])
        for _, definition in indexes:
            con.execute(definition)

    def continue_sequences(self, con: Any, table: str) -> None:
        """``setval`` to the column's largest number, so ``nextval`` hands out the next one."""
        numbered = con.execute(
            "SELECT column_name, is_identity, column_default FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ? "
            "AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')",
            [table],
        ).fetchall()
        for column, is_identity, default in numbered:
            if is_identity == "YES":
                (sequence,) = con.execute("SELECT pg_get_serial_sequence(?, ?)", [identifier(table), column]).fetchone()
            else:
                named = re.match(r"nextval\('([^']+)'", default)
                assert named is not None, default
                sequence = named[1]
            con.execute(
                f"SELECT setval(?::regclass, coalesce(max({identifier(column)}), 0) + 1, false) "
                f"FROM {identifier(table)}",
                [sequence],
            )


def _vector_columns(con: Any, table: str) -> set[str]:
    """The columns of ``table`` of pgvector's type."""
    return {
        row[0]
        for row in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ? AND udt_name = 'vector'",
            [table],
        ).fetchall()
    }


def _vector_text(value: Any) -> str | None:
    """The text form pgvector reads a vector in (each float32 written as the float64 that holds it exactly, which reads
    back as the same float32).
    """
    if value is None:
        return None
    return str(np.asarray(value, dtype=np.float32).tolist())
