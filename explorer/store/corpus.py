"""Queries for documents, nodes, relations and the embedding cache."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np

from explorer.records import Document, Node, NoteLink, Relation, Retired
from explorer.store.database import Connection, insert_rows, scalar
from explorer.store.dialect import dialect
from explorer.store.ids import uuids

_NODE_COLUMNS = (
    "id",
    "type",
    "text",
    "embedding",
    "document_id",
    "chunk_index",
    "year",
    "domain",
    "entity",
    "generation",
    "parent_ids",
    "category",
    "importance",
    "prominence",
    "confidence",
    "memory_type",
    "is_latest",
    "superseded_by",
    "learned_from",
    "source_text",
    "metadata",
    "access_count",
    "last_accessed_at",
    "section",
    "created_at",
)
# Ids come as text: a driver's UUID objects cost more to build than the rest of a row (90,000 of them when an
# edited note is read again among 10,000). The vectors come apart, as NumPy arrays (:func:`_nodes`).
_AS_TEXT = {
    "id": "id::VARCHAR AS id",
    "document_id": "document_id::VARCHAR AS document_id",
    "superseded_by": "superseded_by::VARCHAR AS superseded_by",
    "parent_ids": "parent_ids::VARCHAR[] AS parent_ids",
    "embedding": "NULL AS embedding",
}
_NODE_SELECT = ", ".join(_AS_TEXT.get(c, c) for c in _NODE_COLUMNS)


# -- documents -----------------------------------------------------------------


def insert_document(con: Connection, doc: Document) -> None:
    """Remember a source text, so its chunks can name where they came from."""
    con.execute(
        "INSERT INTO documents (id, content_hash, title, source, path, year, domain, word_count, aliases, tags, links, "
        "domain_origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::VARCHAR[], ?::VARCHAR[], ?)",
        [doc.id, doc.content_hash, doc.title, doc.source, doc.path, doc.year, doc.domain, doc.word_count]
        + [list(doc.aliases), list(doc.tags), list(doc.links), doc.domain_origin],
    )


def add_alias(con: Connection, document_id: str, alias: str) -> None:
    """Record another title of a document (the same text found under another name), once."""
    con.execute(
        "UPDATE documents SET aliases = array_append(aliases, ?) WHERE id = ? AND title <> ? AND NOT ? = ANY(aliases)",
        [alias, document_id, alias, alias],
    )


def list_documents(con: Connection, *, current_only: bool = False, tag: str | None = None) -> list[Document]:
    """Every source text of the corpus (or those tagged ``tag``, or a tag nested under it; ``tag`` as kept,
    :func:`explorer.reading.vault.normal_tag`), oldest year first, for the corpus overview; the retired ones too
    unless ``current_only`` (they stay the sources of what cites them).
    """
    clauses = (["retired_at IS NULL"] if current_only else []) + ([TAGGED] if tag else [])
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    rows = con.execute(
        "SELECT title, content_hash, source, path, year, domain, word_count, aliases, tags, links, retired_because, "
        f"domain_origin, id::VARCHAR FROM documents {where}ORDER BY year NULLS LAST, title",
        [tag, tag] if tag else [],
    ).fetchall()
    return [
        Document(
            title,
            content_hash,
            source,
            path,
            year,
            domain,
            words,
            tuple(aliases),
            tuple(tags),
            tuple(links),
            retired,
            origin,
            id=i,
        )
        for title, content_hash, source, path, year, domain, words, aliases, tags, links, retired, origin, i in rows
    ]


# A document's tags hold the one asked for, or one nested under it (``project/alpha`` under ``project``), as
# explorer.reading.vault.tag_matches says; two parameters, the tag twice.
TAGGED = "EXISTS (SELECT 1 FROM unnest(tags) AS t(tag) WHERE t.tag = ? OR starts_with(t.tag, ? || '/'))"


def all_tags(con: Connection) -> list[tuple[str, int]]:
    """Every tag of the corpus with how many documents carry it, the most used first: what a tag filter offers."""
    rows = con.execute(
        "SELECT tag, count(*) AS n FROM (SELECT unnest(tags) AS tag FROM documents) AS t GROUP BY tag "
        "ORDER BY n DESC, tag"
    ).fetchall()
    return [(str(tag), int(n)) for tag, n in rows]


def retired_documents(con: Connection) -> dict[str, Retired]:
    """Document id → why it was retired ('changed', 'removed'), for marking the sources of what cites them."""
    rows = con.execute("SELECT id, retired_because FROM documents WHERE retired_at IS NOT NULL").fetchall()
    return {str(i): because for i, because in rows}


def retire_documents(con: Connection, document_ids: Collection[str], because: Retired) -> None:
    """Take documents out of what is walked, dreamt over and drawn, because their file changed or is gone: their
    nodes are no longer latest (the filter every walk, dream and map already applies), the documents say why.
    A node superseded before keeps its ``superseded_by``; these get none, which is how :func:`revive_documents`
    tells them apart.
    """
    ids = uuids(document_ids)
    if not ids:
        return
    con.execute(
        "UPDATE documents SET retired_at = now(), retired_because = ? "
        "WHERE id IN (SELECT unnest(?::UUID[])) AND retired_at IS NULL",
        [because, ids],
    )
    con.execute(
        "UPDATE nodes SET is_latest = false WHERE document_id IN (SELECT unnest(?::UUID[])) AND is_latest", [ids]
    )


def revive_documents(con: Connection, document_ids: Collection[str]) -> None:
    """Bring retired documents back (their text was met again: an edit undone, a file put back), with the nodes
    :func:`retire_documents` set aside and not those superseded by newer knowledge.
    """
    ids = uuids(document_ids)
    if not ids:
        return
    con.execute(
        "UPDATE documents SET retired_at = NULL, retired_because = NULL WHERE id IN (SELECT unnest(?::UUID[]))", [ids]
    )
    con.execute(
        "UPDATE nodes SET is_latest = true "
        "WHERE document_id IN (SELECT unnest(?::UUID[])) AND NOT is_latest AND superseded_by IS NULL",
        [ids],
    )


# -- nodes ---------------------------------------------------------------------


def _vector(value: np.ndarray | None) -> list[float] | None:
    return None if value is None else np.asarray(value, dtype=np.float32).tolist()


def insert_nodes(con: Connection, nodes: Sequence[Node]) -> None:
    """Add knowledge to the corpus: chunks from reading, and what dreaming and fusion make of them."""
    insert_rows(
        con,
        "nodes",
        _NODE_COLUMNS[:-1],
        [
            [
                n.id,
                n.type,
                n.text,
                _vector(n.embedding),
                n.document_id,
                n.chunk_index,
                n.year,
                n.domain,
                n.entity,
                n.generation,
                list(n.parent_ids),
                n.category,
                n.importance,
                n.prominence,
                n.confidence,
                n.memory_type,
                n.is_latest,
                n.superseded_by,
                n.learned_from,
                n.source_text,
                None if n.metadata is None else json.dumps(n.metadata),
                n.access_count,
                n.last_accessed_at,
                n.section,
            ]
            for n in nodes
        ],
    )


def _row_to_node(row: Sequence[Any]) -> Node:
    values = dict(zip(_NODE_COLUMNS, row, strict=True))
    values["parent_ids"] = list(values["parent_ids"] or [])
    if isinstance(values["metadata"], str):
        values["metadata"] = json.loads(values["metadata"])
    return Node(**values)


def _nodes(con: Connection, where: str, params: list[Any], *, with_vectors: bool) -> list[Node]:
    """The nodes a ``FROM nodes`` clause (``where``: filters, order, limit) selects, with their vectors if asked:
    read as NumPy arrays in one column, which takes a twentieth of the time of a list of numbers a row.
    """
    nodes = [_row_to_node(row) for row in con.execute(f"SELECT {_NODE_SELECT} FROM nodes {where}", params).fetchall()]
    if with_vectors and nodes:
        data = dialect(con).fetch_numpy(
            con,
            "SELECT id::VARCHAR AS id, embedding FROM nodes "
            "WHERE embedding IS NOT NULL AND id IN (SELECT unnest(?::UUID[]))",
            [[node.id for node in nodes]],
        )
        vectors = dict(zip(data["id"], data["embedding"], strict=True))
        for node in nodes:
            if node.id in vectors:
                node.embedding = np.asarray(vectors[node.id], dtype=np.float32)
    return nodes


def get_nodes(con: Connection, ids: Iterable[str], *, with_vectors: bool = True) -> list[Node]:
    """Nodes by id, in the order asked (missing ids, and text that is no id at all, are left out)."""
    ids = uuids(ids)
    if not ids:
        return []
    found = {n.id: n for n in _nodes(con, "WHERE id IN (SELECT unnest(?::UUID[]))", [ids], with_vectors=with_vectors)}
    return [found[i] for i in ids if i in found]


def list_nodes(
    con: Connection,
    *,
    types: Sequence[str] | None = None,
    latest_only: bool = False,
    search: str | None = None,
    domain: str | None = None,
    year: int | None = None,
    current_sources: bool = False,
    tag: str | None = None,
    with_vectors: bool = False,
    limit: int | None = None,
    offset: int = 0,
) -> list[Node]:
    """Nodes matching every filter given; ``search`` is a case-insensitive substring, ``tag`` one of their
    document's tags (or a tag nested under it, as :func:`list_documents` finds them); ``current_sources`` leaves
    out the nodes of retired documents (their note was edited or deleted), superseded ones kept.
    """
    where, params = _node_filters(types, latest_only, search, domain, year, current_sources, tag)
    where += " ORDER BY created_at, seq"
    if limit is not None:
        where += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    return _nodes(con, where, params, with_vectors=with_vectors)


def count_nodes(
    con: Connection,
    *,
    types: Sequence[str] | None = None,
    latest_only: bool = False,
    search: str | None = None,
    domain: str | None = None,
    year: int | None = None,
    current_sources: bool = False,
    tag: str | None = None,
) -> int:
    """How many nodes :func:`list_nodes` would give with the same filters, for paging the corpus browser."""
    where, params = _node_filters(types, latest_only, search, domain, year, current_sources, tag)
    return int(scalar(con, f"SELECT count(*) FROM nodes {where}", params))


def _node_filters(
    types: Sequence[str] | None,
    latest_only: bool,
    search: str | None,
    domain: str | None,
    year: int | None,
    current_sources: bool,
    tag: str | None,
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if current_sources:
        clauses.append(
            "NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = nodes.document_id AND d.retired_at IS NOT NULL)"
        )
    if types:
        clauses.append("type = ANY(?::VARCHAR[])")
        params.append(list(types))
    if latest_only:
        clauses.append("is_latest")
    if search:
        # a literal, case-insensitive substring: the user's % and _ are not wildcards
        clauses.append(
            "position(lower(?) IN lower(text || ' ' || coalesce(source_text, '') || ' ' || coalesce(entity, ''))) > 0"
        )
        params.append(search)
    if domain:
        clauses.append("domain = ?")
        params.append(domain)
    if year is not None:
        clauses.append("year = ?")
        params.append(year)
    if tag:
        clauses.append(f"document_id IN (SELECT id FROM documents WHERE {TAGGED})")
        params += [tag, tag]
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def children_of(con: Connection, node_id: str) -> list[Node]:
    """The nodes made from this one (a synthesis, a dream): the provenance read downwards."""
    return _nodes(con, "WHERE ?::UUID = ANY(parent_ids) ORDER BY created_at, seq", [node_id], with_vectors=False)


def update_node_fields(con: Connection, node_id: str, **fields: Any) -> None:
    """Set the named columns of one node (names are checked against the schema)."""
    unknown = set(fields) - set(_NODE_COLUMNS)
    if unknown:
        raise ValueError(f"unknown node fields: {sorted(unknown)}")
    if fields:
        assignments = ", ".join(f"{name} = ?" for name in fields)
        con.execute(f"UPDATE nodes SET {assignments} WHERE id = ?", [*fields.values(), node_id])


def domain_year_counts(con: Connection) -> list[tuple[str | None, int | None, str, int]]:
    """(domain, year, type, count) for the corpus overview."""
    return con.execute(
        "SELECT domain, year, type, count(*) FROM nodes GROUP BY domain, year, type ORDER BY domain, year, type"
    ).fetchall()


# -- relations -----------------------------------------------------------------


def insert_relations(con: Connection, relations: Sequence[Relation]) -> None:
    """Link nodes (DERIVES, UPDATES …), so provenance and tension can be followed later."""
    insert_rows(
        con,
        "relations",
        ("id", "source_id", "target_id", "type", "confidence", "description", "scores", "created_by"),
        [
            [
                r.id,
                r.source_id,
                r.target_id,
                r.type,
                r.confidence,
                r.description,
                None if r.scores is None else json.dumps(r.scores),
                r.created_by,
            ]
            for r in relations
        ],
    )


def list_relations(con: Connection, node_ids: Iterable[str] | None = None) -> list[Relation]:
    """Every relation, or those touching any of ``node_ids``."""
    sql = "SELECT source_id, target_id, type, created_by, confidence, description, scores, id FROM relations"
    params: list[Any] = []
    if node_ids is not None:
        sql += " WHERE source_id IN (SELECT unnest(?::UUID[])) OR target_id IN (SELECT unnest(?::UUID[]))"
        ids = list(node_ids)
        params = [ids, ids]
    rows = con.execute(sql + " ORDER BY created_at, id", params).fetchall()
    return [
        Relation(str(s), str(t), ty, by, conf, desc, json.loads(sc) if isinstance(sc, str) else sc, id=str(i))
        for s, t, ty, by, conf, desc, sc, i in rows
    ]


def note_links(con: Connection, node_id: str) -> list[NoteLink]:
    """The LINKS and MENTIONS between a node and other documents' chunks, both ways, with the other document's
    title: wikilinks first, then mentions, each by title.
    """
    rows = con.execute(
        "SELECT r.type, r.source_id = ?::UUID, other.id, d.title FROM relations r "
        "JOIN nodes other ON other.id = CASE WHEN r.source_id = ?::UUID THEN r.target_id ELSE r.source_id END "
        "JOIN documents d ON d.id = other.document_id "
        "WHERE (r.source_id = ?::UUID OR r.target_id = ?::UUID) AND r.type IN ('LINKS', 'MENTIONS') "
        "ORDER BY r.type DESC, d.title, r.seq",
        [node_id] * 4,
    ).fetchall()
    return [NoteLink(kind, bool(outgoing), str(other), title) for kind, outgoing, other, title in rows]


# -- embedding cache -----------------------------------------------------------


def cached_embeddings(con: Connection, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The vectors this model already gave for these texts (by hash), so nothing is embedded twice."""
    if not hashes:
        return {}
    rows = con.execute(
        "SELECT text_hash, embedding FROM embedding_cache "
        "WHERE model = ? AND text_hash IN (SELECT unnest(?::VARCHAR[]))",
        [model, list(hashes)],
    ).fetchall()
    return {h: np.asarray(v, dtype=np.float32) for h, v in rows}


def cached_hashes(con: Connection, model: str) -> set[str]:
    """Every text hash this model has a vector for, to tell what a run would still need to embed."""
    return {row[0] for row in con.execute("SELECT text_hash FROM embedding_cache WHERE model = ?", [model]).fetchall()}


def cache_embeddings(con: Connection, model: str, vectors: dict[str, np.ndarray]) -> None:
    """Keep new vectors by text hash; the first written for a text stays (re-embedding gives the same one).

    Loaded in bulk (:meth:`~explorer.store.dialect.Dialect.insert_vectors`), not as Python lists of floats.
    """
    if not vectors:
        return
    dialect(con).insert_vectors(
        con,
        "embedding_cache",
        {"model": [model] * len(vectors), "text_hash": list(vectors)},
        "embedding",
        np.vstack(list(vectors.values())),
        "ON CONFLICT DO NOTHING",
    )
