"""What a person does to a walk besides starting and stopping it: inject a concept, move the fence, force a
crystallization, say a resonance is not real; reviewing a crystal is :mod:`explorer.wander.review`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TypeGuard

import numpy as np

from explorer.records.wander import FenceAction, FenceAnchor, Locus, Resonance, Session, utcnow
from explorer.runtime import Runtime
from explorer.store import events as events_store
from explorer.store import leases
from explorer.store import wander as wander_store
from explorer.store.database import Connection
from explorer.wander import crystal as crystals
from explorer.wander import selection
from explorer.wander.caches import corpus_space, forget_session, session_memory
from explorer.wander.config import WanderTuning
from explorer.wander.crystal import CrystalAttempt
from explorer.wander.errors import InvalidRequest, NotFound, SessionStateError, WanderError
from explorer.wander.evidence import gather_evidence, known_crystals
from explorer.wander.guards import Spending
from explorer.wander.sessions import embed_one, infer_domains, require_session
from explorer.wander.stepping import TUNING, hold, let_go, recheck


def _require_open(session: Session, action: str) -> None:
    if session.status not in ("active", "paused"):
        raise SessionStateError(f"cannot {action} session {session.id}: it is {session.status}")


def inject(runtime: Runtime, session_id: str, concept: str, force_visit: bool = True) -> Locus:
    """A person's concept as a new locus; with ``force_visit`` the next step goes there.

    Example::

        locus = inject(runtime, session_id, "reference cycles")
        step(runtime, session_id).to_locus.id == locus.id  # True: the next step went there
    """
    concept = (concept or "").strip()
    if not concept:
        raise InvalidRequest("inject needs a concept")
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        _require_open(session, "inject into")
        locus = session_memory(runtime, con, session).loci.locus_for_concept(concept)
        if locus is None:
            vector = embed_one(runtime, concept)
            locus = Locus(
                session_id=session.id,
                concept=concept,
                embedding=vector,
                source_type="SERENDIPITOUS",
                strategy="injected",
                domains=infer_domains(corpus_space(runtime, con), vector),
                interestingness=0.7,
                uncertainty=0.6,
            )
            new = [locus]
        else:
            new = []
        with runtime.db.transaction() as tx:
            wander_store.insert_loci(tx, new)
            if force_visit:
                wander_store.update_session(tx, session.id, pending_locus_id=locus.id)
            events_store.emit(
                tx,
                "wander.locus.injected",
                {"locus_id": locus.id, "concept": concept, "force_visit": force_visit},
                session.id,
            )
    forget_session(runtime, session.id)
    return locus


def _is_fence_action(action: str) -> TypeGuard[FenceAction]:
    return action in ("include", "exclude")


def fence(runtime: Runtime, session_id: str, concept: str, action: str) -> Session:
    """Widen the fence around ``concept`` (include) or cut it out (exclude).

    Example::

        session = fence(runtime, session_id, "finance", "exclude")
        session.fence[-1].concept, session.fence[-1].action  # ('finance', 'exclude')
    """
    if not _is_fence_action(action):
        raise InvalidRequest(f"fence action must be 'include' or 'exclude', not {action!r}")
    concept = (concept or "").strip()
    if not concept:
        raise InvalidRequest("fence needs a concept")
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        _require_open(session, "fence")
        anchor = FenceAnchor(concept, action, embed_one(runtime, concept))
        with runtime.db.transaction() as tx:
            wander_store.update_session(tx, session.id, fence=[*session.fence, anchor])
            events_store.emit(tx, "wander.fence.changed", {"concept": concept, "action": action}, session.id)
        return require_session(con, session.id)


def crystallize(runtime: Runtime, session_id: str, tuning: WanderTuning = TUNING) -> CrystalAttempt:
    """Force a crystallization attempt at the current locus, with the resonance that bears on it most.

    Read, think with the file free, write: like a step, it is not kept if the session changed meanwhile (stepped,
    paused, stopped, deleted), and says so with the error a second step would get.

    Example::

        attempt = crystallize(runtime, session_id)
        attempt.crystal.insight if attempt.crystal else attempt.reason  # why none was kept
    """
    with runtime.db.connect() as con:  # read
        session = require_session(con, session_id)
        memory = session_memory(runtime, con, session)
        here = memory.loci.loci.get(session.current_locus_id or "")
        now = utcnow()
        reach = [
            r
            for r in wander_store.resonances_in_reach(con, session.id)
            if r.embedding is not None and r.current_strength(now) >= tuning.invalidate_strength
        ]
        if here is None or not reach:
            raise WanderError(f"session {session.id} has no resonance to crystallize yet; take more steps first")
        if here.embedding is None:
            raise WanderError(f"locus {here.id} has no embedding, so no resonance can be measured against it")
        resonance = _bearing_most(reach, here.embedding, now)
        # a person asks here and now: the walk's latest encounters count as well as the resonance's own
        recent = [r.id for _, r in memory.hot][-tuning.crystal_evidence :]
        evidence = gather_evidence(con, memory.loci, tuning.crystal_evidence, resonance, None, also=recent)
        existing = known_crystals(con)
        corpus = corpus_space(runtime, con)
        holder = hold(con, session, "crystallization")  # last: nothing above may leave it held
    spending = Spending(runtime.gateway, session, tuning)
    try:
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
        _commit_attempt(runtime, session, attempt, spending, holder)
    except BaseException:
        let_go(runtime, session.id, holder, spending)
        raise
    runtime.flush()
    return attempt


def _bearing_most(reach: list[Resonance], at: np.ndarray, now: datetime) -> Resonance:
    """Confirmed resonances first, then the one closest to ``at`` (the current locus), weighted by its current
    strength.
    """

    def bearing(r: Resonance) -> tuple[bool, float]:
        assert r.embedding is not None  # reach holds only resonances read with their vectors
        return r.status == "confirmed", float(r.embedding @ at) * r.current_strength(now)

    return max(reach, key=bearing)


def _commit_attempt(runtime: Runtime, read: Session, attempt: CrystalAttempt, spending: Spending, holder: str) -> None:
    """The crystal (if one was kept), what the attempt spent and its events, if the session is still as read;
    the session's lease goes with them.
    """
    with runtime.db.transaction() as tx:
        recheck(tx, read, "crystallization")
        leases.release(tx, read.id, holder)
        current = require_session(tx, read.id)  # another crystallization may have spent meanwhile
        if attempt.crystal is not None:
            wander_store.insert_crystal(tx, attempt.crystal)
        wander_store.update_session(tx, read.id, **spending.spent_on(current))
        for subject, payload in attempt.events:
            events_store.emit(tx, subject, {**payload, "forced": True}, read.id)


def _require_resonance(con: Connection, resonance_id: str) -> Resonance:
    resonance = wander_store.get_resonance(con, str(resonance_id))
    if resonance is None:
        raise NotFound(f"no resonance {resonance_id!r}")
    return resonance


def invalidate_resonance(runtime: Runtime, resonance_id: str) -> Resonance:
    """A person says a resonance is not real: it stops attracting residues and crystallizing.

    Example::

        invalidate_resonance(runtime, resonance_id).status  # 'invalidated'
    """
    with runtime.db.connect() as con:
        resonance = _require_resonance(con, resonance_id)
        with runtime.db.transaction() as tx:
            wander_store.update_resonance(tx, resonance.id, status="invalidated")
        return _require_resonance(con, resonance.id)
