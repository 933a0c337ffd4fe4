"""The base of every error a user can act on.

Surfaces show such an error as one line (the CLI on stderr with a non-zero exit,
the app as an error box); anything else is a bug, which the CLI still reports in one
line (with a way to see the traceback) and the app as a traceback.

The engine says what went wrong in its own words and names, as a :class:`Remedy`,
what would put it right; each surface phrases that remedy in its own terms (a
command for the CLI, a page for the app), so no engine message speaks CLI syntax.
"""

from __future__ import annotations

from enum import StrEnum


class Remedy(StrEnum):
    """What the person can do about an error; surfaces turn it into their own hint."""

    INGEST = "ingest"  # the knowledge base needs documents first
    LIST_SESSIONS = "list_sessions"  # an unknown session id
    LIST_CRYSTALS = "list_crystals"  # an unknown crystal id
    RESUME_SESSION = "resume_session"  # the session is paused
    NEW_SESSION = "new_session"  # the session has ended
    OTHER_DATABASE = "other_database"  # the database was made with another embedding model
    FORCE_REVIEW = "force_review"  # the crystal was reviewed already; changing the decision must be explicit
    CONSOLIDATE = "consolidate"  # nothing has been consolidated yet
    LIST_JOBS = "list_jobs"  # an unknown job id
    LIST_DREAMS = "list_dreams"  # an unknown dream id
    CHECK_DATABASE = "check_database"  # no database where one was to be read: a mistyped path, or none made yet


class ExplorerError(Exception):
    """A problem with the user's input, data or configuration.

    ``remedy`` says what would fix it and ``subject`` names the thing it is about (a session id, a file),
    so a surface can build a hint such as a command line or a link to a page.
    """

    def __init__(self, message: str, *, remedy: Remedy | None = None, subject: str | None = None):
        super().__init__(message)
        self.remedy = remedy
        self.subject = subject
