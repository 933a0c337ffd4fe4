"""A first run as a new user meets it: ``explorer demo`` on a fresh database, timed until the app answers, until
its first page is drawn in Chromium (with the preparation's progress on it), and until the demo is ready.

    python -m bench.first_run [--keep DB]

Goals (issue 14): the first page in under 10 s, the demo ready in under 90 s on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

from explorer import jobs
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.testing.ports import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
import harness  # noqa: E402  (the browser tests' Chromium)


def first_run(db: Path) -> dict[str, float]:
    """Seconds from starting ``explorer demo`` to: the app answering, its first page drawn, the demo ready."""
    port = free_port()
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "explorer", "demo", "--db", str(db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    figures: dict[str, float] = {}
    runtime = None
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.1)
        figures["app answers"] = time.monotonic() - started
        with harness.chromium() as page:
            page.goto(url)
            page.wait_for_selector("h1", timeout=120_000)
            figures["first page drawn"] = time.monotonic() - started
        runtime = open_runtime(replace(Settings(), db_path=db))
        while True:
            found = [job for job in jobs.list_jobs(runtime, limit=20) if job.kind == "demo.prepare"]
            if found and found[0].status.ended:
                if found[0].status != "succeeded":
                    raise SystemExit(f"the demo's preparation {found[0].status}: {found[0].error}")
                figures["demo ready"] = time.monotonic() - started
                return figures
            time.sleep(0.5)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        if runtime is not None:  # the worker outlives the command that started it
            for job in jobs.list_jobs(runtime, limit=20):
                if job.worker_pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(job.worker_pid, signal.SIGTERM)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="Prepare this (fresh) database and keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = args.keep or Path(folder) / "demo.duckdb"
        for what, seconds in first_run(db).items():
            print(f"{what:>18}: {seconds:6.1f} s")


if __name__ == "__main__":
    main()
