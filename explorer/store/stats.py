"""Counts across the whole database, for ``explorer stats`` and the corpus page."""

from __future__ import annotations

from explorer.records import NODE_TYPES
from explorer.store.database import Connection, scalar


def database_stats(con: Connection) -> dict[str, object]:
    """How much the database holds, by kind: the corpus, and what wandering has made of it."""
    by_type = dict.fromkeys(NODE_TYPES, 0) | dict(
        con.execute("SELECT type, count(*) FROM nodes GROUP BY type").fetchall()
    )

    def count(table: str) -> int:
        return int(scalar(con, f"SELECT count(*) FROM {table}"))  # table names are literals below

    return {
        "documents": count("documents"),
        "nodes": sum(by_type.values()),
        "nodes_by_type": by_type,
        "relations": count("relations"),
        "sessions": count("wander_sessions"),
        "loci": count("wander_loci"),
        "crystals": count("wander_crystals"),
        "resonances": count("wander_resonances"),
        "reading_pending": count("reading_pending"),  # model steps of reading that failed, to be asked again
    }
