"""Refuse a request body over :data:`~explorer.api.models.MAX_BODY_BYTES` with 413 before it is read.

Why not Starlette's ``RequestBodyLimitMiddleware``: it answers a too-long ``Content-Length`` in plain text, outside
the API's one error shape. Here that answer is the API's JSON error, given before the route (or its body parsing)
runs; a body sent without a length (chunked) is counted as it comes in and refused once it passes the limit, so
at most the limit and one chunk are ever held.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from explorer.api.errors import MESSAGES, error_response


class BodyLimit:
    """An ASGI middleware: 413 ``too_large`` for a body over ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 413 at once for a declared length over the limit; otherwise count the body as the route reads it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            await error_response(413, "too_large", MESSAGES[413])(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.limit:  # the route's body parsing lets this through to the API's error handler
                raise HTTPException(413)
            return message

        await self.app(scope, counted, send)
