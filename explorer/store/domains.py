"""Queries for domains: what each holds, setting a document's, renaming and merging them.

A domain lives on a document (``documents.domain``, with ``domain_origin``) and on every node made from it
(``nodes.domain``, what the map colours, the corpus filters and a walk's scope read); a dream made of several
documents' nodes carries their most common one, and a walk may be kept to some domains or out of others. Every
write here changes them together, and makes the corpus a
walk holds in memory stale (``dialect.corpus_edited``), since renaming changes no count it watches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.records import DOMAIN_ORIGINS, DomainOrigin
from explorer.store.database import Connection
from explorer.store.dialect import dialect
from explorer.store.wander import update_session


@dataclass(frozen=True)
class DomainCount:
    """One domain: its name, where its documents' domain came from (the strongest when they differ; None for a
    name only nodes carry), and how many documents and nodes hold it.
    """

    name: str
    origin: DomainOrigin | None
    documents: int
    nodes: int

    def to_json(self) -> dict[str, object]:
        """The domain as ``explorer domains --json`` lists it."""
        return {"name": self.name, "origin": self.origin, "documents": self.documents, "nodes": self.nodes}


def domain_counts(con: Connection) -> list[DomainCount]:
    """Every domain a document or a node holds, by name."""
    documents: dict[str, int] = {}
    origins: dict[str, list[DomainOrigin]] = {}
    for name, origin, count in con.execute(
        "SELECT domain, domain_origin, count(*) FROM documents WHERE domain IS NOT NULL GROUP BY domain, domain_origin"
    ).fetchall():
        documents[name] = documents.get(name, 0) + int(count)
        if origin in DOMAIN_ORIGINS:
            origins.setdefault(name, []).append(origin)
    nodes = dict(con.execute("SELECT domain, count(*) FROM nodes WHERE domain IS NOT NULL GROUP BY domain").fetchall())
    return [
        DomainCount(
            name,
            min(origins[name], key=DOMAIN_ORIGINS.index) if name in origins else None,
            documents.get(name, 0),
            int(nodes.get(name, 0)),
        )
        for name in sorted({*documents, *nodes})
    ]


def rename_domains(con: Connection, names: Sequence[str], new: str) -> tuple[int, int]:
    """Give every document and node of the domains ``names`` the domain ``new``, a person's choice from now on
    (origin given: topics never take it back); (documents, nodes) changed. Call it in a transaction.
    """
    found = list(names)
    documents = _count(con, "documents", found)
    nodes = _count(con, "nodes", found)
    con.execute(
        "UPDATE documents SET domain = ?, domain_origin = 'given' WHERE domain = ANY(?::VARCHAR[])", [new, found]
    )
    con.execute("UPDATE nodes SET domain = ? WHERE domain = ANY(?::VARCHAR[])", [new, found])
    _rescope_sessions(con, found, new)
    _edited(con)
    return documents, nodes


def _rescope_sessions(con: Connection, names: list[str], new: str) -> None:
    """Walks kept to (or out of) a renamed domain keep to (or out of) it under its new name."""
    rows = con.execute(
        "SELECT id, allowed_domains, forbidden_domains FROM wander_sessions "
        "WHERE allowed_domains && ?::VARCHAR[] OR forbidden_domains && ?::VARCHAR[]",
        [names, names],
    ).fetchall()
    for session_id, allowed, forbidden in rows:
        update_session(
            con,
            str(session_id),
            allowed_domains=_renamed(allowed, names, new),
            forbidden_domains=_renamed(forbidden, names, new),
        )


def _renamed(domains: list[str] | None, names: list[str], new: str) -> list[str] | None:
    if domains is None:
        return None
    return list(dict.fromkeys(new if domain in names else domain for domain in domains))


def set_document_domains(con: Connection, domains: Mapping[str, tuple[str | None, DomainOrigin | None]]) -> None:
    """Set each document's domain and its origin (document id → (domain, origin)), and its nodes' domain with it.
    Call it in a transaction.
    """
    together: dict[tuple[str | None, DomainOrigin | None], list[str]] = {}
    for document_id, value in domains.items():
        together.setdefault(value, []).append(document_id)
    for (domain, origin), ids in together.items():
        con.execute(
            "UPDATE documents SET domain = ?, domain_origin = ? WHERE id = ANY(?::UUID[])", [domain, origin, ids]
        )
        con.execute("UPDATE nodes SET domain = ? WHERE document_id = ANY(?::UUID[])", [domain, ids])
    if domains:
        _edited(con)


def rename_loose_nodes(con: Connection, names: Mapping[str, str | None]) -> None:
    """Give the nodes no document owns (a dream of several documents' nodes) that carry a domain of ``names`` its
    successor (a topic found again under another name). Call it in a transaction.
    """
    for old, new in names.items():
        con.execute("UPDATE nodes SET domain = ? WHERE domain = ? AND document_id IS NULL", [new, old])
    if names:
        _edited(con)


@dataclass(frozen=True)
class TopicChunks:
    """The chunks topics are found from: each one's document, text and embedding (rows of ``vectors``)."""

    document_ids: list[str]
    texts: list[str]
    vectors: np.ndarray


def topic_chunks(con: Connection, dim: int) -> TopicChunks:
    """The embedded chunks of every document whose domain nobody gave (no domain, or a topic's), in reading
    order: what topics are found from again as the corpus grows.
    """
    table = dialect(con).fetch_numpy(
        con,
        "SELECT n.document_id, n.text, n.embedding FROM nodes n JOIN documents d ON d.id = n.document_id "
        "WHERE n.type = 'raw_chunk' AND n.is_latest AND n.embedding IS NOT NULL "
        "AND (d.domain_origin IS NULL OR d.domain_origin = 'topic') ORDER BY d.created_at, d.id, n.chunk_index",
    )
    ids = [str(i) for i in table["document_id"]]
    vectors = np.vstack(list(table["embedding"])).astype(np.float32) if ids else np.zeros((0, dim), np.float32)
    return TopicChunks(ids, [str(t) for t in table["text"]], vectors)


def _count(con: Connection, table: str, names: list[str]) -> int:
    row = con.execute(f"SELECT count(*) FROM {table} WHERE domain = ANY(?::VARCHAR[])", [names]).fetchone()
    return int(row[0]) if row else 0


def _edited(con: Connection) -> None:
    """Tell the walks' in-memory corpus that domains changed (a file has no trigger to say it)."""
    if statement := dialect(con).corpus_edited:
        con.execute(statement)


ADDED_SINCE_TOPICS = "topics_added_since_fit"  # the meta key: documents added or changed since topics were found


def added_since_topics(con: Connection) -> int:
    """How many documents were added or changed since the topics were last found (kept in ``meta``: one note at a
    time, a vault's additions still add up to a new fit).
    """
    row = con.execute("SELECT value FROM meta WHERE key = ?", [ADDED_SINCE_TOPICS]).fetchone()
    return int(row[0]) if row else 0


def set_added_since_topics(con: Connection, count: int) -> None:
    """Record how many documents came since the topics were found (0: they were just found)."""
    con.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [ADDED_SINCE_TOPICS, str(count)],
    )
