"""A wander session's life: create it at its seed, read it, change its settings, move it through the status
machine (:data:`~explorer.wander.guards.TRANSITIONS`), delete it.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.records.wander import Locus, Session, utcnow
from explorer.runtime import Runtime
from explorer.store import events as events_store
from explorer.store import wander as wander_store
from explorer.store.database import Connection
from explorer.text import shorten
from explorer.wander.caches import corpus_space, forget_session
from explorer.wander.config import SessionConfig, check_session_numbers
from explorer.wander.errors import InvalidRequest, SessionNotFound
from explorer.wander.guards import require_transition

if TYPE_CHECKING:
    from explorer.wander.space import CorpusSpace  # imported where a space is built (caches), not to list sessions

DOMAIN_NEIGHBOURS = 5  # nearest nodes whose domains a new concept inherits
DOMAIN_MIN_SIMILARITY = 0.2
EDITABLE = {
    "name",
    "attractor",
    "allowed_domains",
    "forbidden_domains",
    "max_drift_distance",
    "max_steps",
    "cloud_budget_cents",
    "temperature",
    "human_checkpoint_frequency",
    "status",
}


def embed_one(runtime: Runtime, text: str) -> np.ndarray:
    """The unit vector of one text (a seed, an attractor, a concept a person names)."""
    return runtime.embedder.embed([text])[0]


def infer_domains(space: CorpusSpace, vector: np.ndarray) -> list[str]:
    """The most common domain among the nearest nodes (none when nothing is near), each text voting once: notes on
    several entities of one sentence are that sentence again, one voice, not one per entity.
    """
    rows = [space.row(i) for i, s in space.index.top_k(vector, DOMAIN_NEIGHBOURS) if s >= DOMAIN_MIN_SIMILARITY]
    voices = {space.texts[row]: row for row in rows if row is not None}
    domains = Counter(d for row in voices.values() if (d := space.domain(row)) is not None)
    return [domains.most_common(1)[0][0]] if domains else []


def require_session(con: Connection, session_id: str) -> Session:
    """The session, or :class:`SessionNotFound`."""
    session = wander_store.get_session(con, str(session_id))
    if session is None:
        raise SessionNotFound(str(session_id))
    return session


def _titled_node(space: CorpusSpace, node_ids: list[str], vector: np.ndarray) -> str | None:
    """Of the chunks of the documents the seed names by title, the one nearest to it: a walk started from a
    note's title starts on that note, so its first step already joins two stored nodes.
    """
    rows = [(i, r) for i in node_ids if (r := space.row(i)) is not None]
    if not rows:
        return None
    return max(rows, key=lambda item: float(space.index.matrix[item[1]] @ vector))[0]


def _seed_vector(runtime: Runtime, space: CorpusSpace, titled: list[str], seed_concept: str) -> np.ndarray:
    """The seed's vector: the note's own when the seed names a note of one chunk that has a domain, else the
    model's embedding of the seed.

    Why: a walk started from such a note's title stands on the note's vector and takes its domain (see
    :func:`create_session`), so the seed's own embedding would be computed for nothing, and the first embedding
    in a process loads the model (seconds; `explorer wander new` is a process of its own).
    """
    rows = [row for node_id in titled if (row := space.row(node_id)) is not None]
    if len(rows) == 1 and space.domains(rows[0]):
        return space.index.matrix[rows[0]].copy()
    return embed_one(runtime, seed_concept)


def _domain_list(value: Sequence[str] | str | None) -> list[str] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    cleaned = [d.strip() for d in items if d and d.strip()]
    return cleaned or None


def create_session(runtime: Runtime, config: SessionConfig) -> Session:
    """A new active session standing at its seed locus.

    Example::

        session = create_session(runtime, SessionConfig(seed_concept="garbage collection", random_seed=1))
        session.status, session.step_count  # ('active', 0)
    """
    seed_concept = (config.seed_concept or "").strip()
    if not seed_concept:
        raise InvalidRequest("a session needs a seed concept")
    with runtime.db.connect() as con:  # closed while the model embeds: other processes get the file
        space = corpus_space(runtime, con)
        titled = wander_store.nodes_of_title(con, seed_concept)
    seed_vector = _seed_vector(runtime, space, titled, seed_concept)
    attractor = (config.attractor or "").strip() or None
    session = Session(
        name=(config.name or "").strip() or f"Wander from {shorten(seed_concept, 8)}",
        seed_concept=seed_concept,
        seed_embedding=seed_vector,
        attractor=attractor,
        attractor_embedding=embed_one(runtime, attractor) if attractor else None,
        allowed_domains=_domain_list(config.allowed_domains),
        forbidden_domains=_domain_list(config.forbidden_domains),
        max_drift_distance=config.max_drift_distance,
        max_steps=config.max_steps,
        cloud_budget_cents=config.cloud_budget_cents,
        temperature=config.temperature,
        human_checkpoint_frequency=config.human_checkpoint_frequency,
        random_seed=config.random_seed if config.random_seed is not None else secrets.randbelow(2**31),
    )
    node_id = _titled_node(space, titled, seed_vector)
    row = space.row(node_id) if node_id else None
    if row is not None:  # the fence is drawn around the note the seed names, not around its title's words
        session.seed_embedding = space.index.matrix[row].copy()
    domains = (space.domains(row) if row is not None else []) or infer_domains(space, seed_vector)
    with runtime.db.connect() as con:
        now = utcnow()
        seed = Locus(
            session_id=session.id,
            concept=seed_concept,
            embedding=space.index.matrix[row].copy() if row is not None else seed_vector,
            source_type="SEED",
            strategy="seed",
            node_id=node_id,
            domains=domains,
            visit_count=1,
            last_visited=now,
            novelty_score=1.0,
            interestingness=0.5,
            uncertainty=0.5,
        )
        session.current_locus_id = seed.id
        with runtime.db.transaction() as tx:
            wander_store.insert_session(tx, session)
            wander_store.insert_loci(tx, [seed])
            events_store.emit(
                tx,
                "wander.session.created",
                {
                    "name": session.name,
                    "seed_concept": seed_concept,
                    "random_seed": session.random_seed,
                    "seed_locus_id": seed.id,
                },
                session.id,
            )
        return require_session(con, session.id)


def get_session(runtime: Runtime, session_id: str) -> Session:
    """The session, or :class:`SessionNotFound`.

    Example::

        session = get_session(runtime, session_id)
        session.status, session.step_count, session.cloud_spent_cents
    """
    with runtime.db.connect() as con:
        return require_session(con, session_id)


def list_sessions(runtime: Runtime, status: str | None = None, limit: int = 50, offset: int = 0) -> list[Session]:
    """The sessions to pick from (newest first, a page at a time), optionally only those in one status.

    Example::

        for session in list_sessions(runtime, status="paused", limit=10):
            print(session.name, session.status_reason)
    """
    if status is not None and status not in ("active", "paused", "completed", "abandoned"):
        raise InvalidRequest(f"unknown status {status!r}; use active, paused, completed or abandoned")
    with runtime.db.connect() as con:
        return wander_store.list_sessions(con, status=status, limit=limit, offset=offset)


def set_status(runtime: Runtime, session_id: str, target: str, reason: str | None, subject: str) -> Session:
    """Move the session to ``target`` if the status machine allows it, logging ``subject``; a session made
    active again starts with a clean circuit breaker.
    """
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        require_transition(session, target)
        values: dict[str, Any] = {
            "status": target,
            "status_reason": reason,
            "pause_kind": "person" if target == "paused" else None,
        }
        if target == "active":
            # a reviewed session starts with a clean breaker: old failures and loops were seen
            values.update(failure_streak=0, fence_streak=0, circuit_reset_step=session.step_count)
        if target in ("completed", "abandoned"):
            values["completed_at"] = utcnow()
        with runtime.db.transaction() as tx:
            wander_store.update_session(tx, session.id, **values)
            events_store.emit(
                tx, subject, {"reason": reason, "step_number": session.step_count, "status": target}, session.id
            )
        return require_session(con, session.id)


def pause(runtime: Runtime, session_id: str, reason: str | None = None) -> Session:
    """A person stops the walk for now, to look at its trace and crystals; resume takes it on from here.

    Example::

        pause(runtime, session_id, "reading the trace").status  # 'paused'
    """
    return set_status(runtime, session_id, "paused", reason or "paused by a person", "wander.session.paused")


def resume(runtime: Runtime, session_id: str) -> Session:
    """Lets a paused walk go on after a person has looked (at a checkpoint, a tripped breaker, a pause).

    Example::

        if get_session(runtime, session_id).status == "paused":
            resume(runtime, session_id)
    """
    return set_status(runtime, session_id, "active", None, "wander.session.resumed")


def stop(runtime: Runtime, session_id: str) -> Session:
    """A person ends the walk here (completed): no more steps, its trace and crystals stay to review.

    Example::

        stop(runtime, session_id).status  # 'completed'
    """
    return set_status(runtime, session_id, "completed", "stopped by a person", "wander.session.completed")


def abandon(runtime: Runtime, session_id: str, reason: str | None = None) -> Session:
    """Ends a walk that led nowhere, keeping its trace and crystals to read (unlike delete).

    Example::

        abandon(runtime, session_id, "circled the same two notes").status  # 'abandoned'
    """
    return set_status(runtime, session_id, "abandoned", reason or "abandoned by a person", "wander.session.completed")


def update_session(runtime: Runtime, session_id: str, **fields: Any) -> Session:
    """Change name, attractor, domains, drift limit, max steps, budget, temperature, checkpoint frequency,
    or status (through the same transitions as pause/resume/stop).

    Example::

        update_session(runtime, session_id, max_steps=200, forbidden_domains="finance, sports")
        update_session(runtime, session_id, status="paused")  # as pause() does
    """
    unknown = set(fields) - EDITABLE
    if unknown:
        raise InvalidRequest(f"cannot update {', '.join(sorted(unknown))}; editable: {', '.join(sorted(EDITABLE))}")
    check_session_numbers(fields)
    status = fields.pop("status", None)
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        values: dict[str, Any] = {}
        for name, value in fields.items():
            if name == "name":
                if not (value or "").strip():
                    raise InvalidRequest("a session name cannot be empty")
                values["name"] = value.strip()
            elif name == "attractor":
                attractor = (value or "").strip() or None
                values.update(
                    attractor=attractor, attractor_embedding=embed_one(runtime, attractor) if attractor else None
                )
            elif name in ("allowed_domains", "forbidden_domains"):
                values[name] = _domain_list(value)
            else:
                values[name] = value
        if values:
            with runtime.db.transaction() as tx:
                wander_store.update_session(tx, session.id, **values)
    if status is not None and status != session.status:
        action = {"active": resume, "paused": pause, "completed": stop, "abandoned": abandon}.get(status)
        if action is None:
            raise InvalidRequest(f"unknown status {status!r}")
        return action(runtime, session_id)
    return get_session(runtime, session_id)


def delete_session(runtime: Runtime, session_id: str) -> None:
    """The session and all it owns; its crystals stay with session_id NULL.

    Example::

        delete_session(runtime, session_id)
        get_session(runtime, session_id)  # raises SessionNotFound
    """
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        with runtime.db.transaction() as tx:
            wander_store.delete_session(tx, session.id)
    forget_session(runtime, session.id)
