"""Queries for Wander's tables: sessions, loci, traces, residues, resonances, crystals, warm memory.

Records go in and out as the dataclasses of :mod:`explorer.records.wander`;
column names are their field names. Deleting a session cascades here, in code
(the schema has no FOREIGN KEY clauses, see 001_initial.sql).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import fields as dataclass_fields
from typing import Any, TypeVar

import numpy as np

from explorer.records.wander import (
    Crystal,
    FenceAnchor,
    Locus,
    Residue,
    Resonance,
    ReviewState,
    Session,
    Trace,
    WarmMemory,
)
from explorer.store.database import Connection, insert_rows, scalar
from explorer.store.dialect import dialect
from explorer.store.ids import full_id, is_uuid

R = TypeVar("R")

_VECTOR_COLUMNS = {"seed_embedding", "attractor_embedding", "embedding", "themes_embedding"}
_JSON_COLUMNS = {
    "adjacent_to",
    "bridges_to",
    "contradicts",
    "selection_scores",
    "supporting_evidence",
    "connects",
    "content",
}
_ID_COLUMNS = {
    "id",
    "session_id",
    "current_locus_id",
    "pending_locus_id",
    "node_id",
    "from_locus_id",
    "to_locus_id",
    "trace_id",
    "source_resonance_id",
    "source_locus_id",
}

_TABLES: dict[type, str] = {
    Session: "wander_sessions",
    Locus: "wander_loci",
    Trace: "wander_traces",
    Residue: "wander_residues",
    Resonance: "wander_resonances",
    Crystal: "wander_crystals",
    WarmMemory: "wander_warm_memory",
}
# Columns the database fills in when a record leaves them unset.
_DEFAULTED = {"created_at", "first_encountered", "last_reinforced_at", "last_accessed_at"}


def _columns(kind: type) -> list[str]:
    return [f.name for f in dataclass_fields(kind)]


def _to_db(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in _VECTOR_COLUMNS:
        return np.asarray(value, dtype=np.float32).tolist()
    if name == "fence":
        return json.dumps([anchor.to_stored() for anchor in value])
    if name in _JSON_COLUMNS:
        return json.dumps(value, default=str)
    if name == "supporting_residue_ids":
        return [str(v) for v in value]
    return value


def _from_db(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in _VECTOR_COLUMNS:
        return np.asarray(value, dtype=np.float32)
    if name == "fence":
        return [FenceAnchor.from_stored(a) for a in (json.loads(value) if isinstance(value, str) else value)]
    if name in _JSON_COLUMNS:
        return json.loads(value) if isinstance(value, str) else value
    if name in _ID_COLUMNS:
        return str(value)
    if name == "supporting_residue_ids":
        return [str(v) for v in value]
    return value


def _insert(con: Connection, records: Sequence[Any]) -> None:
    """One INSERT statement for the records of each set of columns (a statement costs DuckDB about a millisecond)."""
    if not records:
        return
    kind = type(records[0])
    groups: dict[tuple[str, ...], list[Any]] = {}
    for record in records:
        columns = tuple(c for c in _columns(kind) if not (c in _DEFAULTED and getattr(record, c) is None))
        groups.setdefault(columns, []).append(record)
    for columns, group in groups.items():
        insert_rows(con, _TABLES[kind], columns, [[_to_db(c, getattr(record, c)) for c in columns] for record in group])


def _in(ids: Sequence[str]) -> str:
    """``(?, ?, …)`` for an IN list: the primary-key index answers it, where a join on unnest() scans the table."""
    return f"({', '.join('?' for _ in ids)})"


def _select(
    con: Connection,
    kind: type[R],
    where: str = "",
    params: Sequence[Any] = (),
    order: str = "",
    limit: int | None = None,
    offset: int = 0,
    with_vectors: bool = True,
) -> list[R]:
    columns = _columns(kind)
    select = ", ".join(f"NULL AS {c}" if c in _VECTOR_COLUMNS and not with_vectors else c for c in columns)
    sql = f"SELECT {select} FROM {_TABLES[kind]} {where} {order}"
    params = list(params)
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    rows = con.execute(sql, params).fetchall()
    return [kind(**{c: _from_db(c, v) for c, v in zip(columns, row, strict=True)}) for row in rows]


def _by_id(con: Connection, kind: type[R], record_id: str, lock: bool = False) -> R | None:
    """The record of ``kind`` with this id or short id (:func:`~explorer.store.ids.full_id`), or None (a mistyped
    id is simply not found); ``lock``: the row, for the transaction that will change it
    (:attr:`~explorer.store.dialect.Dialect.row_lock`).
    """
    suffix = dialect(con).row_lock if lock else ""
    found_id = full_id(con, _TABLES[kind], record_id, kind.__name__.lower())
    found = _select(con, kind, "WHERE id = ?", [found_id], suffix) if found_id else []
    return found[0] if found else None


def session_id_of(con: Connection, given: str) -> str:
    """The full id of the session ``given`` names (a short id too), or ``given`` itself when none: a filter by
    session finds what the id the pages show finds, and a mistyped one finds nothing.
    """
    return full_id(con, _TABLES[Session], given, "session") or given


def _update(con: Connection, kind: type, record_id: str, values: dict[str, Any]) -> None:
    unknown = set(values) - set(_columns(kind))
    if unknown:
        raise ValueError(f"unknown {_TABLES[kind]} columns: {sorted(unknown)}")
    if values:
        assignments = ", ".join(f"{name} = ?" for name in values)
        con.execute(
            f"UPDATE {_TABLES[kind]} SET {assignments} WHERE id = ?",
            [*(_to_db(k, v) for k, v in values.items()), record_id],
        )


def _ids(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


# -- sessions ------------------------------------------------------------------


def insert_session(con: Connection, session: Session) -> None:
    """Start keeping a new wander session."""
    _insert(con, [session])


def get_session(con: Connection, session_id: str) -> Session | None:
    """The session with this id, or None (a mistyped id is simply not found)."""
    return _by_id(con, Session, session_id)


def session_progress(con: Connection, session_id: str) -> tuple[str, int] | None:
    """(status, step count) of a session, or None: all a step re-checks before it writes, without reading
    the session's vectors and fence.
    """
    row = con.execute("SELECT status, step_count FROM wander_sessions WHERE id = ?", [session_id]).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def list_sessions(con: Connection, *, status: str | None = None, limit: int = 50, offset: int = 0) -> list[Session]:
    """Sessions newest first, optionally only those in one status, for choosing one to continue or review."""
    where, params = ("WHERE status = ?", [status]) if status else ("", [])
    return _select(con, Session, where, params, "ORDER BY created_at DESC, id", limit, offset, with_vectors=False)


def update_session(con: Connection, session_id: str, **values: Any) -> None:
    """Record a session's progress: counters, spending, where it stands and why."""
    _update(con, Session, session_id, values)


def delete_session(con: Connection, session_id: str) -> None:
    """Delete the session and everything it owns, its events included.

    Crystals outlive it (session_id NULL, docs/wander.md#what-it-stores); cross-session resonances lose its
    residues from their support. The model-call log keeps its rows: it is the record of what was spent.
    """
    params = [session_id]
    loci = "SELECT id FROM wander_loci WHERE session_id = ?"
    resonances = "SELECT id FROM wander_resonances WHERE session_id = ?"
    residues = [
        str(r[0]) for r in con.execute("SELECT id FROM wander_residues WHERE session_id = ?", params).fetchall()
    ]
    con.execute(f"DELETE FROM projection_points WHERE item_kind = 'locus' AND item_id IN ({loci})", params)
    con.execute(f"DELETE FROM projection_points WHERE item_kind = 'resonance' AND item_id IN ({resonances})", params)
    con.execute(f"UPDATE wander_crystals SET source_locus_id = NULL WHERE source_locus_id IN ({loci})", params)
    con.execute(
        f"UPDATE wander_crystals SET source_resonance_id = NULL WHERE source_resonance_id IN ({resonances})", params
    )
    con.execute("UPDATE wander_crystals SET session_id = NULL WHERE session_id = ?", params)
    if residues:
        con.execute(
            "UPDATE wander_resonances SET supporting_residue_ids = ARRAY(SELECT r FROM unnest(supporting_residue_ids) "
            "WITH ORDINALITY AS u(r, i) WHERE NOT r = ANY(?::UUID[]) ORDER BY i) "
            "WHERE session_id IS NULL AND supporting_residue_ids && ?::UUID[]",
            [residues, residues],
        )
    for table in (
        "events",
        "wander_warm_memory",
        "wander_resonances",
        "wander_residues",
        "wander_traces",
        "wander_loci",
    ):
        con.execute(f"DELETE FROM {table} WHERE session_id = ?", params)
    con.execute("DELETE FROM wander_sessions WHERE id = ?", params)


# -- loci ----------------------------------------------------------------------


def insert_loci(con: Connection, loci: Sequence[Locus]) -> None:
    """Add the points a step encountered (its chosen locus and the candidates it saw) to the session."""
    _insert(con, loci)


def update_locus(con: Connection, locus_id: str, **values: Any) -> None:
    """Record what a visit learnt about a locus (visit count, scores, links to its neighbours)."""
    _update(con, Locus, locus_id, values)


def get_loci(con: Connection, ids: Iterable[str], *, with_vectors: bool = True) -> list[Locus]:
    """Loci by id, in the order asked (missing ids are left out)."""
    ids = _ids(ids)
    if not ids:
        return []
    loci = _select(con, Locus, f"WHERE id IN {_in(ids)}", ids, with_vectors=with_vectors)
    found = {locus.id: locus for locus in loci}
    return [found[i] for i in ids if i in found]


def list_loci(
    con: Connection,
    session_id: str,
    *,
    with_vectors: bool = True,
    visited: bool | None = None,
    min_interestingness: float | None = None,
) -> list[Locus]:
    """A session's loci in the order it met them, optionally only the visited (or unvisited) or interesting ones."""
    clauses: list[str] = ["session_id = ?"]
    params: list[object] = [session_id]
    if visited is not None:
        clauses.append("visit_count > 0" if visited else "visit_count = 0")
    if min_interestingness is not None:
        clauses.append("interestingness >= ?")
        params.append(min_interestingness)
    return _select(
        con,
        Locus,
        "WHERE " + " AND ".join(clauses),
        params,
        "ORDER BY first_encountered, seq",
        with_vectors=with_vectors,
    )


def count_loci(con: Connection, session_id: str) -> int:
    """How many points of idea space the session has met, without loading them."""
    return int(scalar(con, "SELECT count(*) FROM wander_loci WHERE session_id = ?", [session_id]))


# -- traces and residues ---------------------------------------------------------


def insert_trace(con: Connection, trace: Trace) -> None:
    """Record one step of the path: where from, where to and why."""
    _insert(con, [trace])


def list_traces(con: Connection, session_id: str, *, last: int | None = None) -> list[Trace]:
    """The session's steps in order; ``last`` keeps only the most recent ones."""
    if last is None:
        return _select(con, Trace, "WHERE session_id = ?", [session_id], "ORDER BY step_number")
    recent = _select(con, Trace, "WHERE session_id = ?", [session_id], "ORDER BY step_number DESC", last)
    return recent[::-1]


def insert_residue(con: Connection, residue: Residue) -> None:
    """Keep what dwelling at an encounter left behind."""
    _insert(con, [residue])


def list_residues(con: Connection, session_id: str, *, with_vectors: bool = False) -> list[Residue]:
    """A session's residues in the order they were left, for its view and its export."""
    return _select(
        con, Residue, "WHERE session_id = ?", [session_id], "ORDER BY created_at, seq", with_vectors=with_vectors
    )


def get_residues(con: Connection, ids: Iterable[str], *, with_vectors: bool = False) -> list[Residue]:
    """Residues by id, in the order asked: the evidence a resonance or crystal points to."""
    ids = _ids(ids)
    if not ids:
        return []
    found = {r.id: r for r in _select(con, Residue, f"WHERE id IN {_in(ids)}", ids, with_vectors=with_vectors)}
    return [found[i] for i in ids if i in found]


def residue_steps(con: Connection, session_id: str, *, after_step: int = 0) -> list[tuple[int, Residue]]:
    """(step number, residue) of the session after ``after_step``, in step order: the hot memory."""
    columns = _columns(Residue)
    rows = con.execute(
        f"SELECT t.step_number, {', '.join('r.' + c for c in columns)} FROM wander_residues r "
        "JOIN wander_traces t ON t.id = r.trace_id WHERE r.session_id = ? AND t.step_number > ? "
        "ORDER BY t.step_number",
        [session_id, after_step],
    ).fetchall()
    return [(row[0], Residue(**{c: _from_db(c, v) for c, v in zip(columns, row[1:], strict=True)})) for row in rows]


# -- resonances ------------------------------------------------------------------


def insert_resonances(con: Connection, resonances: Sequence[Resonance]) -> None:
    """Keep newly noticed recurring patterns of themes."""
    _insert(con, resonances)


def update_resonance(con: Connection, resonance_id: str, **values: Any) -> None:
    """Record a resonance reinforced, confirmed, promoted across sessions or invalidated."""
    _update(con, Resonance, resonance_id, values)


def get_resonance(con: Connection, resonance_id: str) -> Resonance | None:
    """The resonance with this id, or None (a mistyped id is simply not found)."""
    return _by_id(con, Resonance, resonance_id)


def resonances_in_reach(con: Connection, session_id: str) -> list[Resonance]:
    """What a session's residues are matched against.

    Its own resonances, the cross-session ones, and other sessions' confirmed ones (a match promotes those
    to cross-session). Invalidated ones are out.
    """
    return _select(
        con,
        Resonance,
        "WHERE status <> 'invalidated' AND (session_id = ? OR session_id IS NULL OR status = 'confirmed')",
        [session_id],
        "ORDER BY created_at, seq",
    )


def list_resonances(
    con: Connection, *, session_id: str | None = None, status: str | None = None, with_vectors: bool = False
) -> list[Resonance]:
    """All resonances, or a session's own plus the cross-session ones its residues support (none for a mistyped
    session id).
    """
    if session_id is not None and not is_uuid(session_id):
        return []
    clauses: list[str] = []
    params: list[object] = []
    if session_id is not None:
        clauses.append(
            "(session_id = ? OR (session_id IS NULL AND supporting_residue_ids && "
            "ARRAY(SELECT id FROM wander_residues WHERE session_id = ?)))"
        )
        params += [session_id, session_id]
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    return _select(con, Resonance, where, params, "ORDER BY strength DESC, created_at", with_vectors=with_vectors)


# -- crystals --------------------------------------------------------------------


def insert_crystal(con: Connection, crystal: Crystal) -> None:
    """Keep a crystal formed at a locus, awaiting review."""
    _insert(con, [crystal])


def update_crystal(con: Connection, crystal_id: str, **values: Any) -> None:
    """Record a crystal's review (approval, rejection, archiving) or its validation."""
    _update(con, Crystal, crystal_id, values)


def update_crystals(con: Connection, crystal_ids: Sequence[str], **values: Any) -> None:
    """Give several crystals the same values in one statement (a bulk review)."""
    unknown = set(values) - set(_columns(Crystal))
    if unknown:
        raise ValueError(f"unknown wander_crystals columns: {sorted(unknown)}")
    if values and crystal_ids:
        assignments = ", ".join(f"{name} = ?" for name in values)
        con.execute(
            f"UPDATE wander_crystals SET {assignments} WHERE id IN {_in(crystal_ids)}",
            [*(_to_db(k, v) for k, v in values.items()), *crystal_ids],
        )


def get_crystal(con: Connection, crystal_id: str, *, lock: bool = False) -> Crystal | None:
    """The crystal with this id, or None (a mistyped id is simply not found); ``lock``: in a transaction that
    will change it, so a second reviewer at the same moment waits and then decides on what the first wrote.
    """
    return _by_id(con, Crystal, crystal_id, lock)


# Crystal.review_state in SQL, so the review queue reads (and the pages count) only the crystals in the states
# asked for: a person waits on that read after every key, and every crystal ever formed is most of a store's.
REVIEW_STATE_SQL = {
    ReviewState.ARCHIVED: "status = 'archived'",
    ReviewState.REJECTED: "status = 'invalidated'",
    ReviewState.APPROVED: "status NOT IN ('archived', 'invalidated') AND human_approved",
    ReviewState.PENDING: "status NOT IN ('archived', 'invalidated') AND NOT human_approved",
}


def _in_review_states(states: Collection[ReviewState]) -> str:
    return "(" + (" OR ".join(f"({REVIEW_STATE_SQL[s]})" for s in sorted(states)) or "FALSE") + ")"


def count_crystals(con: Connection, *, states: Collection[ReviewState] | None = None) -> int:
    """How many crystals there are (in ``states``, when given), counted in the database."""
    where = f"WHERE {_in_review_states(states)}" if states is not None else ""
    return int(scalar(con, f"SELECT count(*) FROM wander_crystals {where}"))


def list_crystals(
    con: Connection,
    *,
    status: str | None = None,
    min_confidence: float | None = None,
    session_id: str | None = None,
    source_resonance_ids: Sequence[str] | None = None,
    states: Collection[ReviewState] | None = None,
    with_vectors: bool = False,
    lock: bool = False,
) -> list[Crystal]:
    """Crystals newest first, narrowed by status, confidence, session, review states or the resonances they came
    from; ``lock``: for the transaction that will change them (:attr:`~explorer.store.dialect.Dialect.row_lock`).
    A mistyped session id finds none.
    """
    if session_id is not None and not is_uuid(session_id):
        return []
    clauses: list[str] = [] if states is None else [_in_review_states(states)]
    params: list[object] = []
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    if min_confidence is not None:
        clauses.append("confidence >= ?")
        params.append(min_confidence)
    if session_id is not None:
        clauses.append("session_id = ?")
        params.append(session_id)
    if source_resonance_ids is not None:
        clauses.append("source_resonance_id = ANY(?::UUID[])")
        params.append(list(source_resonance_ids))
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    order = "ORDER BY created_at DESC, confidence DESC" + (dialect(con).row_lock if lock else "")
    return _select(con, Crystal, where, params, order, with_vectors=with_vectors)


def last_crystal_attempt(con: Connection, resonance_id: str) -> int | None:
    """The resonance's occurrences when it last crystallized or tried to (from the event log), None if never."""
    row = con.execute(
        "SELECT CAST(payload->>'occurrences' AS INTEGER) FROM events WHERE subject IN ('wander.crystal.formed', "
        "'wander.crystal.rejected') AND payload->>'resonance_id' = ? ORDER BY seq DESC LIMIT 1",
        [str(resonance_id)],
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def crystal_vectors(con: Connection) -> tuple[list[str], np.ndarray]:
    """(ids, matrix) of every crystal, of any session and review state, for the near-duplicate check (a
    rejected insight formed again is a duplicate too).
    """
    rows = con.execute("SELECT id, embedding FROM wander_crystals ORDER BY created_at, id").fetchall()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    return [str(r[0]) for r in rows], np.asarray([r[1] for r in rows], dtype=np.float32)


def crystal_pairs(con: Connection) -> set[frozenset[str]]:
    """The pairs of source documents crystals connect (any session, any review state)."""
    rows = con.execute("SELECT connects FROM wander_crystals WHERE json_array_length(connects) = 2").fetchall()
    pairs = set()
    for (value,) in rows:
        ends = json.loads(value) if isinstance(value, str) else value
        documents = frozenset(str(e.get("document_id")) for e in ends if e.get("document_id"))
        if len(documents) == 2:
            pairs.add(documents)
    return pairs


def naming_pairs(con: Connection) -> set[frozenset[str]]:
    """The pairs of documents the notes link already: a chunk of one names the other (reading's MENTIONS) or
    links it (a vault's LINKS).
    """
    rows = con.execute(
        "SELECT DISTINCT a.document_id, b.document_id FROM relations r "
        "JOIN nodes a ON a.id = r.source_id JOIN nodes b ON b.id = r.target_id "
        "WHERE r.type IN ('MENTIONS', 'LINKS') AND a.document_id <> b.document_id"
    ).fetchall()
    return {frozenset((str(a), str(b))) for a, b in rows}


def crystal_steps(con: Connection, session_id: str) -> list[int]:
    """The steps at which a walk of this session formed a crystal, in order (from the event log)."""
    rows = con.execute(
        "SELECT CAST(payload->>'step_number' AS INTEGER) FROM events WHERE session_id = ? "
        "AND subject = 'wander.step.completed' AND payload->>'crystal_id' IS NOT NULL ORDER BY seq",
        [session_id],
    ).fetchall()
    return [int(r[0]) for r in rows if r[0] is not None]


# -- warm memory -----------------------------------------------------------------


def insert_warm_memory(con: Connection, rows: Sequence[WarmMemory]) -> None:
    """Keep hot memory compressed into theme clusters, failed paths and summaries."""
    _insert(con, rows)


def list_warm_memory(
    con: Connection, session_id: str, *, cluster_type: str | None = None, with_vectors: bool = False
) -> list[WarmMemory]:
    """A session's warm memory in the order it was compressed, optionally of one kind only."""
    clauses: list[str] = ["session_id = ?"]
    params: list[object] = [session_id]
    if cluster_type:
        clauses.append("cluster_type = ?")
        params.append(cluster_type)
    return _select(
        con,
        WarmMemory,
        "WHERE " + " AND ".join(clauses),
        params,
        "ORDER BY created_at, seq",
        with_vectors=with_vectors,
    )


def compressed_through_step(con: Connection, session_id: str) -> int:
    """The last step whose residues were compressed into warm memory (0: none yet)."""
    value = scalar(
        con,
        "SELECT max(CAST(content->>'through_step' AS INTEGER)) FROM wander_warm_memory "
        "WHERE session_id = ? AND cluster_type = 'summary'",
        [session_id],
    )
    return int(value or 0)


# -- the corpus, as Wander sees it -------------------------------------------------


def corpus_marker(con: Connection) -> tuple[int, ...]:
    """A cheap change counter for the in-memory corpus index, different after any committed change to it: the
    dialect's :attr:`~explorer.store.dialect.Dialect.corpus_version` (on a file, the latest nodes, all nodes,
    the relations and the edits that change none of them, a domain renamed; counting the embedded ones too would
    read every vector, 20 ms at 100k nodes).
    """
    row = con.execute(dialect(con).corpus_version).fetchone()
    return tuple(int(value) for value in row or ())


# A block of code is a chunk of its own, fenced (explorer.reading.chunker.is_code): read, searched and shown as a
# source, never a place a walk goes to dwell.
_NOT_CODE = "NOT (n.type = 'raw_chunk' AND starts_with(n.text, '```'))"


def corpus_space_rows(con: Connection) -> dict[str, np.ndarray]:
    """Columns of every embedded, latest node but code: id, embedding, domain (its document's when it has none of
    its own: a synthesis belongs to its note's domain), importance, confidence, text, type, entity, document_id and
    its document's title, and the parent ids of a node with neither (a dream: it spans its parents' domains).
    """
    return dialect(con).fetch_numpy(
        con,
        "SELECT CAST(n.id AS VARCHAR) AS id, n.embedding, coalesce(n.domain, d.domain) AS domain, n.importance, "
        "n.confidence, n.text, n.type, n.entity, CAST(n.document_id AS VARCHAR) AS document_id, d.title, "
        "CASE WHEN coalesce(n.domain, d.domain) IS NULL THEN n.parent_ids END AS parent_ids "
        "FROM nodes n LEFT JOIN documents d ON d.id = n.document_id "
        f"WHERE n.is_latest AND n.embedding IS NOT NULL AND {_NOT_CODE} ORDER BY n.created_at, n.seq",
    )


def corpus_links(con: Connection) -> list[tuple[str, str, str]]:
    """(source, target, type) of every relation between nodes: the links reading and dreaming made, which the
    walk counts as evidence that two nodes are related.
    """
    # Ids as text from the database: making 40,000 UUID objects only to print them took a second at 10,000 notes.
    rows = con.execute("SELECT CAST(source_id AS VARCHAR), CAST(target_id AS VARCHAR), type FROM relations").fetchall()
    return [(str(s), str(t), str(k)) for s, t, k in rows]


def nodes_of_title(con: Connection, title: str) -> list[str]:
    """The latest embedded raw chunks of the documents titled ``title`` or known by it as an alias (a duplicate
    read under another title), case and surrounding spaces aside.
    """
    name = title.strip().lower()
    rows = con.execute(
        "SELECT n.id FROM nodes n JOIN documents d ON d.id = n.document_id "
        "WHERE (lower(trim(d.title)) = ? OR EXISTS (SELECT 1 FROM unnest(d.aliases) AS u(a) WHERE lower(trim(a)) = ?)) "
        "AND n.type = 'raw_chunk' AND n.is_latest AND n.embedding IS NOT NULL ORDER BY n.chunk_index, n.id",
        [name, name],
    ).fetchall()
    return [str(r[0]) for r in rows]


def updates_of(con: Connection, node_id: str) -> list[str]:
    """Nodes linked to ``node_id`` by an UPDATES relation, either way (tension seeking)."""
    rows = con.execute(
        "SELECT CASE WHEN source_id = ? THEN target_id ELSE source_id END FROM relations "
        "WHERE type = 'UPDATES' AND (source_id = ? OR target_id = ?)",
        [node_id, node_id, node_id],
    ).fetchall()
    return [str(r[0]) for r in rows]


def node_summaries(con: Connection, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Id → {text, type, domain, entity, parent_ids, document_id, title} for the nodes that exist."""
    ids = _ids(ids)
    if not ids:
        return {}
    rows = con.execute(
        "SELECT n.id, n.text, n.type, n.domain, n.entity, n.parent_ids, n.document_id, d.title FROM nodes n "
        f"LEFT JOIN documents d ON d.id = n.document_id WHERE n.id IN {_in(ids)}",
        ids,
    ).fetchall()
    return {
        str(i): {
            "text": t,
            "type": ty,
            "domain": d,
            "entity": e,
            "parent_ids": [str(p) for p in (ps or [])],
            "document_id": None if doc is None else str(doc),
            "title": title,
        }
        for i, t, ty, d, e, ps, doc, title in rows
    }


# -- search ------------------------------------------------------------------------


def nearest(con: Connection, kind: str, vector: np.ndarray, limit: int) -> list[tuple[str, str, str | None, float]]:
    """(id, text, session_id, cosine) of the loci, crystals or resonances nearest to ``vector``."""
    table, text = {
        "locus": ("wander_loci", "concept"),
        "crystal": ("wander_crystals", "insight"),
        "resonance": ("wander_resonances", "array_to_string(themes, ', ')"),
    }[kind]
    backend = dialect(con)
    distance = backend.distance("embedding", f"?::{backend.vector(len(vector))}")
    query = np.asarray(vector, dtype=np.float32).tolist()
    rows = con.execute(  # ordered by the distance alone, so PostgreSQL's HNSW index answers it
        f"SELECT id, {text}, session_id, 1 - {distance} AS score FROM {table} ORDER BY {distance} LIMIT ?",
        [query, query, limit],
    ).fetchall()
    return [(str(i), t, None if s is None else str(s), float(sc)) for i, t, s, sc in rows]
