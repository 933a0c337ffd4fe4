"""``wander run`` against a model that trickles its answers ends, each call at its deadline (before each call had a
deadline for its whole answer, with ``EXPLORER_TIMEOUT=2 EXPLORER_RETRIES=0`` one step hung 600 s until killed).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from explorer.cli import app
from explorer.store.calls import recent_calls
from explorer.testing.model_server import SERVED_MODEL, Reply

TRICKLE = Reply("An answer, slowly. " * 200, trickle_s=0.05)  # about three minutes to send in full


def test_a_step_through_a_trickling_model_ends_with_its_calls_timed_out(
    corpus_copy: Path, make_runtime, model_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = model_server(script=lambda request: TRICKLE)
    monkeypatch.setenv("EXPLORER_DB", str(corpus_copy))
    monkeypatch.setenv("EXPLORER_TIMEOUT", "2")
    monkeypatch.setenv("EXPLORER_RETRIES", "0")
    runner = CliRunner()
    new = ["wander", "new", "--seed-concept", "memory management", "--checkpoint-every", "0", "--json"]
    session = json.loads(runner.invoke(app, new).stdout)["session_id"]
    done: list[Result] = []
    walk = threading.Thread(
        target=lambda: done.append(runner.invoke(app, ["wander", "run", session, "--steps", "1", "--json"])),
        daemon=True,
    )
    walk.start()
    walk.join(timeout=150)  # a step makes a call or two here; trickled in full, each would take three minutes
    assert done, "the step outlived the deadlines of its calls"
    # the step's one model call timed out, so nothing came of the run: it exits 1 saying so (cli/run_outcome.py)
    assert done[0].exit_code == 1, done[0].output
    assert "the run did none of what was asked" in done[0].stderr
    with make_runtime(db=corpus_copy).db.connect() as con:
        calls = [call for call in recent_calls(con, 10_000) if call.model == SERVED_MODEL]  # not the ingest's
    assert len(calls) == len(server.requests) > 0
    assert {(c.outcome, c.error) for c in calls} == {("timeout", f"{SERVED_MODEL} timed out after 2 s")}
