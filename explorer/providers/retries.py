"""The retry rule every remote model request follows, completions and embeddings alike: which failures are worth
another attempt, how long to wait before it, and how a failure reads.

One rule, so ``EXPLORER_RETRIES`` and ``EXPLORER_TIMEOUT`` bound an embedding the way they bound a completion:
at most ``timeout × (retries + 1)`` plus the backoff between attempts. The HTTP client's own retries are turned
off (``max_retries=0``): they would multiply that bound, unseen.
"""

from __future__ import annotations

import re

from explorer.providers.client import load_litellm
from explorer.providers.deadline import DeadlinePassed

# A FastAPI server's refusal of a request's shape (llama-cpp-python's) is "1 validation error:" on its first line
# and what failed on the next, as the repr of pydantic's error: ('body', 'response_format', 'type') and its msg.
_VALIDATION_PROBLEM = re.compile(r"""'loc': \(([^)]*)\), 'msg': (?:'([^'\n]*)'|"([^"\n]*)")""")


def backoff_s(attempt: int) -> float:
    """Seconds to wait before ``attempt`` (1: the first retry): half a second, doubling, at most eight."""
    return min(8.0, 0.5 * 2 ** (attempt - 1))


def retryable(exc: Exception) -> bool:
    """Whether another attempt could go otherwise: not for a request the provider refused as it stands (asked
    again, it is refused again), which litellm raises as one of its status errors: 400 (its ``BadRequestError``,
    and under it a context window exceeded, an unsupported parameter, an unknown provider), 401, 403, 404 or 422.
    Everything else is worth another attempt: a rate limit, a timeout, a lost connection, a server's error, and a
    failure litellm did not map (its generic ``APIError``, which it raises for an OpenAI-compatible server's 403,
    say): one it does not know may be passing, and is better tried again than lost.
    """
    litellm = load_litellm()  # already imported: the failed request was litellm's
    refused = (
        litellm.BadRequestError,
        litellm.AuthenticationError,
        litellm.PermissionDeniedError,
        litellm.NotFoundError,
        litellm.UnprocessableEntityError,
    )
    return not isinstance(exc, refused)


def timed_out(exc: Exception) -> bool:
    """Whether the request ran out of time: its whole deadline, or a read the HTTP client timed."""
    return isinstance(exc, DeadlinePassed | load_litellm().Timeout)


def describe(exc: Exception, model: str, timeout_s: float) -> str:
    """A failed request in one line, naming ``model`` (``"embedding model …"``, say): a timeout says after how
    long, any other failure the first line of its message.
    """
    if timed_out(exc):
        return f"{model} timed out after {timeout_s:g} s"
    return f"{model} failed: {gist(str(exc)) or type(exc).__name__}"


def gist(message: str) -> str:
    """A failure's message in one line, at most 300 characters: its first line, and for a server's validation
    error (whose first line is only "1 validation error:") the field and the problem it names.
    """
    lines = message.strip().splitlines()
    first = lines[0] if lines else ""
    problem = _VALIDATION_PROBLEM.search(message)
    if problem is not None:
        parts = [part.strip(" '\"") for part in problem[1].split(",")]
        where = ".".join(part for part in parts if part and part != "body")  # the request's body: every field's
        first = f"{first} {where}: {problem[2] or problem[3]}"
    return first[:300]
