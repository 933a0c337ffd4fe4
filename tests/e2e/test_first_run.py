"""A first run: ``explorer demo`` on a fresh database opens the app at once and prepares the demo behind it, as a
background job the app shows live. How long it all takes is measured by ``python -m bench.first_run``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import harness

from explorer import demo, jobs
from explorer.runtime import open_runtime
from explorer.settings import Settings


def test_the_app_opens_at_once_while_the_demo_is_prepared_behind_it(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    with harness.explorer_app(db, "demo", env=harness.TEST_ENV) as url:
        runtime = open_runtime(replace(Settings(), db_path=db))
        (job,) = jobs.list_jobs(runtime, kind=demo.JOB_KIND)
        assert not job.status.ended
        with harness.chromium() as page:
            harness.open_page(page, url, "corpus")
            assert page.get_by_text("The demo is being prepared").count() == 1
            page.get_by_text("demo:", exact=False).first.wait_for(timeout=60_000)  # the job's live progress
