"""A session's budget holds however many processes step it at once, on the file and on PostgreSQL: a step takes
the session's lease before it asks any model, so a second stepper is refused having spent nothing, and every
call that was made is charged to the session.

Six runtimes (each as another process would be: its own database object and gateway) step one priced session
at once through a real HTTP model server that answers slowly, so their steps overlap. Before the lease, six REST
clients made 4.8 times the session's budget in priced calls, and the session reported a sixth of what they cost.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from explorer.prompts.wander import DWELLING
from explorer.runtime import Runtime
from explorer.store.calls import recent_calls
from explorer.testing.model_server import SERVED_MODEL
from explorer.wander import service
from explorer.wander.errors import SessionStateError

from .conftest import new_session

PRICES = {SERVED_MODEL: (1000.0, 2000.0)}  # dollars per million tokens: a dwelling is a measurable part of a cent
STEPPERS = 6
TRIES = 4  # steps each stepper asks for


@pytest.fixture(params=["file", "postgres"])
def shared_corpus(request: pytest.FixtureRequest, corpus_template: Path, tmp_path: Path) -> Iterator[Path | str]:
    """The small corpus, on the file or on a PostgreSQL database of the test's own."""
    if request.param == "file":
        target = tmp_path / "corpus.duckdb"
        shutil.copy(corpus_template, target)
        yield target
        return
    from explorer.store.copying import copy_database

    url: str = request.getfixturevalue("new_postgres_database")()
    copy_database(corpus_template, url)
    yield url


def charged(runtimes: list[Runtime], session_id: str) -> float:
    """What the call log says the session's calls cost, over every runtime's calls."""
    for runtime in runtimes:
        runtime.flush()
    with runtimes[0].db.connect() as con:
        return sum(call.cost_cents for call in recent_calls(con, 10_000) if call.session_id == session_id)


def test_concurrent_steppers_spend_no_more_than_the_session_budget(
    shared_corpus: Path | str, make_runtime: Any, model_server: Any
) -> None:
    server = model_server(latency_s=0.3)  # steps overlap: each dwells for at least this long
    runtimes = [
        make_runtime(db=shared_corpus, local_model=SERVED_MODEL, api_base=server.url, prices=PRICES)
        for _ in range(STEPPERS)
    ]
    try:
        # room for a few priced dwellings (a dwelling's answer alone may cost this much), then the walk goes on
        # offline: concurrent steppers each reserving against what they read would have spent it several times
        budget = round(DWELLING.max_tokens * PRICES[SERVED_MODEL][1] * 100 / 1e6 * 4, 6)
        session = new_session(runtimes[0], cloud_budget_cents=budget)

        def step_all(runtime: Runtime) -> list[str]:
            outcomes = []
            for _ in range(TRIES):
                try:
                    outcomes.append(f"step {service.step(runtime, session.id).step_number}")
                except SessionStateError as refused:
                    outcomes.append(str(refused))
            return outcomes

        with ThreadPoolExecutor(STEPPERS) as pool:
            outcomes = [o for stepper in pool.map(step_all, runtimes) for o in stepper]
        after = service.get_session(runtimes[0], session.id)
        cost = charged(runtimes, session.id)
        assert 0 < cost <= budget + 1e-9, f"{cost:.4f} ¢ spent of a {budget:.4f} ¢ budget"
        assert after.cloud_spent_cents == pytest.approx(cost), "calls were made that the session was not charged"
        assert after.step_count == sum(o.startswith("step ") for o in outcomes)
        refused = [o for o in outcomes if "is taking a step in another process" in o]
        assert refused, "no step overlapped another: the test measured nothing"
    finally:
        for runtime in runtimes:
            runtime.flush()
            if hasattr(runtime.db, "url"):  # a server's pool, before the test's database is dropped
                runtime.db.close()
