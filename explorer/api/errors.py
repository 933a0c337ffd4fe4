"""How the API says what went wrong: always ``{"error": {"code", "message"}}`` with the status that fits.

The engine raises :class:`~explorer.errors.ExplorerError` subclasses in its own words; here they become statuses
(404 an unknown id, 409 a request the session's, job's or crystal's state refuses, 422 a bad body or parameter,
503 a busy database) and the engine's :class:`~explorer.errors.Remedy` becomes a hint naming the endpoint that
would fix it, as the CLI names a command. Anything else is a bug: 500, with no traceback or internals in the
answer (the server's log has them).

A spent budget is not an error of its own: a walk whose budget runs out goes on with the offline provider, or
pauses (``pause_kind`` "budget") when so tuned, and stepping a paused session is a 409 like any other; a dream
or consolidation run reports ``budget_exhausted`` in its 200 answer.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from explorer.api.models import MAX_BODY_BYTES, ErrorBody
from explorer.errors import ExplorerError, Remedy
from explorer.jobs import JobNotFound, JobStateError
from explorer.providers.embeddings import EmbeddingError
from explorer.store.database import DatabaseBusy, StoreError, WriteConflict
from explorer.store.ids import AmbiguousId
from explorer.wander.errors import InvalidRequest, NotFound, SessionNotFound, SessionStateError

log = logging.getLogger("explorer.api")

# The first class an error is an instance of decides its status and code; ExplorerError last, as the fallback.
STATUSES: list[tuple[type[Exception], int, str]] = [
    (SessionNotFound, 404, "not_found"),
    (NotFound, 404, "not_found"),
    (JobNotFound, 404, "not_found"),
    (SessionStateError, 409, "wrong_state"),
    (JobStateError, 409, "wrong_state"),
    (InvalidRequest, 422, "invalid_request"),
    (AmbiguousId, 422, "invalid_request"),
    (WriteConflict, 409, "conflict"),
    (DatabaseBusy, 503, "database_busy"),
    (StoreError, 503, "database_unavailable"),
    (EmbeddingError, 503, "embedder_unavailable"),
    # the rest refuse what the data does not allow now (too few nodes to dream, nothing consolidated yet)
    (ExplorerError, 409, "refused"),
]

# How the API phrases what would fix an engine error ({subject}: the id it is about).
HINTS: dict[Remedy, str] = {
    Remedy.INGEST: "read documents first (explorer ingest PATH)",
    Remedy.LIST_SESSIONS: "GET /api/v1/wander/sessions lists the sessions",
    Remedy.LIST_CRYSTALS: "GET /api/v1/wander/crystals lists the crystals",
    Remedy.RESUME_SESSION: "resume it: POST /api/v1/wander/sessions/{subject}/resume",
    Remedy.NEW_SESSION: "start a new session: POST /api/v1/wander/sessions",
    Remedy.FORCE_REVIEW: 'send "force": true to change the decision',
    Remedy.OTHER_DATABASE: "serve another database, or set EXPLORER_EMBEDDING_MODEL to the model it was built with",
    Remedy.CONSOLIDATE: "consolidate first: POST /api/v1/consolidation/runs",
    Remedy.LIST_JOBS: "GET /api/v1/jobs lists the jobs",
    Remedy.LIST_DREAMS: "GET /api/v1/dreams lists the dreams",
}

# What each error status means, for the OpenAPI document of every operation.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "The body cannot be read (not UTF-8 text)."),
        (401, "No valid bearer token (the server was started with one)."),
        (404, "No such session, locus, crystal or job."),
        (409, "The session's, job's or crystal's state refuses this, or the data does not allow it yet."),
        (413, f"The body is over the server's limit of {MAX_BODY_BYTES} bytes; it was not read."),
        (422, "The body or a parameter is not valid."),
        (500, "A bug in the server; its log has the details."),
        (503, "The database is busy (another process held it too long) or cannot be used; try again."),
    )
}

# The code, and the message when Starlette's own says too little, of an HTTP error no engine error stands behind.
CODES = {400: "bad_request", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}
MESSAGES = {
    404: "no such endpoint; /docs lists them",
    413: f"the body is over the server's limit of {MAX_BODY_BYTES} bytes; it was not read",
}


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The one shape of every error answer."""
    return JSONResponse(
        {"error": {"code": code, "message": message}},
        status_code=status,
        headers=headers,
    )


def engine_error(exc: ExplorerError) -> JSONResponse:
    """An engine error as its status, with the engine's message and the API's hint."""
    status, code = next((s, c) for kind, s, c in STATUSES if isinstance(exc, kind))
    hint = HINTS.get(exc.remedy) if exc.remedy else None
    message = str(exc) + (f"; {hint.format(subject=exc.subject or 'ID')}" if hint else "")
    return error_response(status, code, message, {"Retry-After": "5"} if status == 503 else None)


def validation_message(exc: RequestValidationError) -> str:
    """Every problem with the request, as ``where: what`` (``body.n_steps: Input should be …``), in one line."""
    problems = []
    for problem in exc.errors():
        where = ".".join(str(part) for part in problem.get("loc", ()))
        what = str(problem.get("msg", "invalid")).removeprefix("Value error, ")
        problems.append(f"{where}: {what}" if where else what)
    return "; ".join(problems) or "the request is not valid"


def install(app: FastAPI) -> None:
    """Answer every failure in the one error shape, whatever raised it."""

    @app.exception_handler(ExplorerError)
    async def explorer_error(request: Request, exc: ExplorerError) -> JSONResponse:
        return engine_error(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "invalid_request", validation_message(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = CODES.get(exc.status_code, "http_error")
        message = MESSAGES.get(exc.status_code, str(exc.detail))
        return error_response(exc.status_code, code, message, dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal_error", "the server failed to answer this request; its log says why")
