"""The store's SQL is written once, in what DuckDB and PostgreSQL both run: DuckDB's own constructs stay out of
every store module but the backends' (explorer/store/dialect.py says what differs).
"""

from __future__ import annotations

import re
from pathlib import Path

import explorer.store

STORE = Path(explorer.store.__file__).parent
# where a backend says things its own way
BACKENDS = {"database.py", "postgres.py", "dialect.py"}
DUCKDB_ONLY = {
    "list_contains": r"\blist_contains\b",
    "list_has_any": r"\blist_has_any\b",
    "list_append": r"\blist_append\b",
    "list_filter": r"\blist_filter\b",
    "list_transform": r"\blist_transform\b",
    "GROUP BY ALL": r"\bGROUP\s+BY\s+ALL\b",
    "ORDER BY ALL": r"\bORDER\s+BY\s+ALL\b",
    "INSERT OR": r"\bINSERT\s+OR\b",
    "TRY_CAST": r"\bTRY_CAST\b",
    "rowid": r"\browid\b",
    "uuid()": r"\buuid\(\)",
    "::FLOAT (4 bytes in DuckDB, 8 in PostgreSQL)": r"::FLOAT\b",
    "::DOUBLE (DOUBLE PRECISION or FLOAT8)": r"::DOUBLE\b(?!\s+PRECISION)",
    "array_cosine_similarity (dialect.cosine)": r"\barray_cosine_similarity\b",
    "fetchnumpy (dialect.fetch_numpy)": r"\.fetchnumpy\(",
    "register (dialect.insert_vectors)": r"\.register\(",
}


def duckdb_only_constructs(text: str) -> list[tuple[int, str]]:
    """(line, construct) of every DuckDB-only construct in a module's text."""
    return [
        (number, name)
        for number, line in enumerate(text.splitlines(), 1)
        for name, pattern in DUCKDB_ONLY.items()
        if re.search(pattern, line, re.IGNORECASE)
    ]


def test_store_modules_use_only_sql_both_backends_run() -> None:
    modules = sorted(p for p in STORE.glob("*.py") if p.name not in BACKENDS)
    assert len(modules) >= 11
    found = [
        f"{module.name}:{line}: {name}"
        for module in modules
        for line, name in duckdb_only_constructs(module.read_text(encoding="utf-8"))
    ]
    assert not found, "DuckDB-only SQL outside the backends:\n" + "\n".join(found)


def test_the_search_sees_each_construct() -> None:
    seen = duckdb_only_constructs(
        "SELECT list_contains(a, 1), list_has_any(a, b), list_append(a, 1), list_filter(a, lambda x: x),\n"
        "list_transform(a, lambda x: x), TRY_CAST(x AS UUID), uuid(), v::FLOAT[4], x::DOUBLE, rowid\n"
        "FROM t GROUP BY ALL ORDER BY ALL; INSERT OR IGNORE INTO t; array_cosine_similarity(a, b)\n"
        "con.execute(sql).fetchnumpy(); con.register('t', table)"
    )
    assert {name for _, name in seen} == set(DUCKDB_ONLY)
    assert not duckdb_only_constructs("SELECT gen_random_uuid(), x::DOUBLE PRECISION, y::FLOAT8[], z::REAL")
