"""Queries of the dreaming mechanisms: prominence, use, recent dreams and discoveries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from explorer.records import Node, Relation, Verdict
from explorer.store import corpus
from explorer.store.database import Connection, insert_rows


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


def recent_relations(con: Connection, created_by: str, limit: int) -> list[tuple[Relation, datetime]]:
    """The newest relations made by one process, newest first, with when they were made."""
    rows = con.execute(
        "SELECT source_id, target_id, type, created_by, confidence, description, scores, id, created_at FROM relations "
        "WHERE created_by = ? ORDER BY created_at DESC, seq DESC LIMIT ?",
        [created_by, limit],
    ).fetchall()
    return [
        (Relation(str(s), str(t), ty, by, conf, desc, json.loads(sc) if isinstance(sc, str) else sc, id=str(i)), at)
        for s, t, ty, by, conf, desc, sc, i, at in rows
    ]


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
