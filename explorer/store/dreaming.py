"""Queries of the dreaming mechanisms: prominence, use, the dreams of every kind, discoveries and verdicts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from explorer.records import Node, Relation, Verdict
from explorer.store import corpus
from explorer.store.database import Connection, insert_rows
from explorer.store.ids import full_id, uuids

# Who made each kind of dream, as the store holds it (docs/dreaming.md): a REM cycle's dream and a fused memory are
# nodes of their type; a discovered link is a relation REM exploration made (its ``CREATED_BY``, which the store,
# below the mechanisms, names here).
DISCOVERED_BY = "rem_exploration"
_DREAMS = (
    "(SELECT CASE type WHEN 'rem_dream' THEN 'rem' ELSE 'fusion' END AS kind, id, created_at, seq FROM nodes "
    "WHERE type IN ('rem_dream', 'fused') "
    f"UNION ALL SELECT 'exploration' AS kind, id, created_at, seq FROM relations WHERE created_by = '{DISCOVERED_BY}')"
    " AS dreams"
)


def set_prominence(con: Connection, values: dict[str, float]) -> None:
    """Set the prominence of many nodes in one statement."""
    if values:
        con.execute(
            "UPDATE nodes SET prominence = v.p FROM (SELECT unnest(?::UUID[]) AS id, unnest(?::FLOAT8[]) AS p) AS v "
            "WHERE nodes.id = v.id",
            [list(values), [float(p) for p in values.values()]],
        )


def touch_nodes(con: Connection, ids: Sequence[str], at: datetime | None = None) -> None:
    """Record a use of each node (a dream or a discovery drew on it): prominence rises with use."""
    ids = list(dict.fromkeys(ids))
    if ids:
        con.execute(
            "UPDATE nodes SET access_count = access_count + 1, last_accessed_at = coalesce(?, now()) "
            "WHERE id IN (SELECT unnest(?::UUID[]))",
            [at, ids],
        )


def recent_nodes(con: Connection, node_type: str, limit: int) -> list[Node]:
    """The newest nodes of one type, newest first."""
    rows = con.execute(
        "SELECT id FROM nodes WHERE type = ? ORDER BY created_at DESC, seq DESC LIMIT ?", [node_type, limit]
    ).fetchall()
    return corpus.get_nodes(con, [str(r[0]) for r in rows], with_vectors=False)


def list_dreams(con: Connection, kinds: Sequence[str], limit: int, offset: int = 0) -> list[tuple[str, str]]:
    """The dreams of these kinds (``rem``, ``exploration``, ``fusion``), newest first, a page at a time: each as
    its kind and its id (a node's, or a discovered link's).
    """
    rows = con.execute(
        f"SELECT kind, CAST(id AS VARCHAR) FROM {_DREAMS} WHERE kind IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?",
        [list(kinds), limit, offset],
    ).fetchall()
    return [(str(kind), str(dream_id)) for kind, dream_id in rows]


def find_dream(con: Connection, given: str) -> tuple[str, str] | None:
    """The kind and id of the dream ``given`` names (its id or the short id the pages show), or None."""
    dream_id = full_id(con, _DREAMS, given, "dream")
    if dream_id is None:
        return None
    row = con.execute(f"SELECT kind FROM {_DREAMS} WHERE id = ?", [dream_id]).fetchone()
    return (str(row[0]), dream_id) if row else None


def discovered_links(con: Connection, ids: Sequence[str]) -> list[tuple[Relation, datetime]]:
    """The links REM exploration discovered with these ids (in no order), with when each was made."""
    rows = con.execute(
        "SELECT source_id, target_id, type, created_by, confidence, description, scores, id, created_at FROM relations "
        "WHERE created_by = ? AND id IN (SELECT unnest(?::UUID[]))",
        [DISCOVERED_BY, uuids(ids)],
    ).fetchall()
    return [_relation_at(row) for row in rows]


def all_document_titles(con: Connection) -> dict[str, str]:
    """Every document's title by id (ids as text from the database: 10,000 UUID objects took a second)."""
    rows = con.execute("SELECT CAST(id AS VARCHAR), title FROM documents").fetchall()
    return {str(i): str(title) for i, title in rows}


def document_titles(con: Connection, ids: Sequence[str]) -> dict[str, str]:
    """Each of these documents' title by id."""
    rows = con.execute(
        "SELECT CAST(id AS VARCHAR), title FROM documents WHERE id IN (SELECT unnest(?::UUID[]))", [uuids(ids)]
    ).fetchall()
    return {str(i): str(title) for i, title in rows}


def _relation_at(row: Sequence) -> tuple[Relation, datetime]:
    s, t, ty, by, conf, desc, sc, i, at = row
    return Relation(str(s), str(t), ty, by, conf, desc, json.loads(sc) if isinstance(sc, str) else sc, id=str(i)), at


def recent_relations(con: Connection, created_by: str, limit: int) -> list[tuple[Relation, datetime]]:
    """The newest relations made by one process, newest first, with when they were made."""
    rows = con.execute(
        "SELECT source_id, target_id, type, created_by, confidence, description, scores, id, created_at FROM relations "
        "WHERE created_by = ? ORDER BY created_at DESC, seq DESC LIMIT ?",
        [created_by, limit],
    ).fetchall()
    return [_relation_at(row) for row in rows]


def supersede_nodes(con: Connection, superseded_by: dict[str, str]) -> None:
    """Mark each source node superseded by the node that replaces it; nothing is deleted."""
    if superseded_by:
        con.execute(
            "UPDATE nodes SET memory_type = 'superseded', is_latest = false, superseded_by = v.successor "
            "FROM (SELECT unnest(?::UUID[]) AS id, unnest(?::UUID[]) AS successor) AS v WHERE nodes.id = v.id",
            [list(superseded_by), list(superseded_by.values())],
        )


_VERDICT_COLUMNS = (
    "id, seed_id, candidate_id, novelty, plausibility, usefulness, kept, reason, connection, evidence, created_by"
)


def insert_verdicts(con: Connection, verdicts: Sequence[Verdict]) -> None:
    """Store a judge's verdicts, kept and refused alike."""
    insert_rows(
        con,
        "verdicts",
        _VERDICT_COLUMNS.split(", "),
        [
            [v.id, v.seed_id, v.candidate_id, v.novelty, v.plausibility, v.usefulness, v.kept, v.reason]
            + [v.connection, v.evidence, v.created_by]
            for v in verdicts
        ],
    )


def recent_verdicts(con: Connection, limit: int) -> list[Verdict]:
    """The newest verdicts, newest first."""
    rows = con.execute(
        f"SELECT {_VERDICT_COLUMNS}, created_at FROM verdicts ORDER BY created_at DESC, seq DESC LIMIT ?", [limit]
    ).fetchall()
    return [
        Verdict(str(s), str(c), n, p, u, k, r, conn, ev, by, at, id=str(i))
        for i, s, c, n, p, u, k, r, conn, ev, by, at in rows
    ]
