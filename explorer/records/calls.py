"""A model call as the gateway reports it and the call log stores it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallRecord:
    """One model call. Never holds prompt text or keys: only what it cost and how it went."""

    model: str
    tier: str
    purpose: str
    outcome: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_cents: float = 0.0
    latency_ms: float = 0.0
    error: str | None = None
    session_id: str | None = None
