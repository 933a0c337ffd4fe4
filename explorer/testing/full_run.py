"""One run through every mechanism that asks a model, for the real-model tests and ``bench.models --real``.

Why one scenario for both: the tests check that a real small model's answers are each accepted or refused with a
reason and that nothing crashes; the benchmark prints how often each prompt kind was accepted and how long it took.
Both must mean the same run, so it is written once: read a few documents (implant, entities, entity synthesis),
walk ``steps`` steps (dwell, analogy) and crystallize where it ends (crystallize, validate: a walk this short
seldom crystallizes on its own, since a resonance must recur first), dream one night (exploration's judge,
fusion, the REM cycle's question, synthesis and relation) as of ``FADED_DAYS`` from now, so that memories have
faded into fusion's window, then consolidate what the walk and the night left (pattern, abstraction, relation,
contradiction: every pair asked, see ``EVERY_PAIR``).

The runtime's database should already hold a corpus to walk and dream over: :func:`read_fortunes` reads one offline.
Short texts keep the prompts short, and a small model on two cores reads its prompt at about 100 tokens a second:
What's New chunks quoted as an implant's neighbours made a 2,300-token prompt, 50 s before the first word.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from explorer.consolidation import service as consolidation
from explorer.consolidation.integration import DEFAULT_INTEGRATION
from explorer.consolidation.pipeline import DEFAULT_CONSOLIDATION
from explorer.consolidation.service import RunReport
from explorer.consolidation.verification import DEFAULT_VERIFICATION
from explorer.demo import SAMPLE_DATA
from explorer.dreaming import service as dreaming
from explorer.dreaming.exploration import DEFAULT_EXPLORATION
from explorer.dreaming.fusion import DEFAULT_FUSION
from explorer.providers.budget import Budget
from explorer.reading.ingest import IngestReport, ingest_paths
from explorer.records.calls import CallRecord
from explorer.records.dreaming import CycleReport
from explorer.runtime import Runtime
from explorer.store.calls import recent_calls
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig
from explorer.wander.errors import WanderError

FORTUNES = SAMPLE_DATA / "fortunes" / "fortunes.jsonl"
# Every pair of rung items and of patterns is asked about (their relation, whether they contradict), not only the
# alike ones: the run is to ask every prompt kind, and which pairs a small model's texts make alike is chance.
EVERY_PAIR = replace(
    DEFAULT_CONSOLIDATION,
    integration=replace(DEFAULT_INTEGRATION, cross_connect=-1.0),
    verification=replace(DEFAULT_VERIFICATION, condition_similarity=-1.0),
)
# One exploration seed of four candidates, not six of eight: the judge's prompt quotes every candidate with its
# relations (2,500 tokens for eight, 40-50 s of reading for a small model), and one call is enough to ask the kind.
FEW_SEEDS = replace(DEFAULT_EXPLORATION, max_seeds=1, max_candidates_per_seed=4)
# Pairs of related fading memories are fused, not only groups of three: short texts read offline are seldom
# related in threes, and the run is to ask for a fusion.
PAIRS = replace(DEFAULT_FUSION, min_cluster_size=2)
# Two notes that say nearly the same: fortunes are too unlike one another for reading to link any two, and fusion
# merges only related memories.
ALIKE_NOTES = (
    "In winter honey bees keep the hive warm: they cluster together and shiver their flight muscles.",
    "Honey bees keep their hive warm in winter: they shiver their flight muscles and cluster together.",
)
FADED_DAYS = 45  # a memory of middling importance, unused, is then at about a third of its prominence: fading
SEED_CONCEPT = "memory and forgetting"


@dataclass(frozen=True)
class FullRun:
    """What one run did: each mechanism's report, the wall time of each step and of the night, and the call log."""

    ingest: IngestReport
    session_id: str
    step_seconds: list[float]
    resumed: int  # times the walk was found paused (its circuit breaker tripped) and resumed, as a person would
    crystallized: str  # the crystal's insight, or why none was kept
    night: CycleReport
    night_seconds: float
    consolidation: RunReport
    budget: Budget  # the ingest's, the night's and the consolidation's (a walk spends its session's own)
    calls: list[CallRecord]


def read_fortunes(runtime: Runtime, folder: Path, per_domain: int = 6) -> IngestReport:
    """Read ``per_domain`` of the demo's fortunes from each of its domains into ``runtime`` (meant offline: fast),
    then :data:`ALIKE_NOTES` one after the other, so that the second is linked to the first: fusion's pair.
    """
    taken: dict[str, int] = {}
    lines = []
    for line in FORTUNES.read_text(encoding="utf-8").splitlines():
        domain = json.loads(line)["domain"]
        if taken.get(domain, 0) < per_domain:
            taken[domain] = taken.get(domain, 0) + 1
            lines.append(line)
    path = folder / "fortunes.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = ingest_paths(runtime, [path])
    for number, text in enumerate(ALIKE_NOTES):
        note = folder / f"bees-{number}.md"
        note.write_text(text, encoding="utf-8")
        report.documents_added += ingest_paths(runtime, [note]).documents_added
    runtime.flush()
    return report


def full_run(
    runtime: Runtime,
    documents: Sequence[Path],
    experiences: Path,
    *,
    steps: int = 10,
    dreams: int = 1,
    seed: int = 7,
    seed_concept: str = SEED_CONCEPT,
) -> FullRun:
    """Read ``documents``, walk ``steps`` steps from ``seed_concept``, dream a night of ``dreams`` dreams, import
    the log of ``experiences`` and consolidate it with what the walk and the night left; see the module.
    """
    budget = dreaming.run_budget(runtime)
    ingest = ingest_paths(runtime, documents, budget=budget)
    session_id, step_seconds, resumed = walk(runtime, steps, seed, seed_concept)
    try:
        attempt = wander.crystallize(runtime, session_id)
        crystallized = attempt.crystal.insight if attempt.crystal else attempt.reason
    except WanderError as exc:  # no resonance to crystallize: the analogies were all refused
        crystallized = str(exc)
    started = time.perf_counter()
    night = dream(runtime, dreams, seed, budget)
    night_seconds = time.perf_counter() - started
    consolidation.import_log(runtime, experiences)  # patterns to ask for, whatever the walk's dwellings were
    consolidated = consolidation.run_consolidation(runtime, trigger="manual", budget=budget, config=EVERY_PAIR)
    runtime.flush()
    with runtime.db.connect() as con:
        calls = recent_calls(con, limit=100_000)
    return FullRun(
        ingest, session_id, step_seconds, resumed, crystallized, night, night_seconds, consolidated, budget, calls
    )


def walk(runtime: Runtime, steps: int, seed: int, seed_concept: str) -> tuple[str, list[float], int]:
    """A new session's ``steps`` steps, one at a time (each timed), resumed whenever its circuit breaker paused it:
    a small model fails dwell after dwell, and three in a row pause a walk for a person to look.
    """
    # A wide fence and no checkpoint: the walk goes its whole length whatever the corpus's embedding.
    config = SessionConfig(
        seed_concept=seed_concept, random_seed=seed, max_drift_distance=1.5, human_checkpoint_frequency=0
    )
    session = wander.create_session(runtime, config)
    step_seconds, resumed = [], 0
    for _ in range(steps):
        if wander.get_session(runtime, session.id).status == "paused":
            wander.resume(runtime, session.id)
            resumed += 1
        started = time.perf_counter()
        wander.step(runtime, session.id)
        step_seconds.append(time.perf_counter() - started)
    return session.id, step_seconds, resumed


def dream(runtime: Runtime, dreams: int, seed: int, budget: Budget) -> CycleReport:
    """A night as :func:`explorer.dreaming.service.run_cycle` dreams it (exploration, fusion, the REM cycle, on one
    budget), with :data:`FEW_SEEDS` and :data:`PAIRS`, as of :data:`FADED_DAYS` from now.
    """
    faded = datetime.now(UTC) + timedelta(days=FADED_DAYS)
    exploration = dreaming.run_exploration(runtime, seed=seed, config=FEW_SEEDS, budget=budget, as_of=faded)
    fusion = dreaming.run_fusion(runtime, config=PAIRS, budget=budget, as_of=faded)
    rem = dreaming.run_rem(runtime, dreams=dreams, seed=seed + 1, budget=budget, as_of=faded)
    return CycleReport(exploration, fusion, rem)
