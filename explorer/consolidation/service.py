"""Orchestration shared by the CLI and the app: import experience logs, run a consolidation, query what it made.

A run is read → think → write. The experiences are read in one short connection (the stored ones, and the
product's activity captured as experiences); the pipeline runs with no connection held while the model
thinks; then the captured experiences, the run, its patterns, ladder, connections and checks are written in
one transaction. Stored experiences are never changed, and a run that fails writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from explorer.consolidation.experiences import from_dreams, from_wander, read_log
from explorer.consolidation.pipeline import DEFAULT_CONSOLIDATION, Consolidation, ConsolidationConfig, consolidate
from explorer.consolidation.schedule import DEFAULT_SCHEDULE, Decision, ScheduleConfig, Trigger, decide
from explorer.dreaming.exploration import CREATED_BY as EXPLORATION
from explorer.dreaming.service import run_budget, spent_fields
from explorer.errors import ExplorerError, Remedy
from explorer.providers.budget import Budget
from explorer.reading.loaders import DEFAULT_MAX_MB, read_text
from explorer.records import Progress, new_id
from explorer.records.consolidation import SOURCES, Experience, LadderItem, Pattern
from explorer.runtime import Runtime
from explorer.store import consolidation as consolidation_store
from explorer.store import dreaming as dreaming_store
from explorer.store import events as events_store
from explorer.store import wander as wander_store
from explorer.store.database import Connection

Source = Literal["wander", "dreams", "imported", "all"]
ACTIVITY_LIMIT = 10_000  # dreams and verdicts read per run, newest first


class ConsolidationError(ExplorerError):
    """A consolidation request that cannot be done as asked; the message says why."""


def sources_of(source: Source) -> tuple[str, ...]:
    """The experience sources a ``--source`` choice reads.

    Example::

        sources_of("all")  # ('wander', 'dreams', 'imported')
        sources_of("wander")  # ('wander',)
    """
    if source == "all":
        return SOURCES
    if source not in SOURCES:
        raise ConsolidationError(f"a source must be one of wander, dreams, imported or all, not {source!r}")
    return (source,)


@dataclass
class ImportReport:
    """What an import read: experiences added, those already stored, and every line refused."""

    path: str
    experiences_added: int = 0
    experiences_known: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)  # {line, message}

    def to_json(self) -> dict[str, Any]:
        """Every field, as ``--json`` prints it."""
        return asdict(self)


def import_log(runtime: Runtime, path: str | Path, max_mb: float = DEFAULT_MAX_MB) -> ImportReport:
    """Import a JSON-lines log of experiences; a bad line is reported and skipped, the rest stored.

    Example::

        report = import_log(runtime, "agent-log.jsonl")
        report.experiences_added, report.experiences_known, report.errors  # errors: [{"line": 7, "message": ...}]
    """
    path = Path(path)
    try:
        content = read_text(path, max_mb)
    except ValueError as exc:
        raise ConsolidationError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConsolidationError(f"{path}: {exc.strerror or exc}") from None
    log = read_log(content, default_session=path.stem)
    report = ImportReport(str(path), errors=[{"line": n, "message": m} for n, m in log.errors])
    with runtime.db.transaction() as con:
        report.experiences_added = consolidation_store.insert_experiences(con, log.experiences)
        report.experiences_known = len({e.id for e in log.experiences}) - report.experiences_added
        events_store.emit(con, "consolidation.imported", report.to_json())
    return report


def _activity(con: Connection, sources: Sequence[str]) -> list[Experience]:
    """The product's activity of these sources as experiences (captured when the run is written)."""
    found: list[Experience] = []
    if "wander" in sources:
        found += from_wander(consolidation_store.wander_steps(con), wander_store.list_crystals(con))
    if "dreams" in sources:
        nodes = dreaming_store.recent_nodes(con, "rem_dream", ACTIVITY_LIMIT) + dreaming_store.recent_nodes(
            con, "fused", ACTIVITY_LIMIT
        )
        verdicts = [v for v in dreaming_store.recent_verdicts(con, ACTIVITY_LIMIT) if v.created_by == EXPLORATION]
        found += from_dreams(nodes, verdicts)
    return found


@dataclass(frozen=True)
class Reading:
    """What a run reads: every experience of its source in the order they happened, those not stored yet (the
    activity this run captures), when the last run over the source was, and how many experiences came since.
    """

    experiences: list[Experience]
    fresh: list[Experience]
    last_run: datetime | None
    new: int


def read_experiences(runtime: Runtime, source: Source) -> Reading:
    """The experiences of ``source``, the stored and the captured now, with what a trigger weighs.

    Example::

        reading = read_experiences(runtime, "wander")
        len(reading.experiences), len(reading.fresh), reading.last_run, reading.new
    """
    sources = sources_of(source)
    with runtime.db.connect() as con:
        stored = consolidation_store.list_experiences(con, sources)
        activity = _activity(con, sources)
        last_run = consolidation_store.last_run_at(con, source)
        since = consolidation_store.count_experiences(con, sources, since=last_run)
    known = {e.id for e in stored}
    fresh = list({e.id: e for e in activity if e.id not in known}.values())
    ordered = sorted(
        [*stored, *fresh], key=lambda e: (e.occurred_at is None, e.occurred_at.timestamp() if e.occurred_at else 0)
    )
    return Reading(ordered, fresh, last_run, since + len(fresh))


def _pattern_json(pattern: Pattern) -> dict[str, Any]:
    return {
        "id": pattern.id,
        "name": pattern.name,
        "type": pattern.type,
        "description": pattern.description,
        "conditions": list(pattern.conditions),
        "actions": list(pattern.actions),
        "examples": list(pattern.example_ids),
        "success_rate": pattern.success_rate,
        "usage_count": pattern.usage_count,
        "confidence": pattern.confidence,
        "utility": pattern.utility,
        "status": pattern.status,
    }


def _item_json(item: LadderItem) -> dict[str, Any]:
    return {"id": item.id, "name": item.name, "statement": item.statement, "subsumes": list(item.subsumes)}


def pattern_quality(patterns: Sequence[Pattern]) -> float | None:
    """Pattern quality (docs/consolidation.md#targets): the success rate of the patterns, weighted by use
    (error-recovery patterns, which have none, left out); ``None`` when no pattern has one. It aims at 0.7.

    Example::

        result = consolidate(experiences, runtime.embedder, runtime.gateway)
        pattern_quality(result.patterns)  # e.g. 0.82; None when no pattern has a success rate
    """
    rated = [(p.success_rate, p.usage_count) for p in patterns if p.success_rate is not None]
    uses = sum(n for _, n in rated)
    return round(sum(rate * n for rate, n in rated) / uses, 4) if uses else None


def report_of(
    run_id: str | None, source: str, trigger: str, decision: Decision, result: Consolidation, spent: dict
) -> dict[str, Any]:
    """A run as ``--json`` prints it and the store keeps it.

    Example::

        report = report_of(run_id, "all", "manual", decide("manual", now, None, 0), result, spent)
        report["status"], report["compression_ratio"], report["verification"]
    """
    verification = result.verification
    if not decision.due:
        status = "not_due"
    else:
        status = verification.status if verification else ("raw" if result.experiences else "skipped")
    triage = result.triage
    return {
        "run_id": run_id,
        "source": source,
        "trigger": trigger,
        "reason": decision.reason,
        "status": status,
        "experiences": result.experiences,
        "triaged": len(result.triaged),
        "dropped": {
            "low_importance": triage.low_importance if triage else 0,
            "duplicates": triage.duplicates if triage else 0,
            "excluded": triage.excluded if triage else 0,
            "over_cap": triage.over_cap if triage else 0,
        },
        "clustering": result.clustering,
        "clusters": result.clusters,
        "noise": result.noise,
        "compression_ratio": result.compression_ratio,
        "pattern_quality": pattern_quality(result.patterns),
        "patterns": [_pattern_json(p) for p in result.patterns],
        "ladder_levels": result.ladder.depth,
        "ladder": [
            {"level": depth, "items": len(level), "top": [_item_json(i) for i in level] if depth >= 2 else []}
            for depth, level in enumerate(result.ladder.levels)
        ],
        "connections": len(result.connections),
        "connection_types": {
            kind: sum(c.relationship == kind for c in result.connections)
            for kind in sorted({c.relationship for c in result.connections})
        },
        "pruned_redundant": result.pruned_redundant,
        "pruned_low_utility": result.pruned_low_utility,
        "verification": {
            "status": verification.status,
            "score": verification.score,
            "checks": [
                {"name": c.name, "passed": c.passed, "score": c.score, "message": c.message}
                for c in verification.checks
            ],
        }
        if verification
        else None,
        "degraded": result.degraded,
        "warnings": result.warnings,
        "failures": result.failures,
        "model_calls": result.usage.calls,
        **spent,
        "errors": result.errors,
        "seconds": result.seconds,
    }


def run_consolidation(
    runtime: Runtime,
    source: Source = "all",
    trigger: Trigger = "manual",
    budget: Budget | None = None,
    progress: Progress | None = None,
    config: ConsolidationConfig = DEFAULT_CONSOLIDATION,
    schedule: ScheduleConfig = DEFAULT_SCHEDULE,
    now: datetime | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> RunReport:
    """Consolidate the experiences of ``source`` if ``trigger`` calls for it (as of ``now``) and store what the
    run makes; its report. Not due: nothing is run or stored, and the report says why (status ``not_due``).
    With no experiences nothing is stored either (status ``skipped``).

    Example::

        data = run_consolidation(runtime, source="all", trigger="manual").to_json()
        data["status"], data["compression_ratio"], [p["name"] for p in data["patterns"]]
    """
    reading = read_experiences(runtime, source)
    decision = decide(trigger, now or datetime.now(UTC), reading.last_run, reading.new, schedule)
    budget = budget or run_budget(runtime)
    before = budget.spent_cents
    if not decision.due:
        result = Consolidation(experiences=len(reading.experiences))
        return RunReport(report_of(None, source, trigger, decision, result, spent_fields(before, budget)))
    result = consolidate(reading.experiences, runtime.embedder, runtime.gateway, config, budget, progress, sleep)
    spent = spent_fields(before, budget)
    if not reading.experiences:
        return RunReport(report_of(None, source, trigger, decision, result, spent))
    run_id = new_id()
    report = report_of(run_id, source, trigger, decision, result, spent)
    report["captured"] = len(reading.fresh)
    with runtime.db.transaction() as con:
        consolidation_store.insert_experiences(con, reading.fresh)
        consolidation_store.insert_run(con, run_id, source, trigger, report)
        checks = result.verification.checks if result.verification else ()
        consolidation_store.insert_knowledge(
            con, run_id, result.patterns, result.ladder.levels, result.connections, checks
        )
        events_store.emit(
            con, "consolidation.completed", {k: v for k, v in report.items() if k not in ("patterns", "ladder")}
        )
    runtime.flush()
    return RunReport(report)


def run_due(
    runtime: Runtime,
    source: Source = "all",
    budget: Budget | None = None,
    schedule: ScheduleConfig = DEFAULT_SCHEDULE,
    now: datetime | None = None,
) -> RunReport | None:
    """One check of the background triggers: a run when the periodic trigger or the threshold trigger calls for
    one (in that order; the first that is due runs), else ``None``. What ``explorer consolidate schedule`` does at
    every tick.

    Example::

        report = run_due(runtime)  # None: neither the periodic nor the threshold trigger is due
        if report is not None:
            print(report.brief())
    """
    for trigger in ("periodic", "threshold"):
        report = run_consolidation(runtime, source, trigger, budget=budget, schedule=schedule, now=now)
        if report.to_json()["status"] != "not_due":
            return report
    return None


def after_session(runtime: Runtime, status: str, budget: Budget | None = None) -> RunReport | None:
    """The session-complete trigger (the primary one): when a walk has just ended ``completed``, consolidate
    the product's wander experiences; ``None`` for a session still open or abandoned.

    Every surface that can complete a session (a walk reaching its max steps, a person stopping it) calls this
    right after, so a completed session is never left unconsolidated.

    Example::

        session = stop(runtime, session_id)  # explorer.wander.service.stop
        report = after_session(runtime, session.status)  # None unless the session completed
    """
    if status != "completed":
        return None
    return run_consolidation(runtime, source="wander", trigger="session-complete", budget=budget)


def after_session_brief(runtime: Runtime, status: str) -> dict[str, Any] | None:
    """:func:`after_session` as a surface reports it beside the walk: the run's :meth:`RunReport.brief`, or
    ``{"status": "failed", "error": …}`` when consolidating failed (the walk stands whatever happens to its
    consolidation, so the failure is reported, not raised); ``None`` for a session still open.

    Example::

        after_session_brief(runtime, "completed")  # run_id, status, patterns, ladder_levels, verification_score
    """
    try:
        report = after_session(runtime, status)
    except ExplorerError as exc:
        return {"status": "failed", "error": str(exc)}
    return None if report is None else report.brief()


@dataclass(frozen=True)
class RunReport:
    """A run's report: what ``--json`` prints, the store keeps and the event records (see :func:`report_of`)."""

    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON values."""
        return self.data

    def brief(self) -> dict[str, Any]:
        """What a command that completed a session adds under ``"consolidation"``: the run's id, status and
        numbers, not its patterns.
        """
        data = self.data
        check = data.get("verification") or {}
        return {
            "run_id": data.get("run_id"),
            "status": data["status"],
            "patterns": len(data.get("patterns", [])),
            "ladder_levels": data.get("ladder_levels", 0),
            "verification_score": check.get("score"),
        }


@dataclass(frozen=True)
class Applicable:
    """A pattern or abstraction that applies to a situation, and how well (similarity to its description)."""

    item: LadderItem
    score: float
    pattern: Pattern | None = None  # for a pattern: its conditions, actions and numbers


def knowledge_json(run_id: str, patterns: Sequence[Applicable], abstractions: Sequence[Applicable]) -> dict[str, Any]:
    """A knowledge query's answer (:func:`query_knowledge`) as plain JSON: what ``explorer consolidate query --json``
    prints and the API answers.

    Example::

        run_id, patterns, abstractions = query_knowledge(runtime, "a flaky integration test")
        json.dumps(knowledge_json(run_id, patterns, abstractions))
    """
    return {
        "run_id": run_id,
        "patterns": [
            {
                "id": hit.item.id,
                "name": hit.item.name,
                "description": hit.item.statement,
                "score": hit.score,
                "conditions": list(hit.pattern.conditions) if hit.pattern else [],
                "actions": list(hit.pattern.actions) if hit.pattern else [],
                "status": hit.pattern.status if hit.pattern else None,
            }
            for hit in patterns
        ],
        "abstractions": [
            {"id": a.item.id, "level": a.item.level, "name": a.item.name, "statement": a.item.statement}
            for a in abstractions
        ],
    }


def query_knowledge(
    runtime: Runtime, situation: str, limit: int = 5, min_score: float = 0.1
) -> tuple[str, list[Applicable], list[Applicable]]:
    """The newest run's patterns most alike ``situation`` (at least ``min_score``, at most ``limit``; an
    invalidated pattern never), and the abstractions above them, most general last; with the run's id.

    Example::

        run_id, patterns, abstractions = query_knowledge(runtime, "retrying a failed network call", limit=3)
        for hit in patterns:
            print(hit.score, hit.item.name, hit.pattern.actions if hit.pattern else ())
    """
    if not situation.strip():
        raise ConsolidationError("a situation to query is needed, not an empty text")
    with runtime.db.connect() as con:
        found = consolidation_store.last_run(con)
        if found is None:
            raise ConsolidationError("nothing has been consolidated yet", remedy=Remedy.CONSOLIDATE)
        run_id = found[0]
        patterns = {p.id: p for p in consolidation_store.run_patterns(con, run_id)}
        levels = consolidation_store.run_ladder(con, run_id)
    query = runtime.embedder.embed([situation])[0]
    invalidated = {i for i, p in patterns.items() if p.status == "invalidated"}  # contradicted: never offered
    techniques = [
        i for i in (levels[1] if len(levels) > 1 else []) if i.embedding is not None and i.id not in invalidated
    ]
    scores = [float(np.dot(i.embedding, query)) for i in techniques]  # type: ignore[arg-type]
    ranked = sorted(zip(techniques, scores, strict=True), key=lambda pair: -pair[1])
    hits = [Applicable(i, round(s, 4), patterns.get(i.id)) for i, s in ranked[:limit] if s >= min_score]
    above: list[Applicable] = []
    reached = {h.item.id for h in hits}
    for level in levels[2:]:
        for item in level:
            if reached & set(item.subsumes) and item.embedding is not None:
                above.append(Applicable(item, round(float(np.dot(item.embedding, query)), 4)))
        reached |= {a.item.id for a in above}
    return run_id, hits, above
