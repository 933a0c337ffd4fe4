"""The step as the engine's one pattern, read → think → write (as :mod:`explorer.dreaming.service` does).

``_read_step`` gathers a step's inputs in one short connection, which also logs ``wander.step.started``; the
pure step (:func:`~explorer.wander.walk.take_step`) runs with no connection held, its callbacks reading node
texts from memory and a crystal's evidence, when one may form, in a connection of their own between model
calls; ``_commit`` writes every row and event of the step in one transaction that first re-checks what the step
depended on (:func:`recheck`: the session still there, in the same status, at the same step). Other processes
(the app, the CLI, a worker) get the file while the model thinks. A step happens entirely or not at all. A walk
(:func:`run`) writes one step and reads the next in one opening of the file, and leaves folding the write-ahead
log into it to a later step or its end (see :mod:`explorer.store.database`): opening and checkpointing the file
were most of a step's cost at scale.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from explorer.errors import Remedy
from explorer.records import Progress
from explorer.records.wander import RunResult, Session, StepResult, utcnow
from explorer.runtime import Runtime
from explorer.store import events as events_store
from explorer.store import leases
from explorer.store import wander as wander_store
from explorer.store.database import Connection, DatabaseUnavailable, StoreError, WriteConflict
from explorer.text import shorten
from explorer.wander import selection
from explorer.wander.caches import SessionMemory, corpus_space, forget_session, session_memory
from explorer.wander.config import WanderTuning
from explorer.wander.errors import InvalidRequest, SessionNotFound, SessionStateError, WanderError
from explorer.wander.evidence import gather_evidence, known_crystals
from explorer.wander.guards import Spending, require_active
from explorer.wander.sessions import get_session, require_session, set_status
from explorer.wander.step_records import StepCallbacks, StepInputs, StepPlan
from explorer.wander.walk import take_step

T = TypeVar("T")
TUNING = WanderTuning()
OUTAGE_S = 60.0  # how long a walk waits out a database server that cannot be reached (a restart) before failing
# A lease of this process's that could not be given back (the server away as its step failed), by session: given
# back by the session's next step here, which would otherwise find it held by a living process, this one.
_UNRELEASED: dict[str, str] = {}
StepRead = tuple[StepInputs, SessionMemory, str]  # and the holder of the session's step lease


def step(runtime: Runtime, session_id: str, tuning: WanderTuning = TUNING) -> StepResult:
    """Take one step of an active session (docs/wander.md#the-step): read, think with the file free, write.

    Example::

        result = step(runtime, session_id)
        result.step_number, result.to_locus.concept, result.crystal  # the crystal is None on most steps
    """
    return _step(runtime, _read_step(runtime, session_id, tuning), tuning, read_next=False)[0]


def run(
    runtime: Runtime, session_id: str, steps: int, progress: Progress | None = None, tuning: WanderTuning = TUNING
) -> RunResult:
    """Up to ``steps`` steps; stops early when the session pauses or completes, and says why.

    Example::

        result = run(runtime, session_id, 20, progress=lambda done, total, note: print(done, total, note))
        result.steps_completed, result.crystals_formed, result.stopped_reason  # None when it ran them all
    """
    if steps < 1:
        raise InvalidRequest("the number of steps must be at least 1")
    done = formed = 0
    stopped: str | None = None
    undwelt: list[str] = []  # the steps that failed to dwell, each with its failures
    session = get_session(runtime, session_id)
    require_active(session)
    session_id = session.id  # the full id, once, when a short one was given
    read: StepRead | None = None
    away_since: float | None = None
    try:
        while done < steps and stopped is None:
            # holds the file only to read and to write (writing one step and reading the next at once)
            try:
                result, read = _step(
                    runtime, read or _read_step(runtime, session_id, tuning), tuning, read_next=done + 1 < steps
                )
            except DatabaseUnavailable:  # the server restarting: nothing of the step was kept; take it again
                away_since = away_since or time.monotonic()
                if time.monotonic() - away_since > OUTAGE_S:
                    raise
                read = None
                time.sleep(1.0)
                continue
            away_since = None
            done += 1
            formed += result.crystal is not None
            if result.residue is None:
                undwelt.append(f"step {result.step_number}: {'; '.join(result.failures)}")
            if result.status != "active":
                stopped = f"{result.status}: {result.status_reason}"
            if progress:
                progress(done, steps, shorten(result.to_locus.concept, 6))
    finally:
        runtime.flush()
        runtime.db.checkpoint()
    return RunResult(done, formed, stopped, tuple(undwelt))


def recheck(con: Connection, read: Session, work: str = "step") -> None:
    """Refuse to write ``work`` (a step, a crystallization) whose session changed while the model was thinking
    (paused, stopped, deleted, or stepped by another process): it is dropped, nothing half-written.
    """
    now = wander_store.session_progress(con, read.id)
    if now is None:
        raise SessionNotFound(read.id)
    status, step_count = now
    if status != read.status:
        raise SessionStateError(
            f"session {read.id} became {status} while this {work} was thinking; the {work} was not kept",
            remedy=Remedy.RESUME_SESSION if status == "paused" else None,
            subject=read.id,
        )
    if step_count != read.step_count:
        raise SessionStateError(
            f"session {read.id} took step {step_count} in another process while this {work} was thinking; "
            f"this {work} was not kept, try again"
        )


def hold(con: Connection, session: Session, work: str = "step") -> str:
    """Take the session's step lease for ``work`` (a step, a crystallization) before any model is asked; its
    holder, to give back with the write. Refused at once while another process is taking a step of the session
    (see :mod:`explorer.store.leases`): it would be refused at its write anyway, after paying for its calls.
    """
    unreleased = _UNRELEASED.pop(session.id, None)
    if unreleased is not None:
        leases.release(con, session.id, unreleased)
    holder = leases.new_holder()
    other = leases.take(con, session.id, holder)
    if other is not None:
        raise SessionStateError(
            f"session {session.id} is taking a step in another process ({other.rsplit(':', 1)[0]}) now; this "
            f"{work} was not started and spent nothing, try again once that step is written",
            subject=session.id,
        )
    return holder


def let_go(runtime: Runtime, session_id: str, holder: str, spending: Spending) -> None:
    """After a step or a crystallization that was not kept: give its lease back and charge the session for the
    calls it made (they were paid for, kept or not). Unfenced, as the call log is: what was spent stands, whoever
    ended the run. Best effort: a database that is away leaves the lease to expire.
    """
    try:
        with runtime.db.transaction(fenced=False) as tx:
            leases.release(tx, session_id, holder)
            current = wander_store.get_session(tx, session_id)
            if current is not None and (spending.usage.calls or spending.cloud_cents):
                wander_store.update_session(tx, session_id, **spending.spent_on(current))
    except StoreError:
        _UNRELEASED[session_id] = holder


def _read_step(runtime: Runtime, session_id: str, tuning: WanderTuning) -> StepRead:
    """Everything a step starts from, read in one short connection, which also logs ``wander.step.started``:
    the step begins here, before any model is asked, and a follower sees it while the step thinks. The step
    holds the session's lease from here (:func:`hold`) until its write.
    """
    with runtime.db.connect() as con:
        session = require_session(con, session_id)
        require_active(session)
        if session.step_count >= session.max_steps:
            set_status(
                runtime, session.id, "completed", f"reached max steps ({session.max_steps})", "wander.session.completed"
            )
            raise SessionStateError(
                f"session {session.id} has reached its max steps ({session.max_steps}) and is "
                "now completed; raise max steps to go on"
            )
        holder = hold(con, session)
        try:
            inputs, memory = _read_held(runtime, con, session, tuning)
        except BaseException:
            try:
                leases.release(con, session.id, holder)
            except StoreError:
                _UNRELEASED[session.id] = holder
            raise
        return inputs, memory, holder


def _read_held(
    runtime: Runtime, con: Connection, session: Session, tuning: WanderTuning
) -> tuple[StepInputs, SessionMemory]:
    """What :func:`_read_step` reads once the step holds the session."""
    memory = session_memory(runtime, con, session)
    inputs = _read_inputs(runtime, con, session, memory, tuning)
    events_store.emit(
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
    updates = wander_store.updates_of(con, here.node_id) if here.node_id else []
    return StepInputs(
        session=session,
        here=here,
        corpus=corpus,
        loci=loci,
        path=path[-tuning.path_memory :],
        since_reset=since_reset,
        hot=list(memory.hot),
        resonances=wander_store.resonances_in_reach(con, session.id),
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
            for e in events_store.list_events(con, session_id=session.id, subject_prefix="wander.budget.low")
        ),
    )


class _StoreTrouble(BaseException):
    """The database failing a step's callback, carried through the pure step's per-item isolation (``except
    Exception``): a step that cannot read what it needs fails whole rather than being written without the part
    that read (a reflection, a crystal).
    """

    def __init__(self, error: StoreError):
        super().__init__(str(error))
        self.error = error


@contextmanager
def _store_trouble_through() -> Iterator[None]:
    try:
        yield
    except StoreError as exc:
        raise _StoreTrouble(exc) from exc


def _callbacks(runtime: Runtime, inputs: StepInputs, tuning: WanderTuning) -> StepCallbacks:
    """What the pure step may read while it thinks: node texts from the corpus space in memory; the rest (a
    resonance's evidence, earlier crystals, only when a crystal may form) each in a short connection of its
    own, so none is held across the model calls between them.
    """

    def read(query: Callable[[Connection], T]) -> T:
        with _store_trouble_through(), runtime.db.connect() as con:
            return query(con)

    def embed(texts: Any) -> np.ndarray:
        with _store_trouble_through():  # the embedder's cache is read from the database
            return runtime.embedder.embed(texts)

    def node_text(ids: list[str]) -> dict[str, dict[str, Any]]:
        found = inputs.corpus.summaries(ids)
        missing = [i for i in ids if i not in found]  # only nodes outside the space (none, as candidates go)
        return {**found, **read(lambda con: wander_store.node_summaries(con, missing))} if missing else found

    limit, loci = tuning.crystal_evidence, inputs.loci
    return StepCallbacks(
        embed=embed,
        node_text=node_text,
        evidence=lambda resonance, residue: read(lambda con: gather_evidence(con, loci, limit, resonance, residue)),
        last_attempt=lambda resonance_id: read(lambda con: wander_store.last_crystal_attempt(con, resonance_id)),
        known_crystals=lambda: read(known_crystals),
        related=lambda a, b: selection.pair_relatedness(inputs.corpus, a, b, tuning),
    )


def _step(
    runtime: Runtime, read: StepRead, tuning: WanderTuning, read_next: bool
) -> tuple[StepResult, StepRead | None]:
    """Think from what was read, then write; with ``read_next``, also read the next step while the file is
    open for the write (a walk of many steps opens it once a step, not twice).
    """
    inputs, memory, holder = read
    spending = Spending(runtime.gateway, inputs.session, tuning)
    try:
        plan = take_step(inputs, spending, _callbacks(runtime, inputs, tuning), tuning, utcnow())
    except BaseException as exc:
        let_go(runtime, inputs.session.id, holder, spending)
        if isinstance(exc, _StoreTrouble):
            raise exc.error from exc.error.__cause__
        raise
    with runtime.db.connect(checkpoint=not read_next):  # the next step's write folds the log in, or run() does
        try:
            _commit(runtime, plan, inputs.session, holder)
        except BaseException:
            forget_session(runtime, inputs.session.id)
            let_go(runtime, inputs.session.id, holder, spending)
            raise
        memory.remember(plan)
        if not read_next or plan.result.status != "active":
            return plan.result, None
        try:
            return plan.result, _read_step(runtime, inputs.session.id, tuning)
        except (
            WanderError,
            DatabaseUnavailable,
        ):  # this step stands; the next one reads again (and says what stops it)
            return plan.result, None


def _commit(runtime: Runtime, plan: StepPlan, read: Session, holder: str) -> None:
    """All of a step's rows and events, in one transaction, if the session is still as the step read it; the
    step's lease goes with them.
    """
    try:
        with runtime.db.transaction() as tx:
            recheck(tx, read)
            _write_plan(tx, plan)
            leases.release(tx, read.id, holder)
    except WriteConflict as exc:
        # UNIQUE(session_id, step_number), or the session's row: another process took this step while we thought
        raise SessionStateError(
            f"session {plan.trace.session_id} took step {plan.trace.step_number} in another "
            "process at the same time; this step was not kept, try again"
        ) from exc


def _write_plan(con: Connection, plan: StepPlan) -> None:
    session_id = plan.trace.session_id
    wander_store.insert_loci(con, plan.new_loci)
    for locus_id, values in plan.locus_updates.items():
        wander_store.update_locus(con, locus_id, **values)
    wander_store.insert_trace(con, plan.trace)
    if plan.residue is not None:
        wander_store.insert_residue(con, plan.residue)
    outcome = plan.resonance_outcome
    wander_store.insert_resonances(con, outcome.created)
    for r in outcome.updated:
        wander_store.update_resonance(
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
        wander_store.insert_crystal(con, plan.crystal)
    wander_store.insert_warm_memory(con, plan.warm)
    wander_store.update_session(con, session_id, **plan.session_updates)
    events_store.emit_many(con, plan.events, session_id)
