"""The persisted event log: what NATS subjects were in the specs, rows here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from explorer.store.database import Connection


@dataclass(frozen=True)
class Event:
    """One thing that happened, as it was logged: the app's activity feed and the export read these."""

    seq: int
    subject: str
    session_id: str | None
    payload: dict[str, Any]
    created_at: datetime


def emit(con: Connection, subject: str, payload: dict[str, Any], session_id: str | None = None) -> None:
    """Log that something happened (``subject`` names what, e.g. ``projection.fitted``), for later reading."""
    con.execute(
        "INSERT INTO events (subject, session_id, payload) VALUES (?, ?, ?)",
        [subject, session_id, json.dumps(payload, default=str)],
    )


def list_events(
    con: Connection,
    *,
    session_id: str | None = None,
    subject_prefix: str | None = None,
    after_seq: int = 0,
    limit: int = 1000,
) -> list[Event]:
    """The logged events in order, narrowed to a session or a subject family; ``after_seq`` pages on."""
    clauses: list[str] = ["seq > ?"]
    params: list[object] = [after_seq]
    if session_id is not None:
        clauses.append("session_id = ?")
        params.append(session_id)
    if subject_prefix:
        clauses.append("starts_with(subject, ?)")
        params.append(subject_prefix)
    rows = con.execute(
        f"SELECT seq, subject, session_id, payload, created_at FROM events WHERE {' AND '.join(clauses)} "
        "ORDER BY seq LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [Event(s, subj, None if sid is None else str(sid), json.loads(p), t) for s, subj, sid, p, t in rows]
