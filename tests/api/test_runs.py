"""Runs over HTTP: dreaming and consolidation in the request, long runs as jobs (202, Location), the jobs
endpoints (list, get, cancel), and the errors of each.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from explorer.consolidation import service as consolidation
from explorer.runtime import Runtime

from .conftest import error_of, new_session

EXPERIENCES = Path(__file__).resolve().parents[1] / "data" / "experiences_sample.jsonl"

JOB_WAIT_S = 180.0  # a bound on waiting for a job to end, not a measure of it


def wait_ended(api: httpx.Client, location: str) -> dict[str, Any]:
    """The job at ``location`` once it has ended."""
    deadline = time.monotonic() + JOB_WAIT_S
    while time.monotonic() < deadline:
        job = api.get(location.removeprefix("/api/v1")).json()
        if job["status"] in ("succeeded", "failed", "cancelled"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {location} did not end within {JOB_WAIT_S} s")


def test_a_dream_run_answers_its_report(api: httpx.Client) -> None:
    response = api.post("/dreams/rem", json={"dreams": 2, "seed": 1})
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["dreams_requested"] == 2 and report["seed"] == 1
    assert report["dreams_stored"] + report["dreams_dropped"] + report["failures"] == 2
    cycle = api.post("/dreams/cycle", json={"dreams": 1, "seed": 2}).json()
    assert cycle["rem"]["dreams_requested"] == 1 and {"exploration", "fusion", "model_calls"} <= set(cycle)
    refused = error_of(api.post("/dreams/rem", json={"dreams": 21}), 422)
    assert '"background": true' in refused["message"]
    error_of(api.post("/dreams/fuse", json={"budget_cents": -1}), 422)
    error_of(api.post("/dreams/explore", json={"as_of": "not a date"}), 422)


def test_knowledge_is_refused_before_a_consolidation_and_answered_after(
    api: httpx.Client, module_corpus: Path, make_runtime: Callable[..., Runtime]
) -> None:
    situation = {"situation": "a cell with a single candidate left"}
    before = error_of(api.get("/consolidation/knowledge", params=situation), 409)
    assert before["code"] == "refused" and "POST /api/v1/consolidation/runs" in before["message"]
    imported = consolidation.import_log(make_runtime(db=module_corpus), EXPERIENCES)  # no endpoint imports logs
    assert imported.experiences_added and not imported.errors
    run = api.post("/consolidation/runs", json={"source": "imported"})
    assert run.status_code == 200, run.text
    assert run.json()["run_id"] and run.json()["trigger"] == "manual" and run.json()["patterns"]
    known = api.get("/consolidation/knowledge", params={**situation, "limit": 3})
    assert known.status_code == 200, known.text
    assert known.json()["run_id"] == run.json()["run_id"] and 0 < len(known.json()["patterns"]) <= 3
    error_of(api.get("/consolidation/knowledge", params={"situation": ""}), 422)
    error_of(api.post("/consolidation/runs", json={"source": "dreams", "trigger": "now"}), 422)


@pytest.mark.duckdb_only("a worker is started on demand for a file; a server's waits for explorer worker")
def test_a_long_walk_runs_as_a_job_followed_at_its_location(api: httpx.Client) -> None:
    session_id = new_session(api)["id"]
    response = api.post(f"/wander/sessions/{session_id}/wander", json={"n_steps": 21, "background": True})
    assert response.status_code == 202, response.text
    job = response.json()
    assert response.headers["location"] == f"/api/v1/jobs/{job['job_id']}"
    assert job["kind"] == "wander.run" and job["params"] == {"session_id": session_id, "steps": 21}
    assert job["status"] in ("queued", "running")
    ended = wait_ended(api, response.headers["location"])
    assert ended["status"] == "succeeded", ended
    assert ended["result"]["steps_completed"] == 21 and ended["progress"]["done"] == 21
    assert api.get(f"/wander/sessions/{session_id}").json()["step_count"] == 21
    assert job["job_id"] in [j["job_id"] for j in api.get("/jobs", params={"status": "succeeded"}).json()]
    error_of(api.delete(f"/jobs/{job['job_id']}"), 409)  # it has ended: nothing to cancel
    error_of(api.post(f"/jobs/{job['job_id']}/cancel"), 409)


def test_a_job_is_cancelled_and_stays_to_read(api: httpx.Client) -> None:
    session_id = new_session(api, max_steps=1000)["id"]
    queued = api.post(f"/wander/sessions/{session_id}/wander", json={"n_steps": 1000, "background": True})
    assert queued.status_code == 202, queued.text
    cancelled = api.delete(queued.headers["location"].removeprefix("/api/v1"))
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["cancel_requested"] or cancelled.json()["status"] == "cancelled"
    ended = wait_ended(api, queued.headers["location"])
    assert ended["status"] == "cancelled", ended
    assert api.get(f"/wander/sessions/{session_id}").json()["step_count"] < 1000
    dream = api.post("/dreams/rem", json={"dreams": 500, "background": True})
    assert dream.status_code == 202 and dream.json()["kind"] == "dream.rem"
    assert api.post(f"/jobs/{dream.json()['job_id']}/cancel").status_code == 200
    assert wait_ended(api, dream.headers["location"])["status"] == "cancelled"


def test_jobs_are_listed_newest_first_and_unknown_ones_are_404(api: httpx.Client) -> None:
    session_id = new_session(api, max_steps=1000)["id"]
    walk = api.post(f"/wander/sessions/{session_id}/wander", json={"n_steps": 1000, "background": True}).json()
    dream = api.post("/dreams/rem", json={"dreams": 500, "background": True}).json()  # the newest job
    try:
        assert [job["job_id"] for job in api.get("/jobs", params={"limit": 1}).json()] == [dream["job_id"]]
        page_two = api.get("/jobs", params={"limit": 1, "offset": 1}).json()
        assert [job["job_id"] for job in page_two] == [walk["job_id"]]
        active = api.get("/jobs", params={"status": "active"}).json()
        assert {walk["job_id"], dream["job_id"]} <= {job["job_id"] for job in active}  # minutes of work each
        assert {job["status"] for job in active} <= {"queued", "running"}
    finally:
        for job in (walk, dream):
            api.delete(f"/jobs/{job['job_id']}")
            wait_ended(api, f"/api/v1/jobs/{job['job_id']}")
    error_of(api.get("/jobs", params={"status": "sleeping"}), 422)
    for response in (api.get("/jobs/no-such-job"), api.delete("/jobs/no-such-job"), api.post("/jobs/x/cancel")):
        assert error_of(response, 404)["code"] == "not_found"
    session_id = new_session(api)["id"]
    api.post(f"/wander/sessions/{session_id}/pause")
    refused = api.post(f"/wander/sessions/{session_id}/wander", json={"n_steps": 30, "background": True})
    assert error_of(refused, 409)["code"] == "wrong_state"  # the job is refused when asked, not later
    error_of(api.post(f"/wander/sessions/{session_id}/wander", json={"n_steps": 20_000, "background": True}), 422)
