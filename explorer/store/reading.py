"""The READING cycle's work left: steps the model could not do for stored chunks, until they are done."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from explorer.records import PendingReading
from explorer.store.database import Connection, insert_rows, scalar

_COLUMNS = ("chunk_id", "step", "entity", "learning", "related_ids", "error", "attempts")


def keep_pending(con: Connection, items: Sequence[PendingReading]) -> None:
    """Record steps that failed, or were left for later (never asked: ``attempts`` 0); one failing again keeps its
    row, with the new error and one attempt more.
    """
    insert_rows(
        con,
        "reading_pending",
        _COLUMNS,
        [
            [item.chunk_id, item.step, item.entity, item.learning, list(item.related_ids), item.error, item.attempts]
            for item in {item.key: item for item in items}.values()  # one row a key: a statement updates a row once
        ],
        "ON CONFLICT (chunk_id, step, entity) DO UPDATE SET error = excluded.error, "
        "attempts = reading_pending.attempts + 1, updated_at = now()",
    )


def remove_pending(con: Connection, keys: Collection[tuple[str, str, str]]) -> None:
    """Forget steps that are done (``PendingReading.key``)."""
    for chunk_id, step, entity in keys:
        con.execute(
            "DELETE FROM reading_pending WHERE chunk_id = ? AND step = ? AND entity = ?", [chunk_id, step, entity]
        )


def count_pending(con: Connection, keys: Collection[tuple[str, str, str]] | None = None) -> int:
    """How many steps are pending: of ``keys`` (another process may have completed some meanwhile), or all."""
    if keys is None:
        return int(scalar(con, "SELECT count(*) FROM reading_pending"))
    sql = "SELECT count(*) FROM reading_pending WHERE chunk_id = ? AND step = ? AND entity = ?"
    return sum(int(scalar(con, sql, key)) for key in keys)


def count_deferred(con: Connection) -> int:
    """How many pending steps were left for later, never asked (a fast read), as opposed to failed."""
    return int(scalar(con, "SELECT count(*) FROM reading_pending WHERE attempts = 0"))


def list_pending(
    con: Connection, document_ids: Collection[str] | None = None, *, failed_only: bool = False
) -> list[PendingReading]:
    """The work left, of every document or of ``document_ids``, in reading order (document, then chunk); with
    ``failed_only`` the steps asked and failed, not those left for later.
    """
    if document_ids is not None and not document_ids:
        return []
    clauses = (["n.document_id IN (SELECT unnest(?::UUID[]))"] if document_ids is not None else []) + (
        ["p.attempts > 0"] if failed_only else []
    )
    columns = ", ".join(f"p.{c}::VARCHAR" if c == "chunk_id" else f"p.{c}" for c in _COLUMNS)  # ids as text
    rows = con.execute(
        f"SELECT {columns} FROM reading_pending p JOIN nodes n ON n.id = p.chunk_id "
        + (f"WHERE {' AND '.join(clauses)} " if clauses else "")
        + "ORDER BY n.document_id, n.chunk_index, p.step, p.entity",
        [list(document_ids)] if document_ids is not None else [],
    ).fetchall()
    return [
        PendingReading(
            chunk_id=chunk_id,
            step=step,
            entity=entity,
            learning=learning,
            related_ids=tuple(related_ids),
            error=error,
            attempts=attempts,
        )
        for chunk_id, step, entity, learning, related_ids, error, attempts in rows
    ]


def documents_with_pending(con: Connection) -> set[str]:
    """The documents some of whose chunks have work left."""
    rows = con.execute(
        "SELECT DISTINCT n.document_id FROM reading_pending p JOIN nodes n ON n.id = p.chunk_id"
    ).fetchall()
    return {str(document_id) for (document_id,) in rows}
