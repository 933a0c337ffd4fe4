"""Jobs: long runs carried out by the worker, followed and cancelled here."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from explorer import jobs
from explorer.api.dependencies import RuntimeDep
from explorer.records import PAGE_MAX
from explorer.records.jobs import JobJson

router = APIRouter(prefix="/jobs", tags=["jobs"])
JobFilter = Literal["active", "queued", "running", "succeeded", "failed", "cancelled"]


@router.get("", response_model=list[JobJson])
def list_jobs(
    runtime: RuntimeDep,
    status: Annotated[JobFilter | None, Query(description="One status, or active: queued and running.")] = None,
    limit: Annotated[int, Query(ge=0, le=PAGE_MAX)] = 50,
    offset: Annotated[int, Query(ge=0, le=PAGE_MAX)] = 0,
) -> Any:
    """Jobs, newest first, a page at a time."""
    return [job.to_json() for job in jobs.list_jobs(runtime, status=status, limit=limit, offset=offset)]


@router.get("/{job_id}", response_model=JobJson)
def get_job(job_id: str, runtime: RuntimeDep) -> Any:
    """A job as it stands: status, progress (done of total, the current item), and its result or error."""
    return jobs.get(runtime, job_id).to_json()


@router.delete("/{job_id}", response_model=JobJson)
def delete_job(job_id: str, runtime: RuntimeDep) -> Any:
    """Cancel a job (as ``POST /jobs/{id}/cancel``): the job is kept, cancelled, for anyone to read."""
    return jobs.cancel(runtime, job_id).to_json()


@router.post("/{job_id}/cancel", response_model=JobJson)
def cancel_job(job_id: str, runtime: RuntimeDep) -> Any:
    """Cancel a job: a queued one at once, a running one between two of its items (what it finished stands);
    409 when it has already ended.
    """
    return jobs.cancel(runtime, job_id).to_json()
