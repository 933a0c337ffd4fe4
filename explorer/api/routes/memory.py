"""What a session holds (docs/wander.md#memory-inspection): its loci, path, resonances and crystals."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from explorer.api.dependencies import RuntimeDep
from explorer.records.wander import CrystalJson, CrystalStatus, LocusJson, ResonanceJson, ResonanceStatus, TraceJson
from explorer.wander import service
from explorer.wander.errors import NotFound

router = APIRouter(prefix="/wander/sessions/{session_id}", tags=["memory"])
Share = Annotated[float | None, Query(ge=0.0, le=1.0, allow_inf_nan=False)]


@router.get("/loci", response_model=list[LocusJson])
def loci(session_id: str, runtime: RuntimeDep, visited: bool | None = None, min_interestingness: Share = None) -> Any:
    """The session's loci; ``visited`` true: only those the walk stood on, false: only those it saw."""
    found = service.list_loci(runtime, session_id, visited=visited, min_interestingness=min_interestingness)
    return [locus.to_json() for locus in found]


@router.get("/loci/{locus_id}", response_model=LocusJson)
def locus(session_id: str, locus_id: str, runtime: RuntimeDep) -> Any:
    """One locus of the session, with its connections (adjacent_to, bridges_to, contradicts)."""
    session = service.get_session(runtime, session_id)
    found = service.get_locus(runtime, locus_id)
    if found.session_id != session.id:
        raise NotFound(f"session {session.id} has no locus {locus_id!r}")
    return found.to_json(connections=True)


@router.get("/trace", response_model=list[TraceJson])
def trace(session_id: str, runtime: RuntimeDep) -> Any:
    """The whole path, step by step: where each step went, why, and what it cost."""
    return [t.to_json() for t in service.list_trace(runtime, session_id)]


@router.get("/resonances", response_model=list[ResonanceJson])
def resonances(session_id: str, runtime: RuntimeDep, status: ResonanceStatus | None = None) -> Any:
    """The resonances of the session (``strength`` decayed to now)."""
    session = service.get_session(runtime, session_id)
    return [r.to_json() for r in service.list_resonances(runtime, session_id=session.id, status=status)]


@router.get("/crystals", response_model=list[CrystalJson])
def crystals(
    session_id: str, runtime: RuntimeDep, status: CrystalStatus | None = None, min_confidence: Share = None
) -> Any:
    """The crystals the session formed, with their review state."""
    session = service.get_session(runtime, session_id)
    found = service.list_crystals(runtime, status=status, min_confidence=min_confidence, session_id=session.id)
    return [c.to_json() for c in found]
