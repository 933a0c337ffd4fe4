"""Wander's engine API, shared by the CLI and the app.

Every function takes the :class:`~explorer.runtime.Runtime` first. Whatever
calls a model follows the engine's one pattern, read → think → write (as
:mod:`explorer.dreaming.service` does): ``_read_*`` gathers its inputs in one
short connection, which also logs ``wander.step.started``; the pure step
(:func:`~explorer.wander.walk.take_step`) runs with no connection held, its
callbacks reading node texts from memory and a
crystal's evidence, when one may form, in a connection of their own between
model calls; ``_commit`` writes every row and event of the step in one
transaction that first re-checks what the step depended on (the session still
there, still active, at the same step). Other processes (the app, the CLI, a
worker) get the file while the model thinks. A step happens entirely or not at
all. A walk (:func:`run`) writes one step and reads the next in one opening of
the file, and leaves folding the write-ahead log into it to a later step or
its end (see :mod:`explorer.store.database`): opening and checkpointing the
file were most of a step's cost at scale. Corpus nodes (vectors, domains,
texts) and each session's loci are kept in memory per process (see
:mod:`explorer.wander.space`), rebuilt when the store's change counters move.
"""

from __future__ import annotations

import secrets
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeGuard, TypeVar

import duckdb
import numpy as np

from explorer.errors import Remedy
from explorer.records import Progress
from explorer.records.wander import (
    Crystal,
    CrystalEvidence,
    FenceAction,
    FenceAnchor,
    Locus,
    Residue,
    Resonance,
    RunResult,
    SearchHit,
    Session,
    SessionView,
    StepResult,
    Trace,
    utcnow,
)
from explorer.runtime import Runtime
from explorer.store import corpus as corpus_store
from explorer.store import events
from explorer.store import wander as store
from explorer.store.database import Connection
from explorer.text import shorten
from explorer.wander import crystal as crystals
from explorer.wander import selection
from explorer.wander.config import SessionConfig, WanderTuning, check_session_numbers
from explorer.wander.crystal import CrystalAttempt, Evidence
from explorer.wander.errors import InvalidRequest, NotFound, SessionNotFound, SessionStateError, WanderError
from explorer.wander.guards import Spending, require_active, require_transition
from explorer.wander.review import require_crystal
from explorer.wander.review import review_crystal as review_crystal  # a crystal's review, with the rest of Wander
from explorer.wander.space import CorpusSpace, LociSpace
from explorer.wander.walk import StepCallbacks, StepInputs, StepPlan, take_step

T = TypeVar("T")
TUNING = WanderTuning()
DOMAIN_NEIGHBOURS = 5  # nearest nodes whose domains a new concept inherits
DOMAIN_MIN_SIMILARITY = 0.2
SearchKind = Literal["locus", "crystal", "resonance"]
SEARCH_TYPES: tuple[SearchKind, ...] = ("locus", "crystal", "resonance")
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

_cache_lock = threading.Lock()
_corpus_cache: dict[str, CorpusSpace] = {}
_memory_cache: dict[tuple[str, str], SessionMemory] = {}
_RECENT_STEPS = 32  # trace rows kept in memory: enough for the loop window and the recent path


# -- in-memory spaces ----------------------------------------------------------


def _db_key(runtime: Runtime) -> str:
    return str(Path(runtime.db.path).resolve())


def corpus_space(runtime: Runtime, con: Connection) -> CorpusSpace:
    """The corpus as an in-memory index, rebuilt when the node counts change."""
    key = _db_key(runtime)
    marker = store.corpus_marker(con)
    with _cache_lock:
        cached = _corpus_cache.get(key)
    if cached is not None and cached.marker == marker and cached.index.dim == runtime.db.embedding_dim:
        return cached
    table = store.corpus_space_rows(con)
    ids = [str(i) for i in table["id"]]
    dim = runtime.db.embedding_dim
    vectors = np.vstack(list(table["embedding"])).astype(np.float32) if ids else np.zeros((0, dim), np.float32)

    def optional(column: str) -> list[str | None]:
        return [v if isinstance(v, str) else None for v in table[column]]

    space = CorpusSpace.build(
        dim,
        ids,
        vectors,
        optional("domain"),
        np.asarray(table["importance"], dtype=np.float32),
        np.asarray(table["confidence"], dtype=np.float32),
        marker,
        texts=[str(t) for t in table["text"]],
        types=optional("type"),
        titles=optional("title"),
        entities=optional("entity"),
        documents=[None if d is None else str(d) for d in table["document_id"]],
        relations=store.corpus_links(con),
        parents=[None if p is np.ma.masked or p is None else [str(i) for i in p] for p in table["parent_ids"]],
    )
    with _cache_lock:
        _corpus_cache[key] = space
    return space


@dataclass
class SessionMemory:
    """What a step needs of its session's past, kept between steps in this process: the loci, the
    recent trace, hot memory and the paths that led nowhere. Valid while ``marker`` (loci, steps) holds.
    """

    loci: LociSpace
    recent: list[Trace]
    hot: list[tuple[int, Residue]]
    failed_paths: list[np.ndarray]
    crystal_steps: list[int]

    @property
    def marker(self) -> tuple[int, int]:
        """The loci space's (loci, steps) counts: when the store's differ, this memory is stale."""
        return self.loci.marker


def _session_memory(
    runtime: Runtime, con: Connection, session: Session, tuning: WanderTuning = TUNING
) -> SessionMemory:
    key = (_db_key(runtime), session.id)
    marker = (store.count_loci(con, session.id), session.step_count)
    with _cache_lock:
        cached = _memory_cache.get(key)
    if cached is not None and cached.marker == marker:
        return cached
    memory = SessionMemory(
        loci=LociSpace.build(runtime.db.embedding_dim, store.list_loci(con, session.id), marker),
        recent=store.list_traces(con, session.id, last=_RECENT_STEPS),
        hot=store.residue_steps(con, session.id, after_step=store.compressed_through_step(con, session.id)),
        failed_paths=[
            w.embedding
            for w in store.list_warm_memory(con, session.id, cluster_type="failed_path", with_vectors=True)
            if w.embedding is not None
        ],
        crystal_steps=store.crystal_steps(con, session.id),
    )
    with _cache_lock:
        _memory_cache[key] = memory
    return memory


def _loci_space(runtime: Runtime, con: Connection, session: Session) -> LociSpace:
    return _session_memory(runtime, con, session).loci


def _forget_loci(runtime: Runtime, session_id: str) -> None:
    with _cache_lock:
        _memory_cache.pop((_db_key(runtime), session_id), None)


def _infer_domains(space: CorpusSpace, vector: np.ndarray) -> list[str]:
    """The most common domain among the nearest nodes (none when nothing is near)."""
    rows = [space.row(i) for i, s in space.index.top_k(vector, DOMAIN_NEIGHBOURS) if s >= DOMAIN_MIN_SIMILARITY]
    domains = Counter(d for row in rows if row is not None and (d := space.domain(row)) is not None)
    return [domains.most_common(1)[0][0]] if domains else []


def _titled_node(space: CorpusSpace, node_ids: list[str], vector: np.ndarray) -> str | None:
    """Of the chunks of the documents the seed names by title, the one nearest to it: a walk started from a
    note's title starts on that note, so its first step already joins two stored nodes.
    """
    rows = [(i, r) for i in node_ids if (r := space.row(i)) is not None]
    if not rows:
        return None
    return max(rows, key=lambda item: float(space.index.matrix[item[1]] @ vector))[0]


def _embed_one(runtime: Runtime, text: str) -> np.ndarray:
    return runtime.embedder.embed([text])[0]


# -- sessions ------------------------------------------------------------------


def _is_uuid(value: object) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _require_session(con: Connection, session_id: str) -> Session:
    session = store.get_session(con, str(session_id))
    if session is None:
        raise SessionNotFound(str(session_id))
    return session


def _domain_list(value: Sequence[str] | str | None) -> list[str] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    cleaned = [d.strip() for d in items if d and d.strip()]
    return cleaned or None


def create_session(runtime: Runtime, config: SessionConfig, tuning: WanderTuning = TUNING) -> Session:
    """A new active session standing at its seed locus."""
    seed_concept = (config.seed_concept or "").strip()
    if not seed_concept:
        raise InvalidRequest("a session needs a seed concept")
    seed_vector = _embed_one(runtime, seed_concept)
    attractor = (config.attractor or "").strip() or None
    session = Session(
        name=(config.name or "").strip() or f"Wander from {shorten(seed_concept, 8)}",
        seed_concept=seed_concept,
        seed_embedding=seed_vector,
        attractor=attractor,
        attractor_embedding=_embed_one(runtime, attractor) if attractor else None,
        allowed_domains=_domain_list(config.allowed_domains),
        forbidden_domains=_domain_list(config.forbidden_domains),
        max_drift_distance=config.max_drift_distance,
        max_steps=config.max_steps,
        cloud_budget_cents=config.cloud_budget_cents,
        temperature=config.temperature,
        human_checkpoint_frequency=config.human_checkpoint_frequency,
        random_seed=config.random_seed if config.random_seed is not None else secrets.randbelow(2**31),
    )
    with runtime.db.connect() as con:
        space = corpus_space(runtime, con)
        node_id = _titled_node(space, store.nodes_of_title(con, seed_concept), seed_vector)
        row = space.row(node_id) if node_id else None
        if row is not None:  # the fence is drawn around the note the seed names, not around its title's words
            session.seed_embedding = space.index.matrix[row].copy()
        domains = (space.domains(row) if row is not None else []) or _infer_domains(space, seed_vector)
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
            store.insert_session(tx, session)
            store.insert_loci(tx, [seed])
            events.emit(
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
        return _require_session(con, session.id)


def get_session(runtime: Runtime, session_id: str) -> Session:
    """The session, or :class:`SessionNotFound`."""
    with runtime.db.connect() as con:
        return _require_session(con, session_id)


def list_sessions(runtime: Runtime, status: str | None = None, limit: int = 50, offset: int = 0) -> list[Session]:
    """The sessions to pick from (newest first, a page at a time), optionally only those in one status."""
    if status is not None and status not in ("active", "paused", "completed", "abandoned"):
        raise InvalidRequest(f"unknown status {status!r}; use active, paused, completed or abandoned")
    with runtime.db.connect() as con:
        return store.list_sessions(con, status=status, limit=limit, offset=offset)


def _set_status(runtime: Runtime, session_id: str, target: str, reason: str | None, subject: str) -> Session:
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
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
            store.update_session(tx, session.id, **values)
            events.emit(
                tx, subject, {"reason": reason, "step_number": session.step_count, "status": target}, session.id
            )
        return _require_session(con, session.id)


def pause(runtime: Runtime, session_id: str, reason: str | None = None) -> Session:
    """A person stops the walk for now, to look at its trace and crystals; resume takes it on from here."""
    return _set_status(runtime, session_id, "paused", reason or "paused by a person", "wander.session.paused")


def resume(runtime: Runtime, session_id: str) -> Session:
    """Lets a paused walk go on after a person has looked (at a checkpoint, a tripped breaker, a pause)."""
    return _set_status(runtime, session_id, "active", None, "wander.session.resumed")


def stop(runtime: Runtime, session_id: str) -> Session:
    """A person ends the walk here (completed): no more steps, its trace and crystals stay to review."""
    return _set_status(runtime, session_id, "completed", "stopped by a person", "wander.session.completed")


def abandon(runtime: Runtime, session_id: str, reason: str | None = None) -> Session:
    """Ends a walk that led nowhere, keeping its trace and crystals to read (unlike delete)."""
    return _set_status(runtime, session_id, "abandoned", reason or "abandoned by a person", "wander.session.completed")


def update_session(runtime: Runtime, session_id: str, **fields: Any) -> Session:
    """Change name, attractor, domains, drift limit, max steps, budget, temperature, checkpoint frequency,
    or status (through the same transitions as pause/resume/stop).
    """
    unknown = set(fields) - EDITABLE
    if unknown:
        raise InvalidRequest(f"cannot update {', '.join(sorted(unknown))}; editable: {', '.join(sorted(EDITABLE))}")
    check_session_numbers(fields)
    status = fields.pop("status", None)
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        values: dict[str, Any] = {}
        for name, value in fields.items():
            if name == "name":
                if not (value or "").strip():
                    raise InvalidRequest("a session name cannot be empty")
                values["name"] = value.strip()
            elif name == "attractor":
                attractor = (value or "").strip() or None
                values.update(
                    attractor=attractor, attractor_embedding=_embed_one(runtime, attractor) if attractor else None
                )
            elif name in ("allowed_domains", "forbidden_domains"):
                values[name] = _domain_list(value)
            else:
                values[name] = value
        if values:
            with runtime.db.transaction() as tx:
                store.update_session(tx, session.id, **values)
    if status is not None and status != session.status:
        action = {"active": resume, "paused": pause, "completed": stop, "abandoned": abandon}.get(status)
        if action is None:
            raise InvalidRequest(f"unknown status {status!r}")
        return action(runtime, session_id)
    return get_session(runtime, session_id)


def delete_session(runtime: Runtime, session_id: str) -> None:
    """The session and all it owns; its crystals stay with session_id NULL."""
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        with runtime.db.transaction() as tx:
            store.delete_session(tx, session.id)
    _forget_loci(runtime, session.id)


# -- the step --------------------------------------------------------------------


def _gather_evidence(
    con: Connection,
    loci: LociSpace,
    limit: int,
    resonance: Resonance,
    residue: Residue | None,
    also: Sequence[str] = (),
) -> Evidence:
    """A resonance's latest residues (and the residues ``also`` named, first), the loci they went from and to,
    those loci's corpus nodes and the raw chunks behind each node (the node itself, or the chunks it was
    derived from).
    """
    supporting = [i for i in resonance.supporting_residue_ids if residue is None or i != residue.id][-limit:]
    ids = list(dict.fromkeys([*also, *supporting]))
    residues = store.get_residues(con, ids)
    if residue is not None:
        residues.append(residue)
    residues = residues[-(limit + len(also)) :]
    wanted = [i for r in residues for i in (r.from_locus_id, r.to_locus_id) if i]
    found = {i: loci.loci[i] for i in wanted if i in loci.loci}
    found.update({x.id: x for x in store.get_loci(con, [i for i in wanted if i not in found], with_vectors=False)})
    nodes = store.node_summaries(con, [x.node_id for x in found.values() if x.node_id])
    parents = store.node_summaries(
        con, [p for n in nodes.values() if n["type"] != "raw_chunk" for p in n["parent_ids"]]
    )
    chunks: dict[str, list[dict[str, Any]]] = {}
    for node_id, node in nodes.items():
        behind = [(node_id, node)] if node["type"] == "raw_chunk" else [(p, parents.get(p)) for p in node["parent_ids"]]
        chunks[node_id] = [
            {**summary, "id": chunk_id}
            for chunk_id, summary in behind
            if summary is not None and _source_chunk(summary, node)
        ]
    return Evidence(residues, found, nodes, chunks)


def _source_chunk(candidate: dict[str, Any], node: dict[str, Any]) -> bool:
    """Whether ``candidate`` is a raw chunk of the source ``node`` stands for: its own document's (a synthesis
    also derives from the passages it was read against, which are other sources), or any parent chunk of a node
    with no document (a dream, a fusion).
    """
    if candidate.get("type") != "raw_chunk":
        return False
    return node.get("document_id") is None or candidate.get("document_id") == node.get("document_id")


def _known_crystals(con: Connection) -> crystals.KnownCrystals:
    return crystals.KnownCrystals(store.crystal_vectors(con)[1], frozenset(store.crystal_pairs(con)))


def _read_inputs(
    runtime: Runtime, con: Connection, session: Session, memory: SessionMemory, tuning: WanderTuning
) -> StepInputs:
    corpus = corpus_space(runtime, con)
    loci = memory.loci
    here = loci.loci.get(session.current_locus_id or "")
    if here is None:
        raise WanderError(f"session {session.id} has lost its current locus; delete it and start a new one")
    recent = memory.recent[-max(tuning.loop_window, tuning.path_memory + 1) :]
    path = [
        loci.loci[t.to_locus_id]
        for t in recent[-(tuning.path_memory + 1) :]
        if t.to_locus_id in loci.loci and t.to_locus_id != here.id
    ]
    since_reset = [t.to_locus_id for t in recent if t.step_number > session.circuit_reset_step]
    updates = store.updates_of(con, here.node_id) if here.node_id else []
    return StepInputs(
        session=session,
        here=here,
        corpus=corpus,
        loci=loci,
        path=path[-tuning.path_memory :],
        since_reset=since_reset,
        hot=list(memory.hot),
        resonances=store.resonances_in_reach(con, session.id),
        failed_paths=np.vstack(memory.failed_paths)
        if memory.failed_paths
        else np.zeros((0, runtime.db.embedding_dim), np.float32),
        visited_domains=set(loci.visited_domains),
        pending=loci.loci.get(session.pending_locus_id) if session.pending_locus_id else None,
        crystal_steps=list(memory.crystal_steps),
        updates=updates,
        already_exhausted=runtime.gateway.model_for("cloud")[1] == "cloud"
        and any(
            e.payload.get("exhausted")
            for e in events.list_events(con, session_id=session.id, subject_prefix="wander.budget.low")
        ),
    )


def _callbacks(runtime: Runtime, inputs: StepInputs, tuning: WanderTuning) -> StepCallbacks:
    """What the pure step may read while it thinks: node texts from the corpus space in memory; the rest (a
    resonance's evidence, earlier crystals, only when a crystal may form) each in a short connection of its
    own, so none is held across the model calls between them.
    """

    def read(query: Callable[[Connection], T]) -> T:
        with runtime.db.connect() as con:
            return query(con)

    def node_text(ids: list[str]) -> dict[str, dict[str, Any]]:
        found = inputs.corpus.summaries(ids)
        missing = [i for i in ids if i not in found]  # only nodes outside the space (none, as candidates go)
        return {**found, **read(lambda con: store.node_summaries(con, missing))} if missing else found

    limit, loci = tuning.crystal_evidence, inputs.loci
    return StepCallbacks(
        embed=runtime.embedder.embed,
        node_text=node_text,
        evidence=lambda resonance, residue: read(lambda con: _gather_evidence(con, loci, limit, resonance, residue)),
        last_attempt=lambda resonance_id: read(lambda con: store.last_crystal_attempt(con, resonance_id)),
        known_crystals=lambda: read(_known_crystals),
        related=lambda a, b: selection.pair_relatedness(inputs.corpus, a, b, tuning),
    )


def _write_plan(con: Connection, plan: StepPlan) -> None:
    session_id = plan.trace.session_id
    store.insert_loci(con, plan.new_loci)
    for locus_id, values in plan.locus_updates.items():
        store.update_locus(con, locus_id, **values)
    store.insert_trace(con, plan.trace)
    if plan.residue is not None:
        store.insert_residue(con, plan.residue)
    outcome = plan.resonance_outcome
    store.insert_resonances(con, outcome.created)
    for r in outcome.updated:
        store.update_resonance(
            con,
            r.id,
            session_id=r.session_id,
            occurrences=r.occurrences,
            strength=r.strength,
            status=r.status,
            supporting_residue_ids=r.supporting_residue_ids,
            last_reinforced_at=r.last_reinforced_at,
        )
    if plan.crystal is not None:
        store.insert_crystal(con, plan.crystal)
    store.insert_warm_memory(con, plan.warm)
    store.update_session(con, session_id, **plan.session_updates)
    events.emit_many(con, plan.events, session_id)


def _recheck(con: Connection, read: Session) -> None:
    """Refuse to write a step whose session changed while the model was thinking (paused, stopped, deleted,
    or stepped by another process): the step is dropped, nothing half-written.
    """
    now = store.session_progress(con, read.id)
    if now is None:
        raise SessionNotFound(read.id)
    status, step_count = now
    if status != "active":
        raise SessionStateError(
            f"session {read.id} became {status} while this step was thinking; the step was not kept",
            remedy=Remedy.RESUME_SESSION if status == "paused" else None,
            subject=read.id,
        )
    if step_count != read.step_count:
        raise SessionStateError(
            f"session {read.id} took step {step_count} in another process while this step was thinking; "
            "this step was not kept, try again"
        )


def _commit(runtime: Runtime, plan: StepPlan, read: Session) -> None:
    """All of a step's rows and events, in one transaction, if the session is still as the step read it."""
    try:
        with runtime.db.transaction() as tx:
            _recheck(tx, read)
            _write_plan(tx, plan)
    except duckdb.ConstraintException as exc:
        if "wander_traces" not in str(exc) and "step_number" not in str(exc):
            raise
        # UNIQUE(session_id, step_number): another process took this step while we were thinking
        raise SessionStateError(
            f"session {plan.trace.session_id} took step {plan.trace.step_number} in another "
            "process at the same time; this step was not kept, try again"
        ) from exc


def _read_step(runtime: Runtime, session_id: str, tuning: WanderTuning) -> tuple[StepInputs, SessionMemory]:
    """Everything a step starts from, read in one short connection, which also logs ``wander.step.started``:
    the step begins here, before any model is asked, and a follower sees it while the step thinks.
    """
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        require_active(session)
        if session.step_count >= session.max_steps:
            _set_status(
                runtime, session.id, "completed", f"reached max steps ({session.max_steps})", "wander.session.completed"
            )
            raise SessionStateError(
                f"session {session.id} has reached its max steps ({session.max_steps}) and is "
                "now completed; raise max steps to go on"
            )
        memory = _session_memory(runtime, con, session, tuning)
        inputs = _read_inputs(runtime, con, session, memory, tuning)
        events.emit(
            con,
            "wander.step.started",
            {
                "step_number": session.step_count + 1,
                "from_locus_id": inputs.here.id,
                "from_concept": shorten(inputs.here.concept, 20),
            },
            session.id,
        )
        return inputs, memory


def step(runtime: Runtime, session_id: str, tuning: WanderTuning = TUNING) -> StepResult:
    """Take one step of an active session (wander.md's wander_step): read, think with the file free, write."""
    return _step(runtime, _read_step(runtime, session_id, tuning), tuning, read_next=False)[0]


def _step(
    runtime: Runtime, read: tuple[StepInputs, SessionMemory], tuning: WanderTuning, read_next: bool
) -> tuple[StepResult, tuple[StepInputs, SessionMemory] | None]:
    """Think from what was read, then write; with ``read_next``, also read the next step while the file is
    open for the write (a walk of many steps opens it once a step, not twice).
    """
    inputs, memory = read
    spending = Spending(runtime.gateway, inputs.session, tuning)
    plan = take_step(inputs, spending, _callbacks(runtime, inputs, tuning), tuning, utcnow())
    with runtime.db.connect(checkpoint=not read_next):  # the next step's write folds the log in, or run() does
        try:
            _commit(runtime, plan, inputs.session)
        except BaseException:
            _forget_loci(runtime, inputs.session.id)
            raise
        _remember(memory, plan)
        if not read_next or plan.result.status != "active":
            return plan.result, None
        try:
            return plan.result, _read_step(runtime, inputs.session.id, tuning)
        except WanderError:  # this step stands; the next one reads again and reports what stops it
            return plan.result, None


def _remember(memory: SessionMemory, plan: StepPlan) -> None:
    """Bring the session's memory in this process up to date with what the step wrote (after its commit)."""
    loci = memory.loci
    loci.add(plan.new_loci)
    for locus_id, values in plan.locus_updates.items():
        if locus_id in loci.loci:
            loci.loci[locus_id] = replace(loci.loci[locus_id], **values)
    loci.loci[plan.visited.id] = plan.visited
    loci.mark_visited(plan.visited)
    memory.recent = [*memory.recent, plan.trace][-_RECENT_STEPS:]
    if plan.crystal is not None:
        memory.crystal_steps.append(plan.trace.step_number)
    if plan.residue is not None:
        memory.hot.append((plan.trace.step_number, plan.residue))
    for warm in plan.warm:
        if warm.cluster_type == "summary":
            through = warm.content["through_step"]
            memory.hot = [(number, r) for number, r in memory.hot if number > through]
        elif warm.cluster_type == "failed_path" and warm.embedding is not None:
            memory.failed_paths.append(warm.embedding)
    loci.marker = (len(loci.loci), plan.trace.step_number)


def run(
    runtime: Runtime, session_id: str, steps: int, progress: Progress | None = None, tuning: WanderTuning = TUNING
) -> RunResult:
    """Up to ``steps`` steps; stops early when the session pauses or completes, and says why."""
    if steps < 1:
        raise InvalidRequest("the number of steps must be at least 1")
    done = formed = 0
    stopped: str | None = None
    require_active(get_session(runtime, session_id))
    read: tuple[StepInputs, SessionMemory] | None = None
    try:
        while done < steps and stopped is None:
            # holds the file only to read and to write (writing one step and reading the next at once)
            result, read = _step(
                runtime, read or _read_step(runtime, session_id, tuning), tuning, read_next=done + 1 < steps
            )
            done += 1
            formed += result.crystal is not None
            if result.status != "active":
                stopped = f"{result.status}: {result.status_reason}"
            if progress:
                progress(done, steps, shorten(result.to_locus.concept, 6))
    finally:
        runtime.flush()
        runtime.db.checkpoint()
    return RunResult(done, formed, stopped)


# -- interventions ---------------------------------------------------------------


def _require_open(session: Session, action: str) -> None:
    if session.status not in ("active", "paused"):
        raise SessionStateError(f"cannot {action} session {session.id}: it is {session.status}")


def inject(runtime: Runtime, session_id: str, concept: str, force_visit: bool = True) -> Locus:
    """A person's concept as a new locus; with ``force_visit`` the next step goes there."""
    concept = (concept or "").strip()
    if not concept:
        raise InvalidRequest("inject needs a concept")
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        _require_open(session, "inject into")
        loci = _loci_space(runtime, con, session)
        locus = loci.locus_for_concept(concept)
        if locus is None:
            vector = _embed_one(runtime, concept)
            locus = Locus(
                session_id=session.id,
                concept=concept,
                embedding=vector,
                source_type="SERENDIPITOUS",
                strategy="injected",
                domains=_infer_domains(corpus_space(runtime, con), vector),
                interestingness=0.7,
                uncertainty=0.6,
            )
            new = [locus]
        else:
            new = []
        with runtime.db.transaction() as tx:
            store.insert_loci(tx, new)
            if force_visit:
                store.update_session(tx, session.id, pending_locus_id=locus.id)
            events.emit(
                tx,
                "wander.locus.injected",
                {"locus_id": locus.id, "concept": concept, "force_visit": force_visit},
                session.id,
            )
    _forget_loci(runtime, session.id)
    return locus


def _is_fence_action(action: str) -> TypeGuard[FenceAction]:
    return action in ("include", "exclude")


def fence(runtime: Runtime, session_id: str, concept: str, action: str) -> Session:
    """Widen the fence around ``concept`` (include) or cut it out (exclude)."""
    if not _is_fence_action(action):
        raise InvalidRequest(f"fence action must be 'include' or 'exclude', not {action!r}")
    concept = (concept or "").strip()
    if not concept:
        raise InvalidRequest("fence needs a concept")
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        _require_open(session, "fence")
        anchor = FenceAnchor(concept, action, _embed_one(runtime, concept))
        with runtime.db.transaction() as tx:
            store.update_session(tx, session.id, fence=[*session.fence, anchor])
            events.emit(tx, "wander.fence.changed", {"concept": concept, "action": action}, session.id)
        return _require_session(con, session.id)


def crystallize(runtime: Runtime, session_id: str, tuning: WanderTuning = TUNING) -> CrystalAttempt:
    """Force a crystallization attempt at the current locus, with the resonance that bears on it most."""
    with runtime.db.connect() as con:  # read
        session = _require_session(con, session_id)
        loci = _loci_space(runtime, con, session)
        here = loci.loci.get(session.current_locus_id or "")
        now = utcnow()
        reach = [
            r
            for r in store.resonances_in_reach(con, session.id)
            if r.embedding is not None and r.current_strength(now) >= tuning.invalidate_strength
        ]
        if here is None or not reach:
            raise WanderError(f"session {session.id} has no resonance to crystallize yet; take more steps first")
        if here.embedding is None:
            raise WanderError(f"locus {here.id} has no embedding, so no resonance can be measured against it")
        at: np.ndarray = here.embedding

        def bearing(r: Resonance) -> tuple[bool, float]:
            """Confirmed resonances first, then the one closest to here, weighted by its current strength."""
            assert r.embedding is not None  # reach holds only resonances read with their vectors
            return r.status == "confirmed", float(r.embedding @ at) * r.current_strength(now)

        resonance = max(reach, key=bearing)
        # a person asks here and now: the walk's latest encounters count as well as the resonance's own
        recent = [r for _, r in _session_memory(runtime, con, session, tuning).hot][-tuning.crystal_evidence :]
        evidence = _gather_evidence(con, loci, tuning.crystal_evidence, resonance, None, also=[r.id for r in recent])
        existing = _known_crystals(con)
        corpus = corpus_space(runtime, con)
    spending = Spending(runtime.gateway, session, tuning)
    attempt = crystals.crystallize(  # think, with the file free
        resonance,
        here,
        evidence,
        session_id=session.id,
        spending=spending,
        embed=runtime.embedder.embed,
        existing=existing,
        related=lambda a, b: selection.pair_relatedness(corpus, a, b, tuning),
        # a person asked: any grounded pair will do (across domains first), however weak its bridge
        tuning=replace(tuning, crystal_across_domains=False),
    )
    by_tier = spending.usage.by_tier
    with runtime.db.transaction() as tx:  # write, if the session is still there
        current = _require_session(tx, session.id)
        if attempt.crystal is not None:
            store.insert_crystal(tx, attempt.crystal)
        store.update_session(
            tx,
            session.id,
            cloud_spent_cents=current.cloud_spent_cents + spending.cloud_cents,
            local_calls=current.local_calls + by_tier.get("local", 0),
            cloud_calls=current.cloud_calls + by_tier.get("cloud", 0),
            offline_calls=current.offline_calls + by_tier.get("offline", 0),
        )
        for subject, payload in attempt.events:
            events.emit(tx, subject, {**payload, "forced": True}, session.id)
    runtime.flush()
    return attempt


def _require_resonance(con: Connection, resonance_id: str) -> Resonance:
    resonance = store.get_resonance(con, str(resonance_id))
    if resonance is None:
        raise NotFound(f"no resonance {resonance_id!r}")
    return resonance


def invalidate_resonance(runtime: Runtime, resonance_id: str) -> Resonance:
    """A person says a resonance is not real: it stops attracting residues and crystallizing."""
    with runtime.db.connect() as con:
        resonance = _require_resonance(con, resonance_id)
        with runtime.db.transaction() as tx:
            store.update_resonance(tx, resonance.id, status="invalidated")
        return _require_resonance(con, resonance.id)


# -- reading -----------------------------------------------------------------------


def _is_search_kind(name: str) -> TypeGuard[SearchKind]:
    return name in SEARCH_TYPES


def search(runtime: Runtime, query: str, types: Sequence[str] = SEARCH_TYPES, limit: int = 10) -> list[SearchHit]:
    """Loci, crystals and resonances nearest in meaning to ``query``, best first."""
    query = (query or "").strip()
    if not query:
        raise InvalidRequest("search needs a query")
    unknown = set(types) - set(SEARCH_TYPES)
    if unknown:
        raise InvalidRequest(f"unknown search types {sorted(unknown)}; use {', '.join(SEARCH_TYPES)}")
    vector = _embed_one(runtime, query)
    hits: list[SearchHit] = []
    with runtime.db.connect() as con:
        for kind in filter(_is_search_kind, types):  # every one is, checked above
            hits += [
                SearchHit(kind, i, text, score, sid) for i, text, sid, score in store.nearest(con, kind, vector, limit)
            ]
    return sorted(hits, key=lambda h: -h.score)[:limit]


def session_view(runtime: Runtime, session_id: str) -> SessionView:
    """All of a session at once (loci, trace, residues, resonances, crystals, warm memory), for the map and
    the export, read in one connection so the parts agree.
    """
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        return SessionView(
            session=session,
            loci=store.list_loci(con, session.id),
            trace=store.list_traces(con, session.id),
            residues=store.list_residues(con, session.id),
            resonances=store.list_resonances(con, session_id=session.id, with_vectors=True),
            crystals=store.list_crystals(con, session_id=session.id, with_vectors=True),
            warm_memory=store.list_warm_memory(con, session.id),
        )


def list_loci(
    runtime: Runtime, session_id: str, visited: bool | None = None, min_interestingness: float | None = None
) -> list[Locus]:
    """A session's loci (``visited`` True: only those the walk stood on; False: only those it saw)."""
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        return store.list_loci(con, session.id, visited=visited, min_interestingness=min_interestingness)


def list_trace(runtime: Runtime, session_id: str) -> list[Trace]:
    """A session's path step by step, oldest first: where each step went, why, and what it cost."""
    with runtime.db.connect() as con:
        session = _require_session(con, session_id)
        return store.list_traces(con, session.id)


def get_locus(runtime: Runtime, locus_id: str) -> Locus:
    """One locus with its connections (adjacent_to, bridges_to, contradicts)."""
    with runtime.db.connect() as con:
        found = store.get_loci(con, [str(locus_id)]) if _is_uuid(locus_id) else []
        if not found:
            raise NotFound(f"no locus {locus_id!r}")
        return found[0]


def list_crystals(
    runtime: Runtime, status: str | None = None, min_confidence: float | None = None, session_id: str | None = None
) -> list[Crystal]:
    """The crystals a person reviews, filtered by status, confidence or the session that formed them."""
    with runtime.db.connect() as con:
        return store.list_crystals(con, status=status, min_confidence=min_confidence, session_id=session_id)


def list_resonances(runtime: Runtime, session_id: str | None = None, status: str | None = None) -> list[Resonance]:
    """Resonances (a session's own and the cross-session ones it supports); ``current_strength()`` gives the
    decayed value.
    """
    with runtime.db.connect() as con:
        return store.list_resonances(con, session_id=session_id, status=status)


def crystal_evidence(runtime: Runtime, crystal_id: str) -> CrystalEvidence:
    """A crystal traced back: its residues, their loci, the corpus nodes behind them and those nodes' source chunks."""
    with runtime.db.connect() as con:
        crystal = require_crystal(con, crystal_id)
        by_type: dict[str, list[str]] = {}
        for item in crystal.supporting_evidence:
            by_type.setdefault(str(item.get("type")), []).append(str(item.get("id")))
        residues = store.get_residues(con, by_type.get("residue", []))
        loci = store.get_loci(con, [*by_type.get("locus", []), *(r.to_locus_id for r in residues)], with_vectors=False)
        node_ids = [*by_type.get("node", []), *(locus.node_id for locus in loci if locus.node_id)]
        nodes = corpus_store.get_nodes(con, node_ids, with_vectors=False)
        documents = {p: n.document_id for n in nodes if n.type != "raw_chunk" for p in n.parent_ids}
        chunks = [n for n in nodes if n.type == "raw_chunk"]
        chunks += [  # the chunks of the source a derived node stands for, not what it was read against
            n
            for n in corpus_store.get_nodes(con, list(documents), with_vectors=False)
            if n.type == "raw_chunk" and n.id not in {c.id for c in chunks} and documents[n.id] in (None, n.document_id)
        ]
        return CrystalEvidence(crystal, residues, loci, nodes, chunks)


def session_events(runtime: Runtime, session_id: str, after_seq: int = 0, limit: int = 1000) -> list[events.Event]:
    """The session's persisted events (wander.md's NATS subjects), oldest first."""
    with runtime.db.connect() as con:
        _require_session(con, session_id)
        return events.list_events(
            con, session_id=session_id, subject_prefix="wander.", after_seq=after_seq, limit=limit
        )
