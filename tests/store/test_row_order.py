"""Row order without rowid (migration 013): every table the store reads in insertion order numbers its rows."""

from __future__ import annotations

import re
import uuid
from importlib import resources
from pathlib import Path

import duckdb

from explorer.records import Node
from explorer.store import Database, corpus

MODEL, DIM = "test-model", 4
# every table whose queries read rows in the order they were written
ORDERED_TABLES = (
    "nodes",
    "relations",
    "verdicts",
    "model_calls",
    "experiences",
    "consolidation_runs",
    "consolidation_patterns",
    "consolidation_ladder",
    "wander_loci",
    "wander_residues",
    "wander_resonances",
    "wander_warm_memory",
)


def file_at_version(path: Path, last: int) -> None:
    """A database as this program left it after migration ``last``, by the migrations' own text."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_version "
        "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    files = sorted(resources.files("explorer.store.migrations").iterdir(), key=lambda entry: entry.name)
    for entry in files:
        match = re.fullmatch(r"(\d{3})_(\w+)\.sql", entry.name)
        if match and int(match[1]) <= last:
            con.execute(entry.read_text(encoding="utf-8").replace("{dim}", str(DIM)))
            con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [int(match[1]), match[2]])
    con.execute("INSERT INTO meta VALUES ('embedding_model', ?), ('embedding_dim', ?)", [MODEL, str(DIM)])
    con.close()


def _node(text: str) -> Node:
    return Node(type="raw_chunk", text=text)


def test_existing_rows_are_numbered_in_their_rowid_order(tmp_path: Path) -> None:
    path = tmp_path / "v12.duckdb"
    file_at_version(path, 12)
    con = duckdb.connect(str(path))
    # one statement, so one created_at: only the order of writing tells the rows apart, and ids sort otherwise
    ids = sorted((str(uuid.uuid4()) for _ in range(5)), reverse=True)
    con.execute(
        "INSERT INTO nodes (id, type, text) VALUES " + ", ".join("(?, 'raw_chunk', ?)" for _ in ids),
        [v for i, node_id in enumerate(ids) for v in (node_id, f"chunk {i}")],
    )
    con.execute("DELETE FROM nodes WHERE id = ?", [ids[1]])  # a gap in the rowids
    con.execute("INSERT INTO model_calls (model, tier, purpose, outcome) VALUES ('m', 'local', 'p', 'ok')")
    before = [str(r[0]) for r in con.execute("SELECT id FROM nodes ORDER BY rowid").fetchall()]
    con.close()

    db = Database(path, embedding_model=MODEL, embedding_dim=DIM)
    with db.transaction() as con:
        corpus.insert_nodes(con, [_node("written after the migration")])
        rows = con.execute("SELECT id, seq FROM nodes ORDER BY seq").fetchall()
        calls = con.execute("SELECT seq FROM model_calls").fetchall()
    assert [str(i) for i, _ in rows[:-1]] == before == [ids[0], *ids[2:]]
    assert [seq for _, seq in rows] == [1, 2, 3, 4, 5]  # the new row follows the old ones
    assert calls == [(1,)]


def test_every_table_read_in_writing_order_has_a_seq(tmp_path: Path) -> None:
    db = Database(tmp_path / "new.duckdb", embedding_model=MODEL, embedding_dim=DIM)
    with db.connect() as con:
        with_seq = {
            table
            for (table,) in con.execute(
                "SELECT table_name FROM information_schema.columns WHERE column_name = 'seq'"
            ).fetchall()
        }
    assert set(ORDERED_TABLES) <= with_seq


def test_nodes_written_together_are_listed_in_the_order_written(tmp_path: Path) -> None:
    db = Database(tmp_path / "n.duckdb", embedding_model=MODEL, embedding_dim=DIM)
    nodes = [_node(f"chunk {i}") for i in range(20)]
    with db.transaction() as con:
        corpus.insert_nodes(con, nodes)
        # rewriting a list column moves the row to the end of DuckDB's storage (a new rowid); its seq stays
        con.execute("UPDATE nodes SET parent_ids = [?::UUID] WHERE id = ?", [nodes[-1].id, nodes[0].id])
    with db.connect() as con:
        listed = corpus.list_nodes(con)
    assert [n.id for n in listed] == [n.id for n in nodes]
