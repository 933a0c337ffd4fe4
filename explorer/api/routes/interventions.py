"""A person steering the walk (docs/wander.md#manual-intervention) and judging what it found (crystal review:
one, in bulk, a crystal's history and reverting any entry of it).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from explorer.api.auth import reviewer_of
from explorer.api.dependencies import RuntimeDep
from explorer.api.models import (
    BulkReviewRequest,
    CrystallizeOut,
    ErrorBody,
    FenceRequest,
    InjectOut,
    InjectRequest,
    RevertRequest,
    ReviewRequest,
)
from explorer.records.wander import BulkReviewJson, CrystalJson, ReviewFilter, ReviewJson, SessionJson
from explorer.wander import review as reviewing
from explorer.wander import service

router = APIRouter(prefix="/wander", tags=["interventions"])
# The answer of a review that names someone other than the holder of the named token it was made with.
NOT_THE_HOLDER: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "`reviewer` names someone other than the named token's holder."}
}


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


@router.post("/crystals/{crystal_id}/review", response_model=CrystalJson, responses=NOT_THE_HOLDER)
def review(crystal_id: str, body: ReviewRequest, request: Request, runtime: RuntimeDep) -> Any:
    """Approve, reject or archive a crystal. A decision stands: reviewing it again is a 409 unless ``force``.
    Made with a named token, it is logged under the token's name.
    """
    crystal = reviewing.review_crystal(
        runtime,
        crystal_id,
        body.decision,
        notes=body.notes,
        reviewer=reviewer_of(request, body.reviewer),
        force=body.force,
    )
    return crystal.to_json()


@router.post("/crystals/review-bulk", response_model=BulkReviewJson, responses=NOT_THE_HOLDER)
def review_bulk(body: BulkReviewRequest, request: Request, runtime: RuntimeDep) -> Any:
    """One decision on every crystal a filter takes, each logged as if reviewed alone; ``dry_run`` only counts.
    Made with a named token, each is logged under the token's name.
    """
    where = ReviewFilter(body.session_id, body.min_confidence, body.max_confidence, frozenset(body.states))
    reviewer = reviewer_of(request, body.reviewer)
    report = reviewing.bulk_review(
        runtime, where, body.decision, notes=body.notes, reviewer=reviewer, force=body.force, dry_run=body.dry_run
    )
    return report.to_json()


@router.get("/crystals/{crystal_id}/history", response_model=list[ReviewJson])
def history(crystal_id: str, runtime: RuntimeDep) -> Any:
    """A crystal's reviews and reverts, oldest first: who, when, the decision, the notes, the states on each side."""
    return [entry.to_json() for entry in reviewing.review_history(runtime, crystal_id)]


@router.post("/reviews/{review_id}/revert", response_model=ReviewJson, responses=NOT_THE_HOLDER)
def revert(review_id: str, body: RevertRequest, request: Request, runtime: RuntimeDep) -> Any:
    """Put the crystal back exactly as it was before a review (409 if it was reviewed again since, unless
    ``force``); the revert is logged (under the token's name, when made with a named one), and can itself be
    reverted.
    """
    reviewer = reviewer_of(request, body.reviewer)
    return reviewing.revert_review(runtime, review_id, reviewer=reviewer, notes=body.notes, force=body.force).to_json()
