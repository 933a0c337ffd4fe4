"""``make test-fast`` leaves out what is slow to start, found by what each test asks for (tests/conftest.py): a
test that opens a browser or starts PostgreSQL is marked so without a mark of its own, and one that needs neither
is not. Were the classifier to miss them (a helper renamed), the fast tier would start browsers and servers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A test of each way to be marked, and one that must stay in the fast tier.
MARKED = {
    "browser": [
        "tests/e2e/test_first_run.py",  # end to end
        "tests/api/test_docs_page.py::test_the_docs_page_draws_every_route_with_nothing_from_outside",  # chromium
        "tests/pages/test_sessions_page.py::test_steps_and_crystals_of_another_process_appear_in_the_live_feed_"
        "without_a_reload",  # the browser fixture
    ],
    "postgres": [
        "tests/store/test_postgres_database.py",  # postgres_url and postgres_server
        "tests/jobs/test_server_faults.py",  # a server of its own
        "tests/store/test_nearest.py::test_the_nearest_loci_in_exact_cosine_order[postgres]",  # the postgres case
    ],
}
FAST = "tests/store/test_nearest.py::test_the_nearest_loci_in_exact_cosine_order[duckdb]"


def collected(marks: str, *tests: str) -> set[str]:
    """The ids of ``tests`` (files or ids) that ``-m marks`` selects."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "-m", marks, *tests],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return {line for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.parametrize("mark", sorted(MARKED))
def test_a_slow_test_is_marked_by_what_it_asks_for(mark: str) -> None:
    found = collected(mark, *MARKED[mark], FAST)
    for test in MARKED[mark]:
        assert any(line == test or line.startswith(f"{test}::") for line in found), (mark, test, found)
    assert FAST not in found  # a test that needs no server stays in the fast tier
