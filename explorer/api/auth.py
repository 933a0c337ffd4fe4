"""Who may call the API: anyone on this machine when it listens on a loopback address, only holders of the token
otherwise.

Why the rule is about the address: on 127.0.0.1 only this machine's programs reach the server, as with the app;
on any other address the network does, and an open API would let anyone there walk, dream and delete sessions.
So ``explorer serve`` refuses a non-loopback address without a token (:func:`needs_token`), and with a token set
every request, whatever its path, must carry ``Authorization: Bearer TOKEN`` (:class:`BearerToken`).
"""

from __future__ import annotations

import ipaddress
import secrets

from starlette.types import ASGIApp, Receive, Scope, Send

from explorer.api.errors import error_response

LOOPBACK_NAMES = {"localhost"}


def needs_token(host: str) -> bool:
    """Whether a server bound to ``host`` must have a token: every address but a loopback one (127.0.0.0/8, ::1)."""
    if host.lower() in LOOPBACK_NAMES:
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return True


class BearerToken:
    """Answers 401 to any request without ``Authorization: Bearer <token>`` (documents and unknown paths too),
    before it reaches a route. Compared in constant time, so the answer's timing does not leak the token.
    """

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on only when it carries the token (lifespan and other non-HTTP messages always)."""
        if scope["type"] == "http" and not self._carries_token(scope):
            response = error_response(
                401,
                "unauthorized",
                "this server needs a token: send the header Authorization: Bearer TOKEN",
                {"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _carries_token(self, scope: Scope) -> bool:
        scheme, _, credentials = dict(scope.get("headers") or ()).get(b"authorization", b"").partition(b" ")
        return scheme.lower() == b"bearer" and secrets.compare_digest(credentials.strip(), self.token)
