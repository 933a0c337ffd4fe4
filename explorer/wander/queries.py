"""What the surfaces read of Wander, read-only: a session whole, its loci and trace, crystals and resonances
across sessions, a crystal traced back to its sources, the event log, search by meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal, TypeGuard

from explorer.records import Retired
from explorer.records.wander import Crystal, CrystalEvidence, Locus, Resonance, SearchHit, SessionView, Trace
from explorer.runtime import Runtime
from explorer.store import corpus as corpus_store
from explorer.store import events as events_store
from explorer.store import wander as wander_store
from explorer.store.ids import is_uuid
from explorer.wander.errors import InvalidRequest, NotFound
from explorer.wander.review import require_crystal
from explorer.wander.sessions import embed_one, require_session

SearchKind = Literal["locus", "crystal", "resonance"]
SEARCH_TYPES: tuple[SearchKind, ...] = ("locus", "crystal", "resonance")


def _is_search_kind(name: str) -> TypeGuard[SearchKind]:
    return name in SEARCH_TYPES


def search(runtime: Runtime, query: str, types: Sequence[str] = SEARCH_TYPES, limit: int = 10) -> list[SearchHit]:
    """Loci, crystals and resonances nearest in meaning to ``query``, best first.

    Example::

        for hit in search(runtime, "forgetting as garbage collection", types=("crystal",), limit=3):
            print(hit.score, hit.text)
    """
    query = (query or "").strip()
    if not query:
        raise InvalidRequest("search needs a query")
    unknown = set(types) - set(SEARCH_TYPES)
    if unknown:
        raise InvalidRequest(f"unknown search types {sorted(unknown)}; use {', '.join(SEARCH_TYPES)}")
    vector = embed_one(runtime, query)
    hits: list[SearchHit] = []
    with runtime.db.connect() as con:
        for kind in filter(_is_search_kind, types):  # every one is, checked above
            hits += [
                SearchHit(kind, i, text, score, sid)
                for i, text, sid, score in wander_store.nearest(con, kind, vector, limit)
            ]
    return sorted(hits, key=lambda h: -h.score)[:limit]


def session_view(runtime: Runtime, session_id: str) -> SessionView:
    """All of a session at once (loci, trace, residues, resonances, crystals, warm memory), for the map and
    the export, read in one connection so the parts agree.

    Example::

        view = session_view(runtime, session_id)
        len(view.trace), [c.insight for c in view.crystals]
    """
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        retired = corpus_store.retired_documents(con)
        crystals = wander_store.list_crystals(con, session_id=session.id, with_vectors=True)
        return SessionView(
            session=session,
            loci=wander_store.list_loci(con, session.id),
            trace=wander_store.list_traces(con, session.id),
            residues=wander_store.list_residues(con, session.id),
            resonances=wander_store.list_resonances(con, session_id=session.id, with_vectors=True),
            crystals=[marked(crystal, retired) for crystal in crystals],  # the archive's JSON says which left
            warm_memory=wander_store.list_warm_memory(con, session.id),
        )


def list_loci(
    runtime: Runtime, session_id: str, visited: bool | None = None, min_interestingness: float | None = None
) -> list[Locus]:
    """A session's loci (``visited`` True: only those the walk stood on; False: only those it saw).

    Example::

        stood_on = list_loci(runtime, session_id, visited=True, min_interestingness=0.6)
    """
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        return wander_store.list_loci(con, session.id, visited=visited, min_interestingness=min_interestingness)


def list_trace(runtime: Runtime, session_id: str) -> list[Trace]:
    """A session's path step by step, oldest first: where each step went, why, and what it cost.

    Example::

        for trace in list_trace(runtime, session_id):
            print(trace.step_number, trace.strategy, trace.cost_cents)
    """
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        return wander_store.list_traces(con, session.id)


def get_locus(runtime: Runtime, locus_id: str) -> Locus:
    """One locus with its connections (adjacent_to, bridges_to, contradicts).

    Example::

        locus = get_locus(runtime, session.current_locus_id)
        locus.concept, locus.bridges_to
    """
    with runtime.db.connect() as con:
        found = wander_store.get_loci(con, [str(locus_id)]) if is_uuid(locus_id) else []
        if not found:
            raise NotFound(f"no locus {locus_id!r}")
        return found[0]


def list_crystals(
    runtime: Runtime, status: str | None = None, min_confidence: float | None = None, session_id: str | None = None
) -> list[Crystal]:
    """The crystals a person reviews, filtered by status, confidence or the session that formed them.

    Example::

        to_review = [c for c in list_crystals(runtime, min_confidence=0.7) if c.review_state == "pending"]
    """
    with runtime.db.connect() as con:
        of = wander_store.session_id_of(con, session_id) if session_id else None
        crystals = wander_store.list_crystals(con, status=status, min_confidence=min_confidence, session_id=of)
        retired = corpus_store.retired_documents(con)
    return [marked(crystal, retired) for crystal in crystals]


def marked(crystal: Crystal, retired: Mapping[str, Retired]) -> Crystal:
    """The crystal with each end it connects whose note was edited or deleted since marked ``"retired"``:
    ``"changed"`` or ``"removed"`` (the document stays its source; the corpus reads it no more).

    Example::

        marked(crystal, {"3f2a…": "removed"}).connects[0]["retired"]  # 'removed'
    """
    if not any(str(end.get("document_id")) in retired for end in crystal.connects):
        return crystal
    ends = [
        {**end, "retired": retired[str(end.get("document_id"))]} if str(end.get("document_id")) in retired else end
        for end in crystal.connects
    ]
    return replace(crystal, connects=ends)


def list_resonances(runtime: Runtime, session_id: str | None = None, status: str | None = None) -> list[Resonance]:
    """Resonances (a session's own and the cross-session ones it supports); ``current_strength()`` gives the
    decayed value.

    Example::

        for r in list_resonances(runtime, session_id=session_id, status="confirmed"):
            print(r.themes, r.current_strength())
    """
    with runtime.db.connect() as con:
        of = wander_store.session_id_of(con, session_id) if session_id else None
        return wander_store.list_resonances(con, session_id=of, status=status)


def crystal_evidence(runtime: Runtime, crystal_id: str) -> CrystalEvidence:
    """A crystal traced back: its residues, their loci, the corpus nodes behind them and those nodes' source chunks.

    Example::

        evidence = crystal_evidence(runtime, crystal.id)
        [chunk.text for chunk in evidence.chunks]  # the passages the insight rests on
    """
    with runtime.db.connect() as con:
        retired = corpus_store.retired_documents(con)
        crystal = marked(require_crystal(con, crystal_id), retired)
        by_type: dict[str, list[str]] = {}
        for item in crystal.supporting_evidence:
            by_type.setdefault(str(item.get("type")), []).append(str(item.get("id")))
        residues = wander_store.get_residues(con, by_type.get("residue", []))
        loci = wander_store.get_loci(
            con, [*by_type.get("locus", []), *(r.to_locus_id for r in residues)], with_vectors=False
        )
        node_ids = [*by_type.get("node", []), *(locus.node_id for locus in loci if locus.node_id)]
        nodes = corpus_store.get_nodes(con, node_ids, with_vectors=False)
        documents = {p: n.document_id for n in nodes if n.type != "raw_chunk" for p in n.parent_ids}
        chunks = [n for n in nodes if n.type == "raw_chunk"]
        chunks += [  # the chunks of the source a derived node stands for, not what it was read against
            n
            for n in corpus_store.get_nodes(con, list(documents), with_vectors=False)
            if n.type == "raw_chunk" and n.id not in {c.id for c in chunks} and documents[n.id] in (None, n.document_id)
        ]
        return CrystalEvidence(crystal, residues, loci, nodes, chunks, retired)


def session_events(
    runtime: Runtime, session_id: str, after_seq: int = 0, limit: int = 1000
) -> list[events_store.Event]:
    """The session's persisted events (docs/wander.md#nats-event-subjects), oldest first.

    Example::

        for event in session_events(runtime, session_id, after_seq=last_seen):
            print(event.seq, event.subject, event.payload.get("step_number"))
    """
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        return events_store.list_events(
            con, session_id=session.id, subject_prefix="wander.", after_seq=after_seq, limit=limit
        )
