"""While a wander step waits on a slow model (8 s an answer, over real HTTP), the database is free: the
command line lists sessions and an app page reruns at once, instead of failing with "database busy".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from explorer.testing.model_server import SERVED_MODEL, ModelServer, Reply
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

LATENCY_S = 8.0  # long enough for a command to start and list on a loaded 2-core machine


def test_readers_are_not_blocked_while_a_step_thinks(app_db, app_runtime, open_app) -> None:
    session = wander.create_session(
        app_runtime, SessionConfig(seed_concept="unicode strings and text encodings", name="Thinking", random_seed=1)
    )
    page = open_app("sessions")  # warm: the first run imports the app
    # the step's first call takes a slow model's time; the rest answer at once, to keep the test short
    with ModelServer(script=[Reply(delay_s=LATENCY_S)]) as server:
        env = {**os.environ, **server.env(), "EXPLORER_DB": str(app_db), "EXPLORER_TIMEOUT": "30"}
        step = subprocess.Popen(
            [sys.executable, "-m", "explorer", "wander", "step", session.id, "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not server.requests and step.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        asked = server.requests[0].received_at if server.requests else None
        assert asked is not None and step.poll() is None, step.stderr.read() if step.stderr else ""

        started = time.perf_counter()
        listed = [s.id for s in wander.list_sessions(app_runtime)]
        listing_s = time.perf_counter() - started
        started = time.perf_counter()
        page.run()
        page_s = time.perf_counter() - started
        command = subprocess.run(
            [sys.executable, "-m", "explorer", "wander", "list", "--json"], env=env, capture_output=True, text=True
        )
        still_thinking = time.time() < asked + LATENCY_S

        out, err = step.communicate(timeout=120)
    assert session.id in listed and listing_s < 1.0
    assert not page.exception and page_s < 1.0
    assert command.returncode == 0 and session.id in command.stdout, command.stderr
    assert still_thinking  # all of it while the model's first answer was still on its way
    assert step.returncode == 0, err
    assert json.loads(out)["step_number"] == 1
    assert wander.session_view(app_runtime, session.id).trace[0].model_used == SERVED_MODEL
