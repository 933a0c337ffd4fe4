"""What every route needs: the server's one runtime, and a way to run a long request now or as a job."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from explorer import jobs
from explorer.consolidation import service as consolidation
from explorer.records import unheard
from explorer.records.jobs import JobJson
from explorer.runtime import Runtime


def runtime_of(request: Request) -> Runtime:
    """The runtime :func:`~explorer.api.app.create_app` opened for this server process."""
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(runtime_of)]
# The other answer of an operation that may run as a job, for its OpenAPI document.
QUEUED: dict[int | str, dict[str, Any]] = {
    202: {"model": JobJson, "description": "Queued as a job (background); Location says where to follow it."}
}


def job_accepted(job: jobs.Job) -> JSONResponse:
    """202 with the job, and where to follow it (``Location``)."""
    return JSONResponse(job.to_json(), status_code=202, headers={"Location": f"/api/v1/jobs/{job.id}"})


def run_or_submit(runtime: Runtime, kind: str, params: dict[str, Any], background: bool) -> Any:
    """Run a job's kind in this request (its report), or queue it for the worker (202 and the job).

    Both ways go through the job's own runner, so a run does the same whichever way it was asked for.
    """
    if background:
        return job_accepted(jobs.submit(runtime, kind, params))
    spec = jobs.KINDS[kind]
    checked = spec.params.model_validate(params)  # the body was checked by this very model already
    if spec.check is not None:
        spec.check(runtime, checked)
    return spec.run(runtime, checked, unheard)


def consolidated(runtime: Runtime, status: str) -> dict[str, Any]:
    """The session-complete trigger, after a request that may have completed a session: ``{"consolidation": …}``
    when it ran (its failure reported there, not as the request's: the walk stands), nothing for a session still
    open.
    """
    brief = consolidation.after_session_brief(runtime, status)
    return {} if brief is None else {"consolidation": brief}
