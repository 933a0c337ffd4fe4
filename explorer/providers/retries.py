"""The retry rule every remote model request follows, completions and embeddings alike: which failures are worth
another attempt, how long to wait before it, and how a failure reads.

One rule, so ``EXPLORER_RETRIES`` and ``EXPLORER_TIMEOUT`` bound an embedding the way they bound a completion:
at most ``timeout × (retries + 1)`` plus the backoff between attempts. The HTTP client's own retries are turned
off (``max_retries=0``): they would multiply that bound, unseen.
"""

from __future__ import annotations

from explorer.providers.deadline import DeadlinePassed

_FINAL = ("Authentication", "NotFound", "BadRequest", "PermissionDenied", "ContextWindow")  # asked again, the same


def backoff_s(attempt: int) -> float:
    """Seconds to wait before ``attempt`` (1: the first retry): half a second, doubling, at most eight."""
    return min(8.0, 0.5 * 2 ** (attempt - 1))


def retryable(exc: Exception) -> bool:
    """Whether another attempt could go otherwise: not for a request the provider refused as it stands."""
    return not any(word in type(exc).__name__ for word in _FINAL)


def timed_out(exc: Exception) -> bool:
    """Whether the request ran out of time: its whole deadline, or a read the HTTP client timed."""
    return isinstance(exc, DeadlinePassed) or "Timeout" in type(exc).__name__


def describe(exc: Exception, model: str, timeout_s: float) -> str:
    """A failed request in one line, naming ``model`` (``"embedding model …"``, say): a timeout says after how
    long, any other failure the first line of its message.
    """
    if timed_out(exc):
        return f"{model} timed out after {timeout_s:g} s"
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{model} failed: {first_line[:300]}"
