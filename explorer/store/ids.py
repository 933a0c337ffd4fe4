"""Ids as the store looks them up: a full UUID, or the short id the pages show (its first digits), which names a
record when no other of its kind starts the same; a text that is neither (a mistyped id) is simply not found.

Told here, in Python, rather than by the database: DuckDB's cast that gives NULL for bad text has no PostgreSQL
twin, and a cast that fails aborts a PostgreSQL transaction.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from explorer.errors import ExplorerError
from explorer.records import SHORT_ID_DIGITS

_SHORT = re.compile(rf"[0-9a-f]{{{SHORT_ID_DIGITS},8}}(-[0-9a-f]{{0,4}}){{0,3}}(-[0-9a-f]{{0,12}})?", re.IGNORECASE)
_SHOWN = 5  # candidates an ambiguous short id names


class AmbiguousId(ExplorerError):
    """A short id that more than one record of its kind starts with."""


def is_uuid(text: object) -> bool:
    """Whether ``text`` names a UUID the databases can read: 32 hex digits, hyphenated as usual or not at all,
    in braces or not. :class:`uuid.UUID` reads more (a ``urn:uuid:`` prefix, hyphens anywhere) than both DuckDB and
    PostgreSQL do, so what it read must also be spelled in one of their forms.
    """
    value = str(text)
    if value.startswith("{") and value.endswith("}"):
        value = value[1:-1]
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return False
    return value.lower() in (str(parsed), parsed.hex)


def uuids(values: Iterable[object]) -> list[str]:
    """The values that name UUIDs, as text, each once, in their order."""
    return [text for text in dict.fromkeys(str(v) for v in values) if is_uuid(text)]


def full_id(con: Any, table: str, given: object, noun: str) -> str | None:
    """The id in ``table`` that ``given`` names: itself when it is a UUID, the one id it begins when it is a
    short id (the first digits of one, as the pages show), else None; :class:`AmbiguousId` when several ids of
    ``table`` begin with it. ``table`` is the store's literal; ``noun`` names its records in the error.
    """
    text = str(given).strip()
    if is_uuid(text):
        return text
    if _SHORT.fullmatch(text) is None:
        return None
    rows = con.execute(
        f"SELECT CAST(id AS VARCHAR) FROM {table} WHERE CAST(id AS VARCHAR) LIKE ? ORDER BY 1 LIMIT ?",
        [text.lower() + "%", _SHOWN + 1],
    ).fetchall()
    if len(rows) > 1:
        shown = ", ".join(row[0] for row in rows[:_SHOWN]) + (", …" if len(rows) > _SHOWN else "")
        raise AmbiguousId(
            f"{text!r} is the start of more than one {noun} id ({shown}); give more of the id", subject=text
        )
    return rows[0][0] if rows else None
