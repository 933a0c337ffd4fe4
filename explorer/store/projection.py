"""Queries of the stable map: the 2-d point of every node, locus, crystal and resonance.

A point is written once (fitted by UMAP, or placed beside its neighbours) and
read by every drawing; only a refit replaces the lot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.store.database import Connection, scalar
from explorer.store.dialect import dialect

ITEM_KINDS: tuple[str, ...] = ("node", "locus", "crystal", "resonance")

# item kind → its table; the names are literals, never user text
_TABLES = {"node": "nodes", "locus": "wander_loci", "crystal": "wander_crystals", "resonance": "wander_resonances"}


@dataclass(frozen=True)
class StoredPoint:
    """Where one item sits on the map, and which fit (``version``) and method (``placed_by``) put it there."""

    kind: str
    id: str
    x: float
    y: float
    version: int
    placed_by: str


def _table(kind: str) -> str:
    if kind not in _TABLES:
        raise ValueError(f"unknown map item kind {kind!r}")
    return _TABLES[kind]


def current_version(con: Connection) -> int:
    """The number of the latest fit (0: the map was never fitted)."""
    return int(scalar(con, "SELECT coalesce(max(projection_version), 0) FROM projection_points"))


def fitted_anchors(con: Connection) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(node ids, vectors, xy) of the nodes the current fit placed: the reference for new points."""
    table = dialect(con).fetch_numpy(
        con,
        "SELECT p.item_id, n.embedding, p.x, p.y FROM projection_points p JOIN nodes n ON n.id = p.item_id "
        "WHERE p.item_kind = 'node' AND p.placed_by = 'umap' AND n.embedding IS NOT NULL ORDER BY p.item_id",
    )
    ids = [str(i) for i in table["item_id"]]
    if not ids:
        return [], np.zeros((0, 0), np.float32), np.zeros((0, 2))
    xy = np.column_stack([table["x"], table["y"]]).astype(np.float64)
    return ids, np.vstack(list(table["embedding"])).astype(np.float32), xy


def node_xy(con: Connection) -> tuple[list[str], np.ndarray]:
    """(ids, xy) of every node on the map, fitted or placed: where a refit should keep them."""
    table = dialect(con).fetch_numpy(
        con, "SELECT item_id::VARCHAR AS id, x, y FROM projection_points WHERE item_kind = 'node' ORDER BY item_id"
    )
    ids = [str(i) for i in table["id"]]
    return ids, np.column_stack([table["x"], table["y"]]).astype(np.float64).reshape(-1, 2)


def unplaced(con: Connection, kind: str) -> tuple[list[str], np.ndarray]:
    """(ids, vectors) of the items of ``kind`` that have a vector but no point yet."""
    table = _table(kind)
    data = dialect(con).fetch_numpy(
        con,
        f"SELECT t.id, t.embedding FROM {table} t WHERE t.embedding IS NOT NULL AND NOT EXISTS "
        f"(SELECT 1 FROM projection_points p WHERE p.item_kind = ? AND p.item_id = t.id) ORDER BY t.id",
        [kind],
    )
    ids = [str(i) for i in data["id"]]
    if not ids:
        return [], np.zeros((0, 0), np.float32)
    return ids, np.vstack(list(data["embedding"])).astype(np.float32)


def all_node_vectors(con: Connection) -> tuple[list[str], np.ndarray]:
    """(ids, vectors) of every embedded node, superseded ones included (they keep a place on the map)."""
    data = dialect(con).fetch_numpy(con, "SELECT id, embedding FROM nodes WHERE embedding IS NOT NULL ORDER BY id")
    ids = [str(i) for i in data["id"]]
    if not ids:
        return [], np.zeros((0, 0), np.float32)
    return ids, np.vstack(list(data["embedding"])).astype(np.float32)


def locus_nodes(con: Connection, locus_ids: Sequence[str]) -> dict[str, str]:
    """Locus id → the corpus node it stands on, for the loci that stand on one."""
    if not locus_ids:
        return {}
    rows = con.execute(
        "SELECT id, node_id FROM wander_loci WHERE node_id IS NOT NULL AND id IN (SELECT unnest(?::UUID[]))",
        [list(locus_ids)],
    ).fetchall()
    return {str(a): str(b) for a, b in rows}


def crystal_loci(con: Connection, crystal_ids: Sequence[str]) -> dict[str, str]:
    """Crystal id → the locus it formed at, for the crystals that formed at one."""
    if not crystal_ids:
        return {}
    rows = con.execute(
        "SELECT id, source_locus_id FROM wander_crystals WHERE source_locus_id IS NOT NULL "
        "AND id IN (SELECT unnest(?::UUID[]))",
        [list(crystal_ids)],
    ).fetchall()
    return {str(a): str(b) for a, b in rows}


def save_points(con: Connection, points: Sequence[StoredPoint]) -> None:
    """Write (or overwrite) points in one statement."""
    if not points:
        return
    con.execute(
        "INSERT INTO projection_points (item_kind, item_id, x, y, projection_version, placed_by) "
        "SELECT unnest(?::VARCHAR[]), unnest(?::UUID[]), unnest(?::FLOAT8[]), unnest(?::FLOAT8[]), "
        "unnest(?::INTEGER[]), unnest(?::VARCHAR[]) "
        "ON CONFLICT (item_kind, item_id) DO UPDATE SET x = excluded.x, y = excluded.y, "
        "projection_version = excluded.projection_version, placed_by = excluded.placed_by",
        [
            [p.kind for p in points],
            [p.id for p in points],
            [float(p.x) for p in points],
            [float(p.y) for p in points],
            [int(p.version) for p in points],
            [p.placed_by for p in points],
        ],
    )


def load_points(
    con: Connection, kind: str | None = None, ids: Iterable[str] | None = None
) -> dict[tuple[str, str], StoredPoint]:
    """(kind, id) → point, for one kind or all, optionally only the ids given."""
    clauses: list[str] = []
    params: list[object] = []
    if kind is not None:
        _table(kind)
        clauses.append("item_kind = ?")
        params.append(kind)
    if ids is not None:
        clauses.append("item_id IN (SELECT unnest(?::UUID[]))")
        params.append(list(ids))
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    rows = con.execute(
        f"SELECT item_kind, item_id, x, y, projection_version, placed_by FROM projection_points {where}", params
    ).fetchall()
    return {(k, str(i)): StoredPoint(k, str(i), x, y, v, by) for k, i, x, y, v, by in rows}


def clear_points(con: Connection) -> None:
    """Forget every point: a refit lays the whole map out afresh."""
    con.execute("DELETE FROM projection_points")


def delete_orphans(con: Connection) -> int:
    """Remove the points of items that no longer exist (a deleted session's loci …); how many went."""
    removed = 0
    for kind, table in _TABLES.items():
        removed += len(
            con.execute(
                f"DELETE FROM projection_points p WHERE p.item_kind = ? "
                f"AND NOT EXISTS (SELECT 1 FROM {table} t WHERE t.id = p.item_id) RETURNING p.item_id",
                [kind],
            ).fetchall()
        )
    return removed


def point_counts(con: Connection) -> dict[tuple[str, str], int]:
    """(kind, placed_by) → number of points."""
    rows = con.execute(
        "SELECT item_kind, placed_by, count(*) FROM projection_points GROUP BY item_kind, placed_by"
    ).fetchall()
    return {(k, by): n for k, by, n in rows}


def missing_counts(con: Connection) -> dict[str, int]:
    """Kind → items with a vector and no point."""
    out = {}
    for kind, table in _TABLES.items():
        out[kind] = int(
            scalar(
                con,
                f"SELECT count(*) FROM {table} t WHERE t.embedding IS NOT NULL AND NOT EXISTS "
                f"(SELECT 1 FROM projection_points p WHERE p.item_kind = ? AND p.item_id = t.id)",
                [kind],
            )
        )
    return out


def map_nodes(con: Connection, *, latest_only: bool = True, text_chars: int = 200) -> dict[str, np.ndarray]:
    """Columns (id, x, y, type, domain, year, text) of the nodes on the map, for drawing."""
    where = "WHERE n.is_latest" if latest_only else ""
    return dialect(con).fetch_numpy(
        con,
        "SELECT n.id::VARCHAR AS id, p.x, p.y, n.type, n.domain, n.year, left(n.text, ?) AS text FROM nodes n "
        f"JOIN projection_points p ON p.item_kind = 'node' AND p.item_id = n.id {where} ORDER BY n.created_at, n.id",
        [text_chars],
    )
