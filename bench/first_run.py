"""A first run as a new user meets it: ``explorer demo`` on a fresh database, timed until the app answers, until
its first page is drawn in Chromium (with the preparation's progress on it), and until the demo is ready.

    python -m bench.first_run [--keep DB]

Goals (issue 14): the first page in under 10 s, the demo ready in under 90 s on the project's 2-core machine.
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


def first_run(db: Path) -> dict[str, float]:
    """Seconds from starting ``explorer demo`` to: the app answering, its first page drawn, the demo ready."""
    started = time.monotonic()
    with harness.demo_app(db) as url:
        figures = {"app answers": time.monotonic() - started}
        with harness.chromium() as page:
            page.goto(url)
            page.wait_for_selector("h1", timeout=120_000)
            figures["first page drawn"] = time.monotonic() - started
        runtime = open_runtime(replace(Settings(), db_path=db))
        while True:
            found = jobs.list_jobs(runtime, kind=demo.JOB_KIND)
            if found and found[0].status.ended:
                if found[0].status != "succeeded":
                    raise SystemExit(f"the demo's preparation {found[0].status}: {found[0].error}")
                figures["demo ready"] = time.monotonic() - started
                return figures
            time.sleep(0.5)


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
