"""How much one request runs itself before it must be a job: the API's requests and the MCP server's tool calls
that take steps or dreams run at most :data:`PER_REQUEST` of them while the caller waits; more are queued as a
job (``background: true``) for a worker, followed with the job's id. Each item asks a model once or more, so a
larger foreground run would hold the caller, and its connection's timeouts, for minutes.

Both surfaces refuse the same counts and state the limit in their schemas with :func:`in_one_request`.
"""

from __future__ import annotations

from typing import Any

PER_REQUEST = 20  # the most steps (or dreams) one request or tool call runs itself


def in_one_request(count: str) -> dict[str, Any]:
    """The limit as JSON Schema, for the object schema of a request or a tool's arguments: unless
    ``"background": true``, ``count`` is at most :data:`PER_REQUEST` (``properties`` hold when background is false
    or left out, as its default is false).
    """
    return {
        "if": {"properties": {"background": {"const": False}}},
        "then": {"properties": {count: {"maximum": PER_REQUEST}}},
    }
