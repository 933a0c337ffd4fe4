"""A stage of the step (explorer/wander/arrival.py) that decides on its own: what here remembers of the
candidates it led to. The whole chain is walked by the service tests.
"""

from __future__ import annotations

import numpy as np

from explorer.records.wander import Adjacency, Locus, Strategy
from explorer.wander.arrival import CONNECTIONS_KEPT, _links_from


def candidate(strategy: Strategy, note: str | None = None) -> Adjacency:
    return Adjacency(
        concept=strategy,
        embedding=np.zeros(4, np.float32),
        strategy=strategy,
        source_type="ADJACENT",
        similarity=0.25,
        score=0.61234,
        note=note,
    )


def test_here_links_to_each_candidate_by_kind_and_keeps_the_newest() -> None:
    old = [{"locus_id": f"old{i}", "distance": 0.5, "strength": 0.5} for i in range(CONNECTIONS_KEPT)]
    here = Locus(session_id="s", concept="here", embedding=None, source_type="SEED", adjacent_to=old)
    linked = [
        (candidate("cross_domain", "both reclaim"), "bridge"),
        (candidate("tension", "now or later"), "tension"),
        (candidate("distance_band"), "band"),
        (candidate("seed"), here.id),  # a step back to where it stands links nothing
    ]
    links = _links_from(here, linked)

    assert [link["locus_id"] for link in links["adjacent_to"]] == [
        *(f"old{i}" for i in range(3, CONNECTIONS_KEPT)),
        "bridge",
        "tension",
        "band",
    ]
    assert links["adjacent_to"][-1] == {"locus_id": "band", "distance": 0.75, "strength": 0.6123}
    assert links["bridges_to"] == [{"locus_id": "bridge", "bridge_type": "both reclaim", "strength": 0.25}]
    assert links["contradicts"] == [{"locus_id": "tension", "tension_description": "now or later"}]
    assert len(here.adjacent_to) == CONNECTIONS_KEPT  # here itself is left as it was read
