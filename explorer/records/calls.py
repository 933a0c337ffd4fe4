"""A model call as the gateway reports it and the call log stores it."""

from __future__ import annotations

from dataclasses import dataclass

# How a call can end, as the log stores it (the model_calls table's valid_outcome check): answered (``ok``), an
# answer its reader refused (``parse_error``), a failure (``error``, ``timeout``), or the server refusing the
# response format it was asked in (``form_refused``: asked again at once in a weaker one, so not a failure).
FORM_REFUSED = "form_refused"
OUTCOMES = ("ok", "parse_error", "error", "timeout", FORM_REFUSED)


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
