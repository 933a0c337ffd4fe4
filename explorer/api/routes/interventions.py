"""A person steering the walk (wander.md's "Manual Intervention") and judging what it found (crystal review)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from explorer.api.dependencies import RuntimeDep
from explorer.api.models import CrystallizeOut, FenceRequest, InjectOut, InjectRequest, ReviewRequest
from explorer.records.wander import CrystalJson, SessionJson
from explorer.wander import service

router = APIRouter(prefix="/wander", tags=["interventions"])


@router.post("/sessions/{session_id}/inject", response_model=InjectOut)
def inject(session_id: str, body: InjectRequest, runtime: RuntimeDep) -> Any:
    """Add a concept as a locus to guide the walk; with ``force_visit`` (the default) the next step goes there."""
    locus = service.inject(runtime, session_id, body.concept, force_visit=body.force_visit)
    return {"locus": locus.to_json(), "force_visit": body.force_visit}


@router.post("/sessions/{session_id}/fence", response_model=SessionJson)
def fence(session_id: str, body: FenceRequest, runtime: RuntimeDep) -> Any:
    """Widen the fence around a concept (include), or cut its surroundings out (exclude)."""
    return service.fence(runtime, session_id, body.concept, body.action).to_json()


@router.post("/sessions/{session_id}/crystallize", response_model=CrystallizeOut)
def crystallize(session_id: str, runtime: RuntimeDep) -> Any:
    """Try to form a crystal at the current locus, with the resonance that bears on it most (409 when the
    session has no resonance yet).
    """
    attempt = service.crystallize(runtime, session_id)
    return {"crystal": attempt.crystal.to_json() if attempt.crystal else None, "reason": attempt.reason}


@router.post("/crystals/{crystal_id}/review", response_model=CrystalJson)
def review(crystal_id: str, body: ReviewRequest, runtime: RuntimeDep) -> Any:
    """Approve, reject or archive a crystal. A decision stands: reviewing it again is a 409 unless ``force``."""
    crystal = service.review_crystal(
        runtime, crystal_id, body.decision, notes=body.notes, reviewer=body.reviewer, force=body.force
    )
    return crystal.to_json()
