"""Queries for the review log (``wander_reviews``, 011_review_log.sql): every decision on a crystal and every
revert, as :class:`~explorer.records.wander.Review` records.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from explorer.records.wander import Review, ReviewState
from explorer.store.database import Connection, insert_rows
from explorer.store.ids import full_id, is_uuid

_COLUMNS = (
    "id",
    "crystal_id",
    "decision",
    "reviewer",
    "notes",
    "state_before",
    "state_after",
    "values_before",
    "values_after",
    "forced",
    "batch_id",
    "reverts",
    "created_at",
)


def _json(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value)


def _review(row: Sequence[Any]) -> Review:
    values = dict(zip(_COLUMNS, row, strict=True))
    for name in ("values_before", "values_after"):
        if isinstance(values[name], str):
            values[name] = json.loads(values[name])
    for name in ("id", "crystal_id", "batch_id", "reverts"):
        values[name] = None if values[name] is None else str(values[name])
    values["state_before"] = ReviewState(values["state_before"])
    values["state_after"] = ReviewState(values["state_after"])
    return Review(**values)


def insert_reviews(con: Connection, reviews: Sequence[Review]) -> None:
    """Log reviews, in one statement (a bulk review logs one entry per crystal it changed)."""
    insert_rows(
        con,
        "wander_reviews",
        _COLUMNS,
        [
            (r.id, r.crystal_id, r.decision, r.reviewer, r.notes, r.state_before.value, r.state_after.value)
            + (_json(r.values_before), _json(r.values_after), r.forced, r.batch_id, r.reverts, r.created_at)
            for r in reviews
        ],
    )


def get_review(con: Connection, review_id: str) -> Review | None:
    """The log entry with this id or short id (:func:`~explorer.store.ids.full_id`), or None (a mistyped id is
    simply not found).
    """
    found_id = full_id(con, "wander_reviews", review_id, "review")
    if found_id is None:
        return None
    row = con.execute(f"SELECT {', '.join(_COLUMNS)} FROM wander_reviews WHERE id = ?", [found_id]).fetchone()
    return None if row is None else _review(row)


def crystal_reviews(con: Connection, crystal_id: str) -> list[Review]:
    """A crystal's log, oldest first (entries of one bulk review are ordered by id); none for a mistyped id."""
    if not is_uuid(crystal_id):
        return []
    rows = con.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM wander_reviews WHERE crystal_id = ? ORDER BY created_at, id",
        [crystal_id],
    ).fetchall()
    return [_review(row) for row in rows]
