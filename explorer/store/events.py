"""The persisted event log: the subjects of docs/wander.md#nats-event-subjects, rows here (and published from
here by the engine).

Every write notes the stored events (with their ``seq``) for the commit hooks of :mod:`explorer.store.database`,
so the engine can tell its subscribers once the transaction that wrote them has committed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from explorer.store.database import Connection, note


@dataclass(frozen=True)
class Event:
    """One thing that happened, as it was logged: the app's activity feed, the export and NATS read these."""

    seq: int
    subject: str
    session_id: str | None
    payload: dict[str, Any]
    created_at: datetime

    def to_json(self) -> dict[str, Any]:
        """The event as one JSON object (what a NATS message carries)."""
        return {
            "seq": self.seq,
            "subject": self.subject,
            "session_id": self.session_id,
            "created_at": self.created_at.isoformat(),
            "payload": self.payload,
        }


_COLUMNS = "seq, subject, session_id, payload, created_at"


def _event(row: tuple[Any, ...]) -> Event:
    seq, subject, session_id, payload, created_at = row
    return Event(seq, subject, None if session_id is None else str(session_id), json.loads(payload), created_at)


def emit(con: Connection, subject: str, payload: dict[str, Any], session_id: str | None = None) -> Event:
    """Log that something happened (``subject`` names what, e.g. ``projection.fitted``); the stored event."""
    return emit_many(con, [(subject, payload)], session_id)[0]


def emit_many(
    con: Connection, items: Sequence[tuple[str, dict[str, Any]]], session_id: str | None = None
) -> list[Event]:
    """Several events of one session in one statement, in order (a wander step's); the stored events."""
    if not items:
        return []
    rows = con.execute(
        f"INSERT INTO events (subject, session_id, payload) VALUES {', '.join('(?, ?, ?)' for _ in items)} "
        f"RETURNING {_COLUMNS}",
        [v for subject, payload in items for v in (subject, session_id, json.dumps(payload, default=str))],
    ).fetchall()
    stored = sorted((_event(row) for row in rows), key=lambda e: e.seq)
    for event in stored:
        note(con, event)
    return stored


def list_events(
    con: Connection,
    *,
    session_id: str | None = None,
    subject_prefix: str | None = None,
    subjects: Sequence[str] | None = None,
    after_seq: int = 0,
    limit: int = 1000,
    newest: bool = False,
) -> list[Event]:
    """The logged events in order, narrowed to a session, a subject family or some subjects; ``after_seq`` pages
    on, ``newest`` keeps the last ``limit`` of them instead of the first (still oldest first).
    """
    clauses: list[str] = ["seq > ?"]
    params: list[object] = [after_seq]
    if session_id is not None:
        clauses.append("session_id = ?")
        params.append(session_id)
    if subject_prefix:
        clauses.append("starts_with(subject, ?)")
        params.append(subject_prefix)
    if subjects is not None:
        clauses.append("subject = ANY(?::VARCHAR[])")
        params.append(list(subjects))
    rows = con.execute(
        f"SELECT {_COLUMNS} FROM events WHERE {' AND '.join(clauses)} ORDER BY seq {'DESC' if newest else ''} LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [_event(row) for row in (reversed(rows) if newest else rows)]
