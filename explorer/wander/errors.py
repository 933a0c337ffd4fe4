"""Errors a person can act on while wandering (each one line, saying what to do)."""

from __future__ import annotations

from explorer.errors import ExplorerError, Remedy


class WanderError(ExplorerError):
    """Base of Wander's user-facing errors."""


class SessionNotFound(WanderError):
    """A session id that names no session (mistyped, or deleted meanwhile)."""

    def __init__(self, session_id: str):
        super().__init__(f"no wander session {session_id!r}", remedy=Remedy.LIST_SESSIONS, subject=session_id)
        self.session_id = session_id


class SessionStateError(WanderError):
    """An operation the session's status does not allow (stepping a paused session, resuming a completed one)."""


class NotFound(WanderError):
    """A crystal, resonance or locus id that does not exist."""


class InvalidRequest(WanderError):
    """An argument outside what Wander accepts (a fence action, a review decision, a negative budget)."""
