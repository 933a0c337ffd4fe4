"""A night of dreaming keeps to its budget whatever the model answers: a model reporting no usage, or more than it
was allowed, must not make a night overspend.
"""

from __future__ import annotations

import json
from pathlib import Path

from explorer.testing.model_server import SERVED_MODEL, Reply

from .test_dream_cli import dated_db, explorer


def test_rem_through_a_model_answering_two_megabytes_keeps_to_one_cent(
    make_runtime, model_server, tmp_path: Path
) -> None:
    db = dated_db(make_runtime, tmp_path / "dream.duckdb")
    server = model_server(script=lambda request: Reply("x" * 2_000_000))
    env = {"EXPLORER_DB": str(db), "EXPLORER_PRICES": json.dumps({SERVED_MODEL: [2.0, 2.0]}), "EXPLORER_RETRIES": "2"}
    done = explorer("rem", "--dreams", "10", "--budget-cents", "1", "--seed", "1", "--json", env=env)
    report = json.loads(done.stdout)
    assert 0 < report["spent_cents"] <= 1
    assert len(server.requests) == report["model_calls"] > 0  # each refused answer was asked for once
    assert report["errors"] and all("over the" in error and "not asked again" in error for error in report["errors"])
