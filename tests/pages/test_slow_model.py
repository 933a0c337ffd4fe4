"""While a wander step waits on a model (over real HTTP), the database is free: the command line lists sessions and
an app page reruns, instead of failing with "database busy".

The model's answer is held until the readers are done, so the step is thinking for exactly as long as they take,
however slowly a loaded machine starts them; a step that held the file while it waited would keep them out for
``EXPLORER_LOCK_WAIT`` and they would fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from explorer.testing.model_server import SERVED_MODEL, ModelServer, Reply
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

WAIT_S = 600.0  # a bound on waiting for a process at a load of 12 on two cores, not a measure of anything


def test_readers_are_not_blocked_while_a_step_thinks(app_db, app_runtime, open_app) -> None:
    session = wander.create_session(
        app_runtime, SessionConfig(seed_concept="unicode strings and text encodings", name="Thinking", random_seed=1)
    )
    page = open_app("sessions")  # warm: the first run imports the app
    answer = threading.Event()  # the step's first model call is answered once it is set; the rest at once
    with ModelServer(script=[Reply(release=answer)]) as server:
        # a model timeout beyond any wait here: a call timed out would be retried, and the retry answered at once
        env = {**os.environ, **server.env(), "EXPLORER_DB": str(app_db), "EXPLORER_TIMEOUT": str(2 * WAIT_S)}
        step = subprocess.Popen(
            [sys.executable, "-m", "explorer", "wander", "step", session.id, "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + WAIT_S
            while not server.requests and step.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.requests and step.poll() is None, step.stderr.read() if step.stderr else ""

            listed = [s.id for s in wander.list_sessions(app_runtime)]
            page.run(timeout=WAIT_S)
            command = subprocess.run(
                [sys.executable, "-m", "explorer", "wander", "list", "--json"],
                env=env,
                capture_output=True,
                text=True,
                timeout=WAIT_S,
            )
            thinking = step.poll() is None and len(server.requests) == 1  # still on its first, unanswered call
        finally:
            answer.set()  # whatever happened above: the step ends before the server closes
            out, err = step.communicate(timeout=WAIT_S)
    assert session.id in listed
    assert not page.exception and not page.error, [e.value for e in (*page.exception, *page.error)]
    assert command.returncode == 0 and session.id in command.stdout, command.stderr
    assert thinking
    assert step.returncode == 0, err
    assert json.loads(out)["step_number"] == 1
    assert wander.session_view(app_runtime, session.id).trace[0].model_used == SERVED_MODEL
