"""The FastAPI application: one runtime per server process, the routers, the error shape and the token check.

Why one runtime: the runtime holds the database handle, the embedder and the model gateway with their caches;
the engine's calls are thread-safe with each other (each unit of work opens the file on its own thread, see
:mod:`explorer.store.database`), so FastAPI's threadpool runs the routes, which are plain functions, side by side.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, Depends, FastAPI
from fastapi.security import HTTPBearer

from explorer.api import errors
from explorer.api.auth import BearerToken
from explorer.api.routes import interventions, jobs, memory, queries, runs, sessions
from explorer.runtime import open_runtime
from explorer.settings import Settings

PREFIX = "/api/v1"
DESCRIPTION = """\
Dream Explorer's engine over HTTP: wander sessions (create, step, walk, steer, inspect), crystals and their review,
dreaming and consolidation runs, and the jobs that carry long runs out.

* **Errors** are `{"error": {"code", "message"}}`: 404 an unknown id, 409 a request the state of the session, job
  or crystal refuses (a spent budget pauses a walk, so it shows as 409 too), 422 a bad body or parameter, 503 a
  busy database, 500 a bug.
* **Long runs**: `POST …/wander` runs at most 20 steps per request; with `"background": true` it (and every dream
  or consolidation run) is queued as a job and answered 202, `Location: /api/v1/jobs/{id}`.
* **Auth**: bound to a loopback address the server needs no token; otherwise every request needs
  `Authorization: Bearer TOKEN`.
"""


def create_app(settings: Settings, token: str | None = None) -> FastAPI:
    """The API over the database and models ``settings`` name; with ``token``, every request must carry it."""
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
        responses=errors.ERROR_RESPONSES,
        # declares the bearer scheme in the OpenAPI document; BearerToken enforces it, for every path
        dependencies=[Depends(HTTPBearer(auto_error=False, description="The token `explorer serve` was given."))],
    )
    app.state.runtime = runtime
    errors.install(app)
    api = APIRouter(prefix=PREFIX)
    for area in (sessions, memory, queries, interventions, runs, jobs):
        api.include_router(area.router)
    app.include_router(api)
    if token:
        app.add_middleware(BearerToken, token=token)
    return app
