"""The night's runs (REM dreams, exploration, fusion, a whole cycle) and consolidation, now or as jobs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from explorer.api.dependencies import QUEUED, RuntimeDep, run_or_submit
from explorer.api.models import NOT_BLANK, ConsolidationReport, ConsolidationRun, DreamRun, KnowledgeOut
from explorer.consolidation import service as consolidation
from explorer.inputs import STORABLE
from explorer.records.dreaming import CycleJson, ExplorationReport, FusionReport, RemReport
from explorer.runtime import Runtime

router = APIRouter(tags=["dreaming and consolidation"])


def _dream(runtime: Runtime, kind: str, body: DreamRun | None) -> Any:
    body = body or DreamRun.model_validate({})
    return run_or_submit(runtime, kind, body.model_dump(exclude={"background"}, mode="json"), body.background)


@router.post("/dreams/rem", response_model=RemReport, responses=QUEUED)
def rem(runtime: RuntimeDep, body: DreamRun | None = None) -> Any:
    """The REM cycle: dream over three nodes at a time, one from the current year; dreams that add nothing are
    dropped and counted.
    """
    return _dream(runtime, "dream.rem", body)


@router.post("/dreams/explore", response_model=ExplorationReport, responses=QUEUED)
def explore(runtime: RuntimeDep, body: DreamRun | None = None) -> Any:
    """REM exploration: look for new links between distant, fading memories."""
    return _dream(runtime, "dream.explore", body)


@router.post("/dreams/fuse", response_model=FusionReport, responses=QUEUED)
def fuse(runtime: RuntimeDep, body: DreamRun | None = None) -> Any:
    """Memory fusion: merge clusters of fading, related memories (the sources are kept, superseded)."""
    return _dream(runtime, "dream.fuse", body)


@router.post("/dreams/cycle", response_model=CycleJson, responses=QUEUED)
def cycle(runtime: RuntimeDep, body: DreamRun | None = None) -> Any:
    """A whole night: exploration, then fusion, then the REM cycle, on one budget."""
    return _dream(runtime, "dream.cycle", body)


@router.post("/consolidation/runs", response_model=ConsolidationReport, responses=QUEUED)
def consolidate(runtime: RuntimeDep, body: ConsolidationRun | None = None) -> Any:
    """Consolidate a source's experiences into verified patterns, an abstraction ladder and their connections;
    ``trigger`` periodic or threshold runs only when due (else ``status`` is not_due and nothing is stored).
    """
    body = body or ConsolidationRun.model_validate({})
    return run_or_submit(
        runtime, "consolidate.run", body.model_dump(exclude={"background"}, mode="json"), body.background
    )


@router.get("/consolidation/knowledge", response_model=KnowledgeOut)
def knowledge(
    runtime: RuntimeDep,
    situation: Annotated[
        str,
        Query(min_length=1, max_length=2_000, pattern=NOT_BLANK, description="The situation to find know-how for."),
        STORABLE,
    ],
    limit: Annotated[int, Query(ge=1, le=100)] = 5,
) -> Any:
    """The newest run's patterns that apply to a situation, and the abstractions above them."""
    run_id, patterns, abstractions = consolidation.query_knowledge(runtime, situation, limit=limit)
    return consolidation.knowledge_json(run_id, patterns, abstractions)
