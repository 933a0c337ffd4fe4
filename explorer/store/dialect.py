"""What the store's SQL says differently on each backend, in one place.

The store's queries are written once, in the SQL both DuckDB and PostgreSQL run (``?`` placeholders, which the
PostgreSQL connection turns into its own; ``x = ANY(?::VARCHAR[])``, ``unnest(?::UUID[])``, ``array_append``,
``ON CONFLICT``, ``gen_random_uuid()``, ``->>``). What cannot be written once is asked of the connection's
:class:`Dialect`: the vector type and its similarity, fetching columns as NumPy arrays, and loading many rows at
once. ``dialect(con)`` finds it: a DuckDB connection is DuckDB's, a PostgreSQL connection carries its own.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Generator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

import numpy as np

from explorer.store.database import insert_rows

ARROW_FROM = 32  # vectors: fewer are inserted as lists of numbers (see DuckDB's insert_vectors)


class Dialect(Protocol):
    """One backend's SQL where it differs (see the module's note)."""

    name: str
    # What ends a SELECT that reads rows the transaction will change, so a second writer waits for the first to
    # commit and then reads what it wrote, rather than both deciding on the same old row (PostgreSQL's READ
    # COMMITTED lets both read it; DuckDB refuses the second writer's change as a conflict instead).
    row_lock: str
    # A query whose one row changes whenever a committed write changes the corpus a walk holds in memory (its
    # nodes, their documents, the relations): a counter triggers keep on PostgreSQL (migration 015), where counting
    # the nodes scans them all (60 ms a step at 100k); counts on a file, whose columns DuckDB counts at once.
    corpus_version: str
    # What a write that changes the corpus without changing its counts (a domain renamed) runs so that
    # ``corpus_version`` moves: on a file it adds one to ``corpus_changes``; PostgreSQL's triggers do it already.
    corpus_edited: str | None

    def vector(self, dim: int) -> str:
        """The SQL type of an embedding of ``dim`` numbers, to cast a parameter to (``?::<this>``)."""
        ...

    def distance(self, column: str, parameter: str) -> str:
        """An expression: the cosine distance of ``column`` and ``parameter`` (both vectors), lower closer. A
        nearest-neighbour query orders by it alone (``ORDER BY <this> LIMIT k``): that is the form PostgreSQL's
        HNSW index serves.
        """
        ...

    def fetch_numpy(self, con: Any, sql: str, parameters: Sequence[object] = ()) -> dict[str, np.ndarray]:
        """The query's columns by name, each a NumPy array (a vector column: an object array of vectors)."""
        ...

    def insert_vectors(
        self,
        con: Any,
        table: str,
        values: Mapping[str, Sequence[object]],
        vector_column: str,
        vectors: np.ndarray,
        conflict: str = "",
    ) -> None:
        """Insert one row into ``table`` for each row of ``vectors`` (float32, one vector a row, put in
        ``vector_column``), the row's other columns taken from ``values`` (column → one value a row); ``conflict``
        ends the INSERT (``ON CONFLICT ... DO NOTHING``, or nothing). ``table``, the column names and ``conflict``
        are the store's literals, never user text.

        Many vectors at once, without a Python list of floats per row: DuckDB reads them as one Arrow table;
        PostgreSQL would COPY them (binary, pgvector's ``vector`` type, or ``real[]`` for an unsized column)
        into a temporary table and ``INSERT INTO table ... SELECT ... FROM it {conflict}``, since COPY cannot
        skip a conflicting row itself.
        """
        ...

    def read_rows(
        self, con: Any, table: str, columns: Sequence[str], batch_rows: int
    ) -> Generator[list[tuple[Any, ...]], None, None]:
        """Every row of ``table`` (``columns``, in that order), ``batch_rows`` at a time, never all held at once:
        what a whole database copied is read with (:mod:`explorer.store.copying`). A vector comes as a NumPy
        array or a sequence of floats, a UUID as :class:`uuid.UUID`, JSON as its text. Nothing else may run on
        ``con`` until the rows are all read.

        PostgreSQL: a named (server-side) cursor in a transaction, so the server hands the rows over a batch at
        a time instead of all at once.
        """
        ...

    def write_rows(self, con: Any, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Append ``rows`` (values as either backend's :meth:`read_rows` gives them) to ``table``, in bulk.

        PostgreSQL: ``COPY table (columns) FROM STDIN``, each vector in pgvector's text form ``[1.0, 2.0]``.
        """
        ...

    def read_snapshot(self, con: Any) -> None:
        """Make the transaction just begun on ``con`` read the whole database as it stood when it began, whatever
        others write meanwhile (a copy of a server that workers still write to: every table of the same moment).

        PostgreSQL: ``SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`` (its default reads each
        statement's own moment).
        """
        ...

    def loading(self, con: Any, table: str) -> AbstractContextManager[None]:
        """Around writing many rows into ``table`` at once (a copy), in the caller's transaction: whatever makes
        each row slow to add and is quicker built once for them all.

        PostgreSQL: its HNSW indexes dropped, then made again at the end (a 20k-node copy took 53 s into the
        indexes, 12 s into the table and 8 s to build them after). A block that fails leaves them dropped, which
        the transaction's rollback undoes.
        """
        ...

    def continue_sequences(self, con: Any, table: str) -> None:
        """Make every sequence that numbers a column of ``table`` (``seq``, ``events.seq``) hand out numbers above
        the largest the column holds: rows written with their numbers (a copy) do not move a sequence.

        PostgreSQL: ``setval`` on the identity column's sequence (``pg_get_serial_sequence``) or on the one its
        default names.
        """
        ...


class _DuckDB:
    name = "duckdb"
    row_lock = ""  # a concurrent change of the same row fails the later transaction (a WriteConflict)
    corpus_version = (
        "SELECT count(*) FILTER (WHERE is_latest), count(*), (SELECT count(*) FROM relations), "
        "(SELECT max(version) FROM corpus_changes) FROM nodes"
    )
    corpus_edited: str | None = "UPDATE corpus_changes SET version = version + 1"

    def vector(self, dim: int) -> str:
        return f"FLOAT[{int(dim)}]"

    def distance(self, column: str, parameter: str) -> str:
        return f"array_cosine_distance({column}, {parameter})"

    def fetch_numpy(self, con: Any, sql: str, parameters: Sequence[object] = ()) -> dict[str, np.ndarray]:
        return dict(con.execute(sql, list(parameters)).fetchnumpy())

    def insert_vectors(
        self,
        con: Any,
        table: str,
        values: Mapping[str, Sequence[object]],
        vector_column: str,
        vectors: np.ndarray,
        conflict: str = "",
    ) -> None:
        """As one registered Arrow table: 256 vectors take ~30 ms instead of ~250 as Python lists. A handful go
        as lists: Arrow's first table imports pandas (0.3 s), a fifth of re-reading an edited note. Arrow is
        imported here, on the first large batch: a command that only reads would spend 5% of its start on it.
        """
        matrix = np.asarray(vectors, dtype=np.float32)
        if len(matrix) < ARROW_FROM:
            insert_vector_rows(con, table, values, vector_column, matrix, conflict)
            return
        import pyarrow as pa

        columns = {name: pa.array(list(column)) for name, column in values.items()}
        columns[vector_column] = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1])
        names = ", ".join(columns)
        con.register("fresh_vectors", pa.table(columns))
        try:
            con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM fresh_vectors {conflict}")
        finally:
            con.unregister("fresh_vectors")

    def read_rows(
        self, con: Any, table: str, columns: Sequence[str], batch_rows: int
    ) -> Generator[list[tuple[Any, ...]], None, None]:
        result = con.execute(f"SELECT {', '.join(map(identifier, columns))} FROM {identifier(table)}")
        while rows := result.fetchmany(batch_rows):
            yield rows

    def write_rows(self, con: Any, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """As one registered Arrow table (a VALUES list of vectors as Python lists is ten times slower); DuckDB
        casts each column to the table's type as it inserts (text to UUID, a list of floats to ``FLOAT[n]``).
        """
        import pyarrow as pa

        if not rows:
            return
        data = pa.table({f"c{i}": pa.array(_arrow_ready([row[i] for row in rows])) for i in range(len(columns))})
        con.register("copied_rows", data)
        try:
            con.execute(
                f"INSERT INTO {identifier(table)} ({', '.join(map(identifier, columns))}) "
                f"SELECT {', '.join(data.column_names)} FROM copied_rows"
            )
        finally:
            con.unregister("copied_rows")

    def read_snapshot(self, con: Any) -> None:
        """Nothing to do: a DuckDB transaction reads one snapshot already."""

    def loading(self, con: Any, table: str) -> AbstractContextManager[None]:
        """Nothing: the file's tables have no index that costs much to keep up."""
        return nullcontext()

    def continue_sequences(self, con: Any, table: str) -> None:
        """``nextval`` once for each number up to the column's largest (DuckDB has no ``setval``). Each result is
        fetched to its end: DuckDB refuses to register a table on a connection with a result left unfinished.
        """
        numbered = con.execute(
            "SELECT column_name, column_default FROM information_schema.columns WHERE table_catalog = "
            "current_database() AND table_schema = current_schema() AND table_name = ? AND column_default LIKE "
            "'nextval(%'",
            [table],
        ).fetchall()
        for column, default in numbered:
            sequence = re.match(r"nextval\('([^']+)'", default)
            assert sequence is not None, default
            ((top,),) = con.execute(
                f"SELECT coalesce(max({identifier(column)}), 0) FROM {identifier(table)}"
            ).fetchall()
            con.execute(f"SELECT max(nextval('{sequence[1]}')) FROM range(?)", [int(top)]).fetchall()


DUCKDB: Dialect = _DuckDB()


def dialect(con: Any) -> Dialect:
    """The dialect of the backend ``con`` talks to (a PostgreSQL connection names its own)."""
    return getattr(con, "dialect", DUCKDB)


def insert_vector_rows(
    con: Any,
    table: str,
    values: Mapping[str, Sequence[object]],
    vector_column: str,
    vectors: np.ndarray,
    conflict: str = "",
) -> None:
    """Rows with a vector each, in multi-row INSERTs: each vector a list of numbers, which both backends take."""
    matrix = np.asarray(vectors, dtype=np.float32)
    columns = [*values, vector_column]
    rows = [[*(values[name][index] for name in values), matrix[index].tolist()] for index in range(len(matrix))]
    insert_rows(con, table, columns, rows, conflict)


def identifier(name: str) -> str:
    """A table's or column's name quoted for SQL (``"current"`` is a keyword), as both backends read it."""
    return '"' + name.replace('"', '""') + '"'


def _arrow_ready(values: list[Any]) -> list[Any]:
    """A column's values as Arrow can take them: UUIDs (alone or in lists) as their text."""
    sample = next((v for v in values if v is not None and not (isinstance(v, list) and not v)), None)
    if isinstance(sample, uuid.UUID):
        return [None if v is None else str(v) for v in values]
    if isinstance(sample, list) and isinstance(sample[0], uuid.UUID):
        return [None if v is None else [None if item is None else str(item) for item in v] for v in values]
    return values
