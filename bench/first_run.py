"""A first run as a new user meets it, timed in Chromium: ``explorer app`` on a database that does not exist yet,
until the app answers and until its first page is drawn; then ``explorer demo`` on a fresh database, until the same
two and until the demo it prepares in the background is ready.

    python -m bench.first_run [--keep DB] [--app-only]

Goals (what a first-time user waits before giving up): the empty app's first page in under 5 s; the demo's first
page in under 10 s and the demo ready in under 90 s, on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from explorer import demo, jobs
from explorer.runtime import open_runtime
from explorer.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
import harness  # noqa: E402  (the browser tests' Chromium and app)


def first_run(db: Path, command: str = "demo") -> dict[str, float]:
    """Seconds from starting ``explorer <command>`` on ``db`` to: the app answering, its first page drawn, and
    (for the demo) the demo ready.
    """
    with harness.chromium() as page:  # a person's browser is open before they start the app
        started = time.monotonic()
        with harness.explorer_app(db, command) as url:
            figures = {"app answers": time.monotonic() - started}
            page.goto(url)
            page.wait_for_selector("h1", timeout=120_000)
            figures["first page drawn"] = time.monotonic() - started
            if command == "demo":
                wait_for_the_demo(db)
                figures["demo ready"] = time.monotonic() - started
    return figures


def wait_for_the_demo(db: Path) -> None:
    """Until the demo's preparation has ended; an error if it did not succeed."""
    runtime = open_runtime(replace(Settings(), db_path=db))
    while True:
        found = jobs.list_jobs(runtime, kind=demo.JOB_KIND)
        if found and found[0].status.ended:
            if found[0].status != "succeeded":
                raise SystemExit(f"the demo's preparation {found[0].status}: {found[0].error}")
            return
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="Prepare the demo in this (fresh) database and keep it.")
    parser.add_argument("--app-only", action="store_true", help="Time `explorer app` on an empty database only.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        runs = {"explorer app, empty database": ("app", Path(folder) / "empty.duckdb")}
        if not args.app_only:
            runs["explorer demo, fresh database"] = ("demo", args.keep or Path(folder) / "demo.duckdb")
        for title, (command, db) in runs.items():
            print(title)
            for what, seconds in first_run(db, command).items():
                print(f"{what:>18}: {seconds:6.1f} s")


if __name__ == "__main__":
    main()
