"""Reviewing over HTTP: a bulk review (counted first), a crystal's history, and reverting an entry of it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx

from explorer.providers.embeddings import Embedder
from explorer.records.wander import Crystal
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import wander as wander_store

from .conftest import error_of

SESSION = "00000000-0000-4000-8000-0000000000aa"


def test_bulk_review_history_and_revert(api: httpx.Client, module_corpus: Path, embedder: Embedder) -> None:
    runtime = open_runtime(replace(Settings(), db_path=module_corpus, embedding_model=embedder.name), embedder=embedder)
    crystals = [
        Crystal(f"Insight {i}", embedder.embed([f"insight {i}"])[0], confidence, 0.5, ["python"], session_id=SESSION)
        for i, confidence in enumerate((0.9, 0.6, 0.2))
    ]
    with runtime.db.transaction() as con:
        for crystal in crystals:
            wander_store.insert_crystal(con, crystal)
    where = {"session_id": SESSION, "min_confidence": 0.5}
    counted = api.post("/wander/crystals/review-bulk", json={**where, "decision": "approve", "dry_run": True})
    assert counted.status_code == 200, counted.text
    assert counted.json() == {
        "decision": "approve",
        "matched": 2,
        "reviewed": 2,
        "refused": 0,
        "dry_run": True,
        "batch_id": None,
    }
    done = api.post("/wander/crystals/review-bulk", json={**where, "decision": "approve", "reviewer": "a reader"})
    assert done.json()["reviewed"] == 2 and done.json()["batch_id"]
    (entry,) = api.get(f"/wander/crystals/{crystals[0].id}/history").json()
    assert entry["batch_id"] == done.json()["batch_id"] and entry["reviewer"] == "a reader"
    assert (entry["state_before"], entry["state_after"], entry["revertible"]) == ("pending", "approved", True)
    reverted = api.post(f"/wander/reviews/{entry['id']}/revert", json={"notes": "too quick"})
    assert reverted.status_code == 200, reverted.text
    assert reverted.json()["reverts"] == entry["id"] and reverted.json()["state_after"] == "pending"
    again = error_of(api.post(f"/wander/reviews/{entry['id']}/revert", json={}), 409)
    assert "changed since review" in again["message"] and '"force": true' in again["message"]
    error_of(api.post("/wander/reviews/no-such-review/revert", json={}), 404)
    error_of(api.get("/wander/crystals/no-such-crystal/history"), 404)
    error_of(api.post("/wander/crystals/review-bulk", json={"decision": "approve", "states": ["maybe"]}), 422)
    error_of(api.post("/wander/crystals/review-bulk", json={"decision": "approve", "max_confidence": 2}), 422)
