"""Queries of consolidation: experiences (written once, never changed), wander's steps as experiences read
them, and each run's patterns, ladder, connections and checks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from explorer.records.consolidation import Check, Experience, LadderItem, LadderLink, Pattern, WanderStep
from explorer.store.database import Connection, insert_rows

_EXPERIENCE_COLUMNS = (
    "id, source, kind, outcome, description, strategy, confidence, insight_type, impact, trigger, duration_s, "
    "candidates_eliminated, session_id, metadata, occurred_at"
)


def _vector(value: np.ndarray | None) -> list[float] | None:
    return None if value is None else np.asarray(value, dtype=np.float32).tolist()


def _array(value: Any) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=np.float32)


def _ids(values: Sequence[Any]) -> tuple[str, ...]:
    return tuple(str(v) for v in values)


def insert_experiences(con: Connection, experiences: Sequence[Experience]) -> int:
    """Store the experiences not stored yet (by id); how many were new. Stored ones are never changed."""
    if not experiences:
        return 0
    ids = list(dict.fromkeys(e.id for e in experiences))
    rows = con.execute("SELECT id FROM experiences WHERE id IN (SELECT unnest(?::UUID[]))", [ids]).fetchall()
    known = {str(r[0]) for r in rows}
    fresh = list({e.id: e for e in experiences if e.id not in known}.values())
    insert_rows(
        con,
        "experiences",
        _EXPERIENCE_COLUMNS.split(", "),
        [
            (e.id, e.source, e.kind, e.outcome, e.description, e.strategy, e.confidence, e.insight_type)
            + (e.impact, e.trigger, e.duration_s, e.candidates_eliminated, e.session_id)
            + (json.dumps(e.metadata, default=str), e.occurred_at)
            for e in fresh
        ],
    )
    return len(fresh)


def list_experiences(con: Connection, sources: Sequence[str]) -> list[Experience]:
    """The stored experiences of these sources, oldest first (the order novelty is judged in)."""
    rows = con.execute(
        f"SELECT {_EXPERIENCE_COLUMNS} FROM experiences WHERE source IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY coalesce(occurred_at, captured_at), captured_at, seq",
        [list(sources)],
    ).fetchall()
    return [_experience(row) for row in rows]


def _experience(row: tuple[Any, ...]) -> Experience:
    id_, source, kind, outcome, description, strategy, confidence, insight_type, impact, trigger, *rest = row
    duration_s, eliminated, session_id, metadata, occurred_at = rest
    return Experience(
        kind=kind,
        description=description,
        outcome=outcome,
        session_id=session_id,
        source=source,
        strategy=strategy,
        confidence=confidence,
        insight_type=insight_type,
        impact=impact,
        trigger=trigger,
        duration_s=duration_s,
        candidates_eliminated=eliminated,
        metadata=json.loads(metadata) if isinstance(metadata, str) else metadata,
        occurred_at=occurred_at,
        id=str(id_),
    )


def count_experiences(con: Connection, sources: Sequence[str], since: datetime | None = None) -> int:
    """How many experiences of these sources were captured (after ``since``, when given)."""
    return int(
        con.execute(
            "SELECT count(*) FROM experiences WHERE source IN (SELECT unnest(?::VARCHAR[])) "
            "AND (?::TIMESTAMPTZ IS NULL OR captured_at > ?::TIMESTAMPTZ)",
            [list(sources), since, since],
        ).fetchone()[0]  # type: ignore[index]
    )


def wander_steps(con: Connection) -> list[WanderStep]:
    """Every wander step with where it went and the residue it left (none when the step failed before one)."""
    rows = con.execute(
        "SELECT t.id, t.session_id, t.step_number, l.concept, t.strategy, t.failures, r.connection, r.bridge, "
        "r.surprise, r.interestingness, r.themes, t.created_at FROM wander_traces t "
        "JOIN wander_loci l ON l.id = t.to_locus_id LEFT JOIN wander_residues r ON r.trace_id = t.id "
        "ORDER BY t.session_id, t.step_number"
    ).fetchall()
    return [
        WanderStep(str(t), str(s), n, c, st, f, conn, b, su, i, tuple(th or ()), at)
        for t, s, n, c, st, f, conn, b, su, i, th, at in rows
    ]


def insert_run(con: Connection, run_id: str, source: str, trigger: str, report: dict[str, Any]) -> None:
    """Record one run with its counts and its whole report."""
    con.execute(
        "INSERT INTO consolidation_runs (id, source, trigger, status, experiences, triaged, patterns, "
        "compression_ratio, ladder_levels, connections, verification_score, report) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            run_id,
            source,
            trigger,
            report["status"],
            report["experiences"],
            report["triaged"],
            len(report["patterns"]),
            report["compression_ratio"],
            report["ladder_levels"],
            report["connections"],
            report["verification"]["score"] if report.get("verification") else None,
            json.dumps(report, default=str),
        ],
    )


def insert_knowledge(
    con: Connection,
    run_id: str,
    patterns: Sequence[Pattern],
    ladder: Sequence[Sequence[LadderItem]],
    connections: Sequence[LadderLink],
    checks: Sequence[Check],
) -> None:
    """A run's patterns, every rung of its ladder, its connections and its verification checks."""
    insert_rows(
        con,
        "consolidation_patterns",
        ("id", "run_id", "name", "type", "description", "conditions", "actions", "example_ids", "member_ids")
        + ("success_rate", "usage_count", "confidence", "utility", "status", "embedding"),
        [
            (p.id, run_id, p.name, p.type, p.description, list(p.conditions), list(p.actions))
            + (list(p.example_ids), list(p.member_ids), p.success_rate, p.usage_count, p.confidence)
            + (p.utility, p.status, _vector(p.embedding))
            for p in patterns
        ],
    )
    items = [item for level in ladder for item in level]
    insert_rows(
        con,
        "consolidation_ladder",
        ("run_id", "id", "level", "name", "statement", "subsumes", "embedding"),
        [[run_id, i.id, i.level, i.name, i.statement, list(i.subsumes), _vector(i.embedding)] for i in items],
    )
    insert_rows(
        con,
        "consolidation_connections",
        ("run_id", "from_id", "to_id", "relationship", "strength", "level", "evidence", "reason"),
        [
            [run_id, c.from_id, c.to_id, c.relationship, c.strength, c.level, list(c.evidence), c.reason]
            for c in connections
        ],
    )
    insert_rows(
        con,
        "consolidation_checks",
        ("run_id", "name", "passed", "score", "severity", "message", "details"),
        [[run_id, c.name, c.passed, c.score, c.severity, c.message, list(c.details)] for c in checks],
    )


def last_run(con: Connection, sources: Sequence[str] | None = None) -> tuple[str, datetime] | None:
    """The newest run (of one of these sources, when given) that stored knowledge: its id and when it ran."""
    row = con.execute(
        "SELECT id, created_at FROM consolidation_runs WHERE (?::VARCHAR[] IS NULL OR source IN "
        "(SELECT unnest(?::VARCHAR[]))) AND patterns > 0 ORDER BY created_at DESC, seq DESC LIMIT 1",
        [None if sources is None else list(sources)] * 2,
    ).fetchone()
    return (str(row[0]), row[1]) if row else None


def last_run_at(con: Connection, source: str) -> datetime | None:
    """When the newest run over ``source`` ran, whatever it stored (what a minimum interval counts from)."""
    row = con.execute("SELECT max(created_at) FROM consolidation_runs WHERE source = ?", [source]).fetchone()
    return row[0] if row else None


def run_patterns(con: Connection, run_id: str) -> list[Pattern]:
    """A run's patterns, with their embeddings."""
    rows = con.execute(
        "SELECT id, name, type, description, conditions, actions, example_ids, member_ids, success_rate, "
        "usage_count, confidence, utility, status, embedding FROM consolidation_patterns WHERE run_id = ? "
        "ORDER BY seq",
        [run_id],
    ).fetchall()
    return [
        Pattern(n, t, d, tuple(c), tuple(a), _ids(ex), _ids(m), sr, u, conf, ut, st, _array(e), id=str(i))
        for i, n, t, d, c, a, ex, m, sr, u, conf, ut, st, e in rows
    ]


def run_ladder(con: Connection, run_id: str) -> list[list[LadderItem]]:
    """A run's ladder, rung by rung from the instances up."""
    rows = con.execute(
        "SELECT level, name, statement, subsumes, embedding, id FROM consolidation_ladder WHERE run_id = ? "
        "ORDER BY level, seq",
        [run_id],
    ).fetchall()
    levels: list[list[LadderItem]] = []
    for level, name, statement, subsumes, embedding, id_ in rows:
        while len(levels) <= level:
            levels.append([])
        levels[level].append(LadderItem(level, name, statement, _ids(subsumes), _array(embedding), id=str(id_)))
    return levels


def run_report(con: Connection, run_id: str) -> dict[str, Any] | None:
    """The report a run printed, as it was stored."""
    row = con.execute("SELECT report FROM consolidation_runs WHERE id = ?", [run_id]).fetchone()
    if row is None:
        return None
    return json.loads(row[0]) if isinstance(row[0], str) else row[0]


def experiences_by_id(con: Connection, ids: Sequence[str]) -> dict[str, Experience]:
    """The stored experiences of these ids (a pattern's examples and members), by id; unknown ids are left out."""
    if not ids:
        return {}
    rows = con.execute(
        f"SELECT {_EXPERIENCE_COLUMNS} FROM experiences WHERE id IN (SELECT unnest(?::UUID[]))",
        [list(dict.fromkeys(ids))],
    ).fetchall()
    return {e.id: e for e in map(_experience, rows)}
