"""The FastAPI application: one runtime per server process, the routers, the error shape and the token check.

Why one runtime: the runtime holds the database handle, the embedder and the model gateway with their caches;
the engine's calls are thread-safe with each other (each unit of work opens the file on its own thread, see
:mod:`explorer.store.database`), so FastAPI's threadpool runs the routes, which are plain functions, side by side.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.security import HTTPBearer
from fastapi_swagger import patch_fastapi

from explorer.api import errors
from explorer.api.auth import BearerToken, Tokens
from explorer.api.body_limit import BodyLimit
from explorer.api.models import MAX_BODY_BYTES, PER_REQUEST
from explorer.api.routes import dreams, interventions, jobs, memory, queries, runs, sessions
from explorer.runtime import open_runtime
from explorer.settings import Settings

PREFIX = "/api/v1"
DESCRIPTION = f"""\
Dream Explorer's engine over HTTP: wander sessions (create, step, walk, steer, inspect), crystals and their review,
dreaming and consolidation runs, and the jobs that carry long runs out.

* **Errors** are `{{"error": {{"code", "message"}}}}`: 404 an unknown id, 409 a request the state of the session, job
  or crystal refuses (a spent budget pauses a walk, so it shows as 409 too), 422 a bad body or parameter, 503 a
  busy database, 500 a bug; 400 a body that cannot be read as text, 413 a body over {MAX_BODY_BYTES} bytes
  (refused unread).
* **Long runs**: `POST …/wander` runs at most {PER_REQUEST} steps per request; with `"background": true` it (and
  every dream or consolidation run) is queued as a job and answered 202, `Location: /api/v1/jobs/{{id}}`.
* **Auth**: bound to a loopback address the server needs no token; otherwise it is started with one and every
  request needs `Authorization: Bearer TOKEN`. This document is the served one's: its operations require the
  bearer token when the server has one, and make it optional (`{{}}` among their security requirements) when not.
* **Named tokens** (`EXPLORER_TOKENS="ana=…,ben=…"`, beside or instead of the single token): a review, bulk review
  or revert made with one is logged under its name; a body whose `reviewer` names anyone else is refused (403).
  With the single token, or none, the body's `reviewer` is who the log names.
"""

BEARER = HTTPBearer(auto_error=False, description="The token `explorer serve` was given, or a named one.")


def create_app(settings: Settings, token: str | None = None) -> FastAPI:
    """The API over the database and models ``settings`` name; with ``token`` or named tokens (``settings.tokens``),
    every request must carry one of them (the OpenAPI document says so; without any, it says a token is optional).
    """
    tokens = Tokens(token or None, settings.tokens)
    runtime = open_runtime(settings)
    runtime.db.schema_version()  # migrate now, once, not in the first requests racing each other

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        runtime.flush()  # the call log and new embeddings still buffered
        runtime.db.checkpoint()

    app = FastAPI(
        title="Dream Explorer",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        # the docs page and its scripts come from the installed fastapi-swagger (patched in below), not a CDN, so
        # /docs works with no network; ReDoc has no such package, so there is one docs page
        docs_url=None,
        swagger_ui_oauth2_redirect_url=None,
        redoc_url=None,
        responses=errors.ERROR_RESPONSES,
        # declares the bearer scheme in the OpenAPI document; BearerToken enforces it, for every path
        dependencies=[Depends(BEARER)],
    )
    app.state.runtime = runtime
    patch_fastapi(app, docs_url="/docs", redirect_from_root_to_docs=False, title="Dream Explorer API")
    errors.install(app)
    api = APIRouter(prefix=PREFIX)
    for area in (sessions, memory, queries, interventions, runs, dreams, jobs):
        api.include_router(area.router)
    app.include_router(api)
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    if not tokens:
        document_token_optional(app)
    else:  # added last, so outermost: a request without a token is refused before its body is looked at
        app.add_middleware(BearerToken, tokens=tokens)
    return app


def document_token_optional(app: FastAPI) -> None:
    """Make ``app``'s OpenAPI document offer every operation without the bearer token too (an empty security
    requirement beside it), as a server without a token asks for none.
    """
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        fresh = app.openapi_schema is None
        document = generate()
        if fresh:  # FastAPI keeps the document once made: mark it only then
            for operations in document["paths"].values():
                for operation in operations.values():
                    operation["security"] = [{}, *operation.get("security", [])]
        return document

    app.openapi = openapi  # type: ignore[method-assign]
