"""A walk keeps to its session's budget whatever usage the model reports: a server reporting less than it charged
must not let a walk overspend.
"""

from __future__ import annotations

from pathlib import Path

from explorer.testing.model_server import SERVED_MODEL, Reply
from explorer.wander import service

from .conftest import new_session


def test_a_walk_through_a_model_inflating_its_usage_keeps_to_one_cent(
    corpus_copy: Path, make_runtime, model_server
) -> None:
    server = model_server(script=lambda request: Reply(usage_factor=1000))
    runtime = make_runtime(
        db=corpus_copy, local_model=SERVED_MODEL, api_base=server.url, prices={SERVED_MODEL: (2.0, 2.0)}
    )
    session = new_session(runtime, cloud_budget_cents=1)
    service.run(runtime, session.id, 6)
    spent = service.get_session(runtime, session.id)
    assert server.requests and 0 < spent.cloud_spent_cents <= 1
