"""Ids as the store looks them up: a text that is no UUID (a mistyped id) is simply not found.

Told here, in Python, rather than by the database: DuckDB's cast that gives NULL for bad text has no PostgreSQL
twin, and a cast that fails aborts a PostgreSQL transaction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# 32 hex digits, hyphenated as usual or not at all, braces allowed: what both DuckDB and PostgreSQL read as a UUID
_UUID = re.compile(r"[0-9a-f]{8}(-?)[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{12}", re.IGNORECASE)


def is_uuid(text: object) -> bool:
    """Whether ``text`` names a UUID the databases can read."""
    value = str(text)
    if value.startswith("{") and value.endswith("}"):
        value = value[1:-1]
    return _UUID.fullmatch(value) is not None


def uuids(values: Iterable[object]) -> list[str]:
    """The values that name UUIDs, as text, each once, in their order."""
    return [text for text in dict.fromkeys(str(v) for v in values) if is_uuid(text)]
