"""Across sessions (docs/wander.md#cross-session-queries): every crystal and resonance, and search by meaning."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from explorer.api.dependencies import RuntimeDep
from explorer.api.models import ProjectId, SearchRequest
from explorer.records.wander import CrystalJson, CrystalStatus, ResonanceJson, ResonanceStatus, SearchHitJson
from explorer.wander import service

router = APIRouter(prefix="/wander", tags=["cross-session"])


@router.get("/crystals", response_model=list[CrystalJson])
def crystals(
    runtime: RuntimeDep,
    status: CrystalStatus | None = None,
    min_confidence: Annotated[float | None, Query(ge=0.0, le=1.0, allow_inf_nan=False)] = None,
    project_id: ProjectId = None,
) -> Any:
    """Crystals of every session, with their review state, filtered by status and confidence."""
    return [c.to_json() for c in service.list_crystals(runtime, status=status, min_confidence=min_confidence)]


@router.get("/resonances", response_model=list[ResonanceJson])
def resonances(runtime: RuntimeDep, status: ResonanceStatus | None = None, project_id: ProjectId = None) -> Any:
    """Resonances of every session, and those that recur across sessions (``session_id`` null)."""
    return [r.to_json() for r in service.list_resonances(runtime, status=status)]


@router.post("/search", response_model=list[SearchHitJson])
def search(body: SearchRequest, runtime: RuntimeDep) -> Any:
    """Loci, crystals and resonances nearest in meaning to the query, best first."""
    hits = service.search(runtime, body.query, types=tuple(dict.fromkeys(body.types)), limit=body.limit)
    return [hit.to_json() for hit in hits]
