"""Sessions and wander control (docs/wander.md#session-management and #wander-control)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from explorer.api.dependencies import QUEUED, RuntimeDep, consolidated, run_or_submit
from explorer.api.models import (
    PER_REQUEST,
    PauseRequest,
    ProjectId,
    SessionAfter,
    SessionCreate,
    SessionUpdate,
    StepOut,
    WanderOut,
    WanderRequest,
)
from explorer.records import PAGE_MAX
from explorer.records.wander import SessionJson, SessionStatus
from explorer.wander import service
from explorer.wander.config import SessionConfig

router = APIRouter(prefix="/wander/sessions", tags=["sessions"])


@router.post("", status_code=201, response_model=SessionJson)
def create_session(body: SessionCreate, runtime: RuntimeDep, response: Response) -> Any:
    """Start a session at a seed concept; it stands at its seed locus, active."""
    given = body.model_dump(exclude_none=True)  # the fields of a SessionConfig; those left out take its defaults
    for name in ("allowed_domains", "forbidden_domains"):
        if name in given:
            given[name] = tuple(given[name])
    given.setdefault("cloud_budget_cents", runtime.settings.cloud_budget_cents)
    session = service.create_session(runtime, SessionConfig(**given))
    response.headers["Location"] = f"/api/v1/wander/sessions/{session.id}"
    return session.to_json()


@router.get("", response_model=list[SessionJson])
def list_sessions(
    runtime: RuntimeDep,
    status: SessionStatus | None = None,
    limit: Annotated[int, Query(ge=0, le=PAGE_MAX)] = 50,
    offset: Annotated[int, Query(ge=0, le=PAGE_MAX)] = 0,
    project_id: ProjectId = None,
) -> Any:
    """Sessions, newest first, a page at a time (``limit`` and ``offset``), optionally only those in one status."""
    return [s.to_json() for s in service.list_sessions(runtime, status=status, limit=limit, offset=offset)]


@router.get("/{session_id}", response_model=SessionJson)
def get_session(session_id: str, runtime: RuntimeDep) -> Any:
    """A session: its configuration, budget, counters and status."""
    return service.get_session(runtime, session_id).to_json()


@router.patch("/{session_id}", response_model=SessionAfter)
def update_session(session_id: str, body: SessionUpdate, runtime: RuntimeDep) -> Any:
    """Change a session's name, constraints, numbers or status; a status moves it as pause, resume and stop do."""
    session = service.update_session(runtime, session_id, **body.model_dump(exclude_unset=True))
    return {**session.to_json(), **consolidated(runtime, session.status)}


@router.delete("/{session_id}", status_code=204)
def delete_session(session_id: str, runtime: RuntimeDep) -> Response:
    """Delete a session and all it owns (its crystals stay, without the session)."""
    service.delete_session(runtime, session_id)
    return Response(status_code=204)


@router.post("/{session_id}/step", response_model=StepOut)
def step(session_id: str, runtime: RuntimeDep) -> Any:
    """Take one step of an active session: where it went, what dwelling there left, what resonated."""
    result = service.step(runtime, session_id)
    runtime.flush()
    return {**result.to_json(), **consolidated(runtime, result.status)}


@router.post(
    "/{session_id}/wander",
    response_model=WanderOut,
    responses=QUEUED,
    description="Take up to `n_steps` steps; the walk stops early at a checkpoint, a tripped circuit breaker or "
    f"its max steps, and says why. One request runs at most {PER_REQUEST} steps (more is a 422); "
    'with `"background": true` any number run as a job: 202 with the job, and `Location: /api/v1/jobs/{id}`.',
)
def wander(session_id: str, runtime: RuntimeDep, body: WanderRequest | None = None) -> Any:
    """A walk of several steps, bounded per request so no request holds its connection for long."""
    body = body or WanderRequest.model_validate({})
    return run_or_submit(
        runtime, "wander.run", {"session_id": session_id, "steps": body.n_steps}, background=body.background
    )


@router.post("/{session_id}/pause", response_model=SessionJson)
def pause(session_id: str, runtime: RuntimeDep, body: PauseRequest | None = None) -> Any:
    """Pause an active session, to look at its trace and crystals; resume takes it on from there."""
    return service.pause(runtime, session_id, reason=body.reason if body else None).to_json()


@router.post("/{session_id}/resume", response_model=SessionJson)
def resume(session_id: str, runtime: RuntimeDep) -> Any:
    """Resume a paused session (after a checkpoint, a tripped circuit breaker or a pause)."""
    return service.resume(runtime, session_id).to_json()


@router.post("/{session_id}/stop", response_model=SessionAfter)
def stop(session_id: str, runtime: RuntimeDep) -> Any:
    """Stop a session (it is completed: no more steps), then consolidate the walks' experiences."""
    session = service.stop(runtime, session_id)
    return {**session.to_json(), **consolidated(runtime, session.status)}
