"""The model-call log: every call the gateway makes, with its cost and outcome."""

from __future__ import annotations

from explorer.records.calls import CallRecord
from explorer.store.database import Connection


def log_calls(con: Connection, records: list[CallRecord]) -> None:
    """Keep what each model call cost and how it ended: the record of what was spent outlives any session."""
    if records:
        con.executemany(
            "INSERT INTO model_calls (model, tier, purpose, session_id, prompt_tokens, completion_tokens, "
            "cost_cents, latency_ms, outcome, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                [
                    r.model,
                    r.tier,
                    r.purpose,
                    r.session_id,
                    r.prompt_tokens,
                    r.completion_tokens,
                    r.cost_cents,
                    r.latency_ms,
                    r.outcome,
                    r.error,
                ]
                for r in records
            ],
        )


def call_summary(con: Connection) -> list[tuple[str, str, str, int, float]]:
    """(tier, model, outcome, calls, cents) over the whole log."""
    return con.execute(
        "SELECT tier, model, outcome, count(*), sum(cost_cents) FROM model_calls GROUP BY ALL ORDER BY ALL"
    ).fetchall()


def recent_calls(con: Connection, limit: int = 100) -> list[CallRecord]:
    """The last ``limit`` calls, oldest first, as the gateway reported them."""
    rows = con.execute(
        "SELECT model, tier, purpose, outcome, prompt_tokens, completion_tokens, cost_cents, latency_ms, error, "
        "CAST(session_id AS VARCHAR) FROM (SELECT *, rowid AS r FROM model_calls ORDER BY r DESC LIMIT ?) "
        "ORDER BY r",
        [limit],
    ).fetchall()
    return [CallRecord(*row) for row in rows]
