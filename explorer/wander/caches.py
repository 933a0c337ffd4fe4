"""What Wander keeps in memory between steps: the corpus as an index, and each session's memory.

Rebuilding them from the store was most of a step's cost at scale, so they live in the runtime's
:class:`~explorer.runtime.Caches` (one set per runtime, dropped with it) and are rebuilt only when the store's
change counters (their ``marker``) move: a write by another runtime or process is seen at the next read. A step
brings its session's memory up to date itself after its commit (:meth:`SessionMemory.remember`); a step that
failed to commit, an injected locus and a deleted session forget it (:func:`forget_session`), so the next step
reads it afresh.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from explorer.store import wander as wander_store

if TYPE_CHECKING:
    from explorer.records.wander import Residue, Session, Trace
    from explorer.runtime import Runtime
    from explorer.store.database import Connection
    from explorer.wander.space import CorpusSpace, LociSpace
    from explorer.wander.step_records import StepPlan

RECENT_STEPS = 32  # trace rows kept in memory: enough for the loop window and the recent path


@dataclass
class SessionMemory:
    """What a step needs of its session's past, kept between steps: the loci, the recent trace, hot memory and
    the paths that led nowhere. Valid while ``marker`` (loci, steps) holds.
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

    def remember(self, plan: StepPlan) -> None:
        """Bring this memory up to date with what a step wrote (after its commit), rather than reread it."""
        loci = self.loci
        loci.add(plan.new_loci)
        for locus_id, values in plan.locus_updates.items():
            if locus_id in loci.loci:
                loci.loci[locus_id] = replace(loci.loci[locus_id], **values)
        loci.loci[plan.visited.id] = plan.visited
        loci.mark_visited(plan.visited)
        self.recent = [*self.recent, plan.trace][-RECENT_STEPS:]
        if plan.crystal is not None:
            self.crystal_steps.append(plan.trace.step_number)
        if plan.residue is not None:
            self.hot.append((plan.trace.step_number, plan.residue))
        for warm in plan.warm:
            if warm.cluster_type == "summary":
                through = warm.content["through_step"]
                self.hot = [(number, r) for number, r in self.hot if number > through]
            elif warm.cluster_type == "failed_path" and warm.embedding is not None:
                self.failed_paths.append(warm.embedding)
        loci.marker = (len(loci.loci), plan.trace.step_number)


class WanderCaches:
    """Wander's kind in :class:`~explorer.runtime.Caches`: the corpus space and each session's memory by id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # steps of several sessions may run at once (the app, a job)
        self.corpus: CorpusSpace | None = None
        self.sessions: dict[str, SessionMemory] = {}


def corpus_space(runtime: Runtime, con: Connection) -> CorpusSpace:
    """The corpus as an in-memory index, rebuilt when the node counts change.

    Example::

        with runtime.db.connect() as con:
            space = corpus_space(runtime, con)
        space.row(node_id)  # the node's row in space.index, or None
    """
    kept = runtime.caches.of(WanderCaches)
    marker = wander_store.corpus_marker(con)
    with kept.lock:
        cached = kept.corpus
    if cached is not None and cached.marker == marker:
        return cached
    space = _read_corpus_space(con, runtime.db.embedding_dim, marker)
    with kept.lock:
        kept.corpus = space
    return space


def _read_corpus_space(con: Connection, dim: int, marker: tuple[int, ...]) -> CorpusSpace:
    from explorer.wander.space import CorpusSpace  # scipy and the index: only what builds a space imports them

    table = wander_store.corpus_space_rows(con)
    ids = [str(i) for i in table["id"]]
    vectors = np.vstack(list(table["embedding"])).astype(np.float32) if ids else np.zeros((0, dim), np.float32)

    def optional(column: str) -> list[str | None]:
        return [v if isinstance(v, str) else None for v in table[column]]

    return CorpusSpace.build(
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
        relations=wander_store.corpus_links(con),
        parents=[None if p is np.ma.masked or p is None else [str(i) for i in p] for p in table["parent_ids"]],
    )


def session_memory(runtime: Runtime, con: Connection, session: Session) -> SessionMemory:
    """The session's memory, read again when its loci or steps in the store are not those it was read at."""
    kept = runtime.caches.of(WanderCaches)
    marker = (wander_store.count_loci(con, session.id), session.step_count)
    with kept.lock:
        cached = kept.sessions.get(session.id)
    if cached is not None and cached.marker == marker:
        return cached
    from explorer.wander.space import LociSpace  # scipy and the index: only a step reads a session's memory

    memory = SessionMemory(
        loci=LociSpace.build(runtime.db.embedding_dim, wander_store.list_loci(con, session.id), marker),
        recent=wander_store.list_traces(con, session.id, last=RECENT_STEPS),
        hot=wander_store.residue_steps(
            con, session.id, after_step=wander_store.compressed_through_step(con, session.id)
        ),
        failed_paths=[
            w.embedding
            for w in wander_store.list_warm_memory(con, session.id, cluster_type="failed_path", with_vectors=True)
            if w.embedding is not None
        ],
        crystal_steps=wander_store.crystal_steps(con, session.id),
    )
    with kept.lock:
        kept.sessions[session.id] = memory
    return memory


def forget_session(runtime: Runtime, session_id: str) -> None:
    """Drop the session's memory, so the next step reads it from the store."""
    kept = runtime.caches.of(WanderCaches)
    with kept.lock:
        kept.sessions.pop(session_id, None)
