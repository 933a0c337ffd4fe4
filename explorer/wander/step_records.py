"""What the stages of a step (:mod:`explorer.wander.walk`) hand one another: the step's inputs, callbacks and
plan, each stage's decision as a record, and the two readings of a locus every stage measures by.

The records sit below the stages, so a stage reads what an earlier one decided without importing it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.prompts.wander import Dwelling
from explorer.providers.gateway import Answer
from explorer.records.wander import (
    Adjacency,
    Crystal,
    Locus,
    Residue,
    Resonance,
    Session,
    StepResult,
    Trace,
    WarmMemory,
)
from explorer.wander import adjacency
from explorer.wander import crystal as crystals
from explorer.wander.resonance import ResonanceOutcome
from explorer.wander.space import CorpusSpace, LociSpace

Embed = Callable[[Sequence[str]], np.ndarray]
Event = tuple[str, dict[str, Any]]  # subject, payload


@dataclass
class StepInputs:
    """Everything a step needs from the store, read before any model is asked, so the step itself never waits
    on the database while it thinks.
    """

    session: Session
    here: Locus
    corpus: CorpusSpace
    loci: LociSpace
    path: list[Locus]  # loci visited just before here, oldest first
    since_reset: list[str]  # destinations of the steps since the circuit breaker was reset
    hot: list[tuple[int, Residue]]  # hot memory: (step, residue) not yet compressed
    resonances: list[Resonance]  # resonances in reach
    failed_paths: np.ndarray  # warm failed-path vectors, to steer away from
    visited_domains: set[str]
    pending: Locus | None = None  # a locus a person asked to visit next
    crystal_steps: list[int] = field(default_factory=list)  # steps at which this walk formed a crystal
    updates: list[str] = field(default_factory=list)  # nodes linked to here by UPDATES relations
    already_exhausted: bool = False  # the budget ran out in an earlier step (warned then)

    @property
    def step_number(self) -> int:
        """The number of the step these inputs are for: the session's next."""
        return self.session.step_count + 1


@dataclass
class StepCallbacks:
    """What a step may need on demand (embeddings, node texts, a resonance's evidence, earlier crystals): each
    callback reads in its own short connection, so the walk stays a pure function of its inputs.
    """

    embed: Embed
    node_text: adjacency.NodeText
    evidence: Callable[[Resonance, Residue], crystals.Evidence]
    last_attempt: Callable[[str], int | None]  # a resonance's occurrences when it last tried to crystallize
    known_crystals: Callable[[], crystals.KnownCrystals]
    related: crystals.Related  # evidence that two stored nodes are related


@dataclass
class StepPlan:
    """Every row a step writes and every event it emits, handed back so the caller can write them in one
    transaction after re-checking the session.
    """

    result: StepResult
    new_loci: list[Locus]
    locus_updates: dict[str, dict[str, Any]]
    trace: Trace
    residue: Residue | None
    resonance_outcome: ResonanceOutcome
    crystal: Crystal | None
    warm: list[WarmMemory]
    session_updates: dict[str, Any]
    events: list[Event]
    visited: Locus


# -- what each stage decided -------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """Where a step goes and why, with what it chose among."""

    chosen: Adjacency
    reason: str  # the trace's selection reason
    candidates: list[Adjacency] = field(default_factory=list)  # in scope and scored; none for a person's pick
    considered: int = 0  # adjacencies the strategies found, in scope or not
    fenced_out: int = 0  # of those, the ones the fence left out
    events: list[Event] = field(default_factory=list)


@dataclass(frozen=True)
class FenceCheck:
    """How far the chosen point lies from the session's centre, and whether the step went past the fence."""

    drift: float
    past_fence: bool  # counted by the circuit breaker's fence streak
    events: list[Event]


@dataclass(frozen=True)
class Destination:
    """The loci a step plans: where it goes, and the best other candidates, remembered unvisited."""

    target: Locus  # the chosen locus: a copy of a known one, or a new one
    new_loci: list[Locus]  # to insert: the target when it is new, and remembered candidates that were no loci yet
    linked: list[tuple[Adjacency, str]]  # the candidates here links to, with their loci, the chosen one first


@dataclass(frozen=True)
class Encounter:
    """What dwelling on the step's encounter gave: the model's answer, and the residue it leaves when it read."""

    answer: Answer[Dwelling]
    dwelling: Dwelling | None  # the model's reflection, None when its answer could not be read
    residue: Residue | None
    trace_id: str  # the residue names its trace before the trace is made


@dataclass(frozen=True)
class Visit:
    """What the visit changes in the loci: the target's counts and ratings, here's links to where the step led."""

    here_after: Locus
    locus_updates: dict[str, dict[str, Any]]  # locus id -> fields to store
    events: list[Event]


@dataclass(frozen=True)
class NextStatus:
    """The session after the step (where it stands, what it spent, its streaks, its status) and the guard
    rails' events.
    """

    session: Session
    events: list[Event]


# -- a locus as the stages measure it -----------------------------------------------------


def locus_vector(locus: Locus) -> np.ndarray:
    """A locus's embedding: the walk measures every move by it, so a locus without one cannot be stepped to."""
    if locus.embedding is None:
        raise ValueError(f"locus {locus.id} has no embedding, so the walk cannot measure a step to it")
    return locus.embedding


def stored_text(corpus: CorpusSpace, locus: Locus | Adjacency) -> str | None:
    """The text of the node a locus stands on (None for the seed or an injected concept)."""
    row = corpus.row(locus.node_id) if locus.node_id else None
    return corpus.texts[row] if row is not None and row < len(corpus.texts) else None
