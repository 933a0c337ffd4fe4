"""A first run: ``explorer demo`` on a fresh database opens the app at once and prepares the demo behind it, as a
background job the app shows live. How long it all takes is measured by ``python -m bench.first_run``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import harness

from explorer import jobs
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.testing.ports import free_port


def test_the_app_opens_at_once_while_the_demo_is_prepared_behind_it(tmp_path: Path) -> None:
    db, port = tmp_path / "demo.duckdb", free_port()
    env = dict(os.environ, **harness.TEST_ENV, EXPLORER_DEMO_DB=str(db), PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "explorer", "demo", "--port", str(port)]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    runtime = None
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the app did not answer"
                time.sleep(0.3)
        runtime = open_runtime(replace(Settings(), db_path=db))
        (job,) = [job for job in jobs.list_jobs(runtime) if job.kind == "demo.prepare"]
        assert not job.status.ended
        with harness.chromium() as page:
            harness.open_page(page, url, "corpus")
            assert page.get_by_text("The demo is being prepared").count() == 1
            page.get_by_text("demo:", exact=False).first.wait_for(timeout=60_000)  # the job's live progress
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        if runtime is not None:  # the worker outlives the command that started it: stop it too
            for job in jobs.list_jobs(runtime):
                if job.worker_pid is not None and not job.status.ended:
                    os.kill(job.worker_pid, signal.SIGTERM)
