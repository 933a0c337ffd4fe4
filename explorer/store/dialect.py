"""What the store's SQL says differently on each backend, in one place.

The store's queries are written once, in the SQL both DuckDB and PostgreSQL run (``?`` placeholders, which the
PostgreSQL connection turns into its own; ``x = ANY(?::VARCHAR[])``, ``unnest(?::UUID[])``, ``array_append``,
``ON CONFLICT``, ``gen_random_uuid()``, ``->>``). What cannot be written once is asked of the connection's
:class:`Dialect`: the vector type and its similarity, fetching columns as NumPy arrays, and loading many rows at
once. ``dialect(con)`` finds it: a DuckDB connection is DuckDB's, a PostgreSQL connection carries its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np


class Dialect(Protocol):
    """One backend's SQL where it differs (see the module's note)."""

    name: str

    def vector(self, dim: int) -> str:
        """The SQL type of an embedding of ``dim`` numbers, to cast a parameter to (``?::<this>``)."""
        ...

    def cosine(self, column: str, parameter: str) -> str:
        """An expression: the cosine similarity of ``column`` and ``parameter`` (both vectors), higher closer."""
        ...

    def fetch_numpy(self, con: Any, sql: str, parameters: Sequence[object] = ()) -> dict[str, np.ndarray]:
        """The query's columns by name, each a NumPy array (a vector column: an object array of vectors)."""
        ...


class _DuckDB:
    name = "duckdb"

    def vector(self, dim: int) -> str:
        return f"FLOAT[{int(dim)}]"

    def cosine(self, column: str, parameter: str) -> str:
        return f"array_cosine_similarity({column}, {parameter})"

    def fetch_numpy(self, con: Any, sql: str, parameters: Sequence[object] = ()) -> dict[str, np.ndarray]:
        return dict(con.execute(sql, list(parameters)).fetchnumpy())


DUCKDB: Dialect = _DuckDB()


def dialect(con: Any) -> Dialect:
    """The dialect of the backend ``con`` talks to (a PostgreSQL connection names its own)."""
    return getattr(con, "dialect", DUCKDB)
