"""Who may call the API: anyone on this machine when it listens on a loopback address, only holders of a token
otherwise; and, when the token names its holder, who a review made with it is logged under.

Why the rule is about the address: on 127.0.0.1 only this machine's programs reach the server, as with the app;
on any other address the network does, and an open API would let anyone there walk, dream and delete sessions.
So ``explorer serve`` refuses a non-loopback address without a token (:func:`needs_token`), and with a token set
every request, whatever its path, must carry ``Authorization: Bearer TOKEN`` (:class:`BearerToken`).

Why tokens carry names: a team sharing one server shares its review log, and a log whose "who" is a field any
client fills in says nothing. A request made with a named token (``EXPLORER_TOKENS``) reviews as that name
(:func:`reviewer_of`); the single ``--token`` names nobody, so its holders say who they are, as before.
"""

from __future__ import annotations

import ipaddress

from fastapi import Request
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from explorer.api.errors import error_response
from explorer.people import Tokens

LOOPBACK_NAMES = {"localhost"}
HOLDER = "token_holder"  # the request state's key for the name of the token the request carried


def needs_token(host: str) -> bool:
    """Whether a server bound to ``host`` must have a token: every address but a loopback one (127.0.0.0/8, ::1)."""
    if host.lower() in LOOPBACK_NAMES:
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return True


class BearerToken:
    """Answers 401 to any request without ``Authorization: Bearer <token>`` for one of the server's tokens
    (documents and unknown paths too), before it reaches a route; a named token's name goes on with the request
    (its state's :data:`HOLDER`).
    """

    def __init__(self, app: ASGIApp, tokens: Tokens):
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on only when it carries a token (lifespan and other non-HTTP messages always)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accepted, name = self.tokens.holder(self._credentials(scope))
        if not accepted:
            response = error_response(
                401,
                "unauthorized",
                "this server needs a token: send the header Authorization: Bearer TOKEN",
                {"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        if name is not None:  # a state of this request's own: the server's shared state is not written to
            scope["state"] = {**scope.get("state", {}), HOLDER: name}
        await self.app(scope, receive, send)

    @staticmethod
    def _credentials(scope: Scope) -> bytes:
        scheme, _, credentials = dict(scope.get("headers") or ()).get(b"authorization", b"").partition(b" ")
        return credentials.strip() if scheme.lower() == b"bearer" else b""


def reviewer_of(request: Request, claimed: str | None) -> str | None:
    """Who a review, bulk review or revert made by ``request`` is logged under: the name of the token it carried,
    or, with the single unnamed token or none, the ``reviewer`` its body gives (``claimed``).

    A body naming someone other than the token's holder is refused (403), not quietly overwritten: a client that
    believes it reviews as another person should hear that it does not.
    """
    holder: str | None = getattr(request.state, HOLDER, None)
    if holder is None:
        return claimed
    if claimed and claimed.strip() and claimed.strip() != holder:
        raise HTTPException(403, f"this request's token is {holder}'s: leave reviewer out, or give {holder!r}")
    return holder
