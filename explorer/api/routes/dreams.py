"""Dreams, read back: every kind a night makes (REM dreams, discovered links, fused memories), newest first."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from explorer.api.dependencies import RuntimeDep
from explorer.api.errors import error_response
from explorer.api.models import DreamKindQuery, DreamOut
from explorer.dreaming import service as dreaming
from explorer.records import PAGE_MAX

router = APIRouter(prefix="/dreams", tags=["dreaming and consolidation"])


@router.get("", response_model=list[DreamOut])
def list_dreams(
    runtime: RuntimeDep,
    kind: DreamKindQuery = None,
    limit: Annotated[int, Query(ge=0, le=PAGE_MAX)] = 50,
    offset: Annotated[int, Query(ge=0, le=PAGE_MAX)] = 0,
) -> Any:
    """Dreams, newest first, a page at a time: each with its kind, title, text, confidence and the memories it
    came from (their ids, and their documents' titles where they are passages of one).
    """
    return [dream.to_json() for dream in dreaming.list_dreams(runtime, kind=kind, limit=limit, offset=offset)]


@router.get("/{dream_id}", response_model=DreamOut)
def get_dream(dream_id: str, runtime: RuntimeDep) -> Any:
    """One dream, whole, by its id or the first digits of it the pages show; 404 when it names no dream."""
    try:
        return dreaming.dream(runtime, dream_id).to_json()
    except dreaming.DreamNotFound as exc:
        return error_response(404, "not_found", f"{exc}; GET /api/v1/dreams lists the dreams")
