"""The consolidation views: the newest run as the page shows it (report, ladder level by level, patterns with
their examples) and its pattern clusters placed on the map, read without writing a thing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer import projection, views
from explorer.consolidation.service import import_log, run_consolidation
from explorer.runtime import Runtime
from explorer.store import projection as projection_store

SAMPLE_LOG = Path(__file__).resolve().parent / "data" / "experiences_sample.jsonl"


@pytest.fixture
def consolidated(corpus_runtime: Runtime) -> tuple[Runtime, dict]:
    """The small corpus on a fitted map, the sample log imported and consolidated offline; the run's report."""
    projection.update_projection(corpus_runtime)
    import_log(corpus_runtime, SAMPLE_LOG)
    return corpus_runtime, run_consolidation(corpus_runtime, "imported").to_json()


def test_nothing_consolidated_yet_is_no_view_and_no_cluster(corpus_runtime) -> None:
    assert views.latest_consolidation(corpus_runtime) is None
    assert views.pattern_clusters(corpus_runtime) == []
    assert views.map_data(corpus_runtime, clusters=True).clusters == []


def test_the_newest_run_is_its_stored_report_its_ladder_and_its_patterns_with_their_examples(consolidated) -> None:
    runtime, report = consolidated
    view = views.latest_consolidation(runtime)
    assert view is not None and view.run_id == report["run_id"]
    assert {k: v for k, v in view.report.items() if k != "captured"} == {
        k: v for k, v in report.items() if k != "captured"
    }
    assert len(view.ladder) == report["ladder_levels"] == 4
    assert [p.id for p in view.patterns] == [p["id"] for p in report["patterns"]]
    for pattern in view.patterns:
        examples = view.examples(pattern)
        assert [e.id for e in examples] == list(pattern.example_ids) and 3 <= len(examples) <= 5
        assert all(e.source == "imported" and e.description for e in examples)


def test_the_ladder_opens_level_by_level_down_to_every_instance(consolidated) -> None:
    view = views.latest_consolidation(consolidated[0])
    assert view is not None
    reached, frontier = set(), list(view.ladder[-1])
    while frontier:
        item = frontier.pop()
        below = view.below(item)
        assert [i.id for i in below] == [i for i in item.subsumes if i in {x.id for x in view.ladder[item.level - 1]}]
        assert all(i.level == item.level - 1 for i in below)
        reached |= {item.id} if item.level == 0 else set()
        frontier += below
    assert reached == {i.id for i in view.ladder[0]}  # the principles trace down to every instance
    pattern = view.patterns[0]
    assert {i.id for i in view.below(next(i for i in view.ladder[1] if i.id == pattern.id))} == set(pattern.member_ids)


def test_each_pattern_cluster_is_its_members_placed_beside_the_corpus_and_noise_is_left_out(consolidated) -> None:
    runtime, report = consolidated
    view = views.latest_consolidation(runtime)
    assert view is not None
    before = projection.projection_status(runtime)
    clusters = views.pattern_clusters(runtime, view)
    assert [c.pattern_id for c in clusters] == [p.id for p in view.patterns]
    assert [c.name for c in clusters] == [p.name for p in view.patterns]
    members = {e.text for p in view.patterns for e in view.members(p)}
    drawn = [t for c in clusters for t in c.texts]
    assert sorted(drawn) == sorted(members) and report["noise"] > 0  # the noise of the run is drawn nowhere
    with runtime.db.connect() as con:
        _, anchors, anchor_xy = projection_store.fitted_anchors(con)
    # where new nodes would be placed, placed together as the view places them (the products of another batch
    # can differ in the last bits, enough to swap a point's eighth-nearest anchor for a near tie)
    texts = list(dict.fromkeys(drawn))
    points = projection.place_by_neighbours(anchors, anchor_xy, runtime.embedder.embed(texts))
    placed = dict(zip(texts, points.tolist(), strict=True))
    for cluster in clusters:
        assert np.allclose(np.column_stack([cluster.x, cluster.y]), [placed[t] for t in cluster.texts])
    assert projection.projection_status(runtime) == before  # and nothing was stored to draw them
    assert [c.pattern_id for c in views.map_data(runtime, clusters=True).clusters] == [c.pattern_id for c in clusters]
    assert views.map_data(runtime).clusters == []  # the live session map does not pay for them


def test_before_the_map_is_fitted_there_is_no_cluster_to_draw(corpus_runtime) -> None:
    import_log(corpus_runtime, SAMPLE_LOG)
    run_consolidation(corpus_runtime, "imported")
    assert views.latest_consolidation(corpus_runtime) is not None
    assert views.pattern_clusters(corpus_runtime) == []
