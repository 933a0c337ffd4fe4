"""The stable map: fitted once, extended in place, refitted only on request."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from explorer import projection
from explorer.projection import (
    ProjectionConfig,
    exact_knn,
    mean_displacement,
    place_by_neighbours,
    procrustes,
    update_projection,
)
from explorer.records import Node
from explorer.store import corpus
from explorer.store import events as events_store
from explorer.store import projection as projection_store


def _node_points(runtime) -> dict[str, tuple[float, float, str, int]]:
    return {i: (p.x, p.y, p.placed_by, p.version) for (kind, i), p in projection.load_points(runtime, "node").items()}


def test_exact_knn_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[7] = vectors[8]  # a duplicate must still have itself first
    indices, distances = exact_knn(vectors, 5, block_bytes=4096)  # several blocks
    sims = vectors @ vectors.T
    for row in (0, 7, 8, 150, 299):
        assert indices[row, 0] == row and distances[row, 0] == 0
        expected = set(np.argsort(-sims[row])[:6]) - {row}
        assert set(indices[row, 1:]) <= expected
        assert np.all(np.diff(distances[row]) >= -1e-6)


def test_placement_is_deterministic_and_follows_the_nearest_anchor() -> None:
    rng = np.random.default_rng(0)
    anchors = rng.normal(size=(50, 8)).astype(np.float32)
    anchors /= np.linalg.norm(anchors, axis=1, keepdims=True)
    xy = rng.uniform(-10, 10, size=(50, 2))
    queries = anchors[[4, 9]] + 0.01 * rng.normal(size=(2, 8)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    placed = place_by_neighbours(anchors, xy, queries, k=8, temperature=0.02)
    np.testing.assert_array_equal(placed, place_by_neighbours(anchors, xy, queries, k=8, temperature=0.02))
    # each query lands much nearer its own anchor than the anchors' typical spread
    assert np.linalg.norm(placed[0] - xy[4]) < 1.0
    assert np.linalg.norm(placed[1] - xy[9]) < 1.0
    with pytest.raises(ValueError):
        place_by_neighbours(anchors[:0], xy[:0], queries)


def test_procrustes_undoes_a_rotation_reflection_scale_and_shift() -> None:
    rng = np.random.default_rng(5)
    old = rng.uniform(-10, 10, size=(200, 2))
    turn = np.deg2rad(127)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]]) @ np.diag([1.0, -1.0])
    new = 2.7 * old @ rotation + np.array([40.0, -13.0])  # turned, mirrored, larger, elsewhere
    assert mean_displacement(old, new) > 10
    alignment = procrustes(new, old)
    np.testing.assert_allclose(alignment.apply(new), old, atol=1e-9)
    assert alignment.scale == pytest.approx(1 / 2.7)
    assert mean_displacement(old, alignment.apply(new)) < 1e-9
    # noise is not undone, only the transform: what is left is about the noise itself
    noisy = new + rng.normal(scale=0.5, size=new.shape)
    assert mean_displacement(old, procrustes(noisy, old).apply(noisy)) < 0.5
    # every point in one place can only be shifted; no points, nothing moves
    assert procrustes(np.ones((3, 2)), old[:3]).apply(np.ones((1, 2)))[0] == pytest.approx(old[:3].mean(axis=0))
    assert procrustes(np.zeros((0, 2)), np.zeros((0, 2))).apply(old) == pytest.approx(old)
    with pytest.raises(ValueError):
        procrustes(new[:3], old[:4])


def test_fit_is_stored_once_and_read_back_unchanged(corpus_runtime) -> None:
    first = update_projection(corpus_runtime)
    with corpus_runtime.db.connect() as con:
        ids, _ = projection_store.all_node_vectors(con)
        fitted_events = events_store.list_events(con, subject_prefix="projection.fitted")
    assert first.fitted == len(ids) > 30 and first.version == 1
    assert len(fitted_events) == 1 and fitted_events[0].payload["nodes"] == len(ids)
    points = _node_points(corpus_runtime)
    assert set(points) == set(ids)
    assert {p[2] for p in points.values()} == {"umap"}
    xy = np.array([p[:2] for p in points.values()])
    assert np.isfinite(xy).all() and xy.std(axis=0).min() > 0.1  # a spread-out map, not a point
    # a second update fits nothing and moves nothing
    again = update_projection(corpus_runtime)
    assert again.fitted == 0 and again.version == 1 and not again.placed
    assert _node_points(corpus_runtime) == points


def test_new_nodes_are_placed_without_refit_and_refit_on_request(corpus_runtime, monkeypatch) -> None:
    update_projection(corpus_runtime)
    before = _node_points(corpus_runtime)
    with corpus_runtime.db.connect() as con:
        ids, vectors = projection_store.all_node_vectors(con)
        target = corpus.get_nodes(con, [ids[5]])[0]
    # a new node that says almost what node 5 says: it must land near node 5
    text = target.text + " Also noted again."
    new = Node(type="raw_chunk", text=text, embedding=corpus_runtime.embedder.embed([text])[0], domain=target.domain)
    with corpus_runtime.db.transaction() as con:
        corpus.insert_nodes(con, [new])

    def no_fit(*args, **kwargs):
        raise AssertionError("placing a point must not fit UMAP")

    monkeypatch.setattr(projection, "fit_layout", no_fit)
    report = projection.place_new(corpus_runtime)
    assert report.placed == {"node": 1} and not report.needs_fit and report.version == 1
    after = _node_points(corpus_runtime)
    assert {k: v for k, v in after.items() if k != new.id} == before  # nothing else moved
    x, y, placed_by, version = after[new.id]
    assert placed_by == "neighbours" and version == 1
    xy = np.array([p[:2] for p in before.values()])
    typical = np.median(np.linalg.norm(xy - xy.mean(axis=0), axis=1))
    assert np.hypot(x - before[target.id][0], y - before[target.id][1]) < 0.25 * typical
    status = projection.projection_status(corpus_runtime)
    assert status.fitted_nodes == len(ids) and status.placed_nodes == 1 and not status.stale
    assert status.missing == {"node": 0, "locus": 0, "crystal": 0, "resonance": 0}

    monkeypatch.undo()
    refit = update_projection(corpus_runtime, refit=True)
    assert refit.version == 2 and refit.fitted == len(ids) + 1
    assert {p[2:] for p in _node_points(corpus_runtime).values()} == {("umap", 2)}
    assert refit.mean_displacement is not None and first_fit_reports_no_displacement(corpus_runtime)


def first_fit_reports_no_displacement(runtime) -> bool:
    events = projection_events(runtime)
    return "mean_displacement" not in events[0] and "mean_displacement" in events[-1]


def projection_events(runtime) -> list[dict]:
    with runtime.db.connect() as con:
        return [e.payload for e in events_store.list_events(con, subject_prefix="projection.fitted")]


def test_a_refit_after_many_new_nodes_is_aligned_to_the_old_map(corpus_runtime) -> None:
    """Over half as many nodes again as were fitted (a stale map), then a real refit: the old nodes stay about
    where they were, much nearer than the new fit alone would put them.
    """
    update_projection(corpus_runtime)
    before = {node: point[:2] for node, point in _node_points(corpus_runtime).items()}
    with corpus_runtime.db.connect() as con:  # ids are random: the first half and one is any half and one
        old = corpus.get_nodes(con, sorted(before)[: len(before) // 2 + 1])
    texts = [f"{node.text} Seen again, with a note on what it recalls." for node in old]
    vectors = corpus_runtime.embedder.embed(texts)
    with corpus_runtime.db.transaction() as con:
        corpus.insert_nodes(
            con,
            [
                Node(type="raw_chunk", text=t, embedding=v, domain=n.domain)
                for t, v, n in zip(texts, vectors, old, strict=True)
            ],
        )
    projection.place_new(corpus_runtime)
    placed = {node: point[:2] for node, point in _node_points(corpus_runtime).items()}
    assert projection.projection_status(corpus_runtime).stale

    report = update_projection(corpus_runtime, refit=True)
    after = {node: point[:2] for node, point in _node_points(corpus_runtime).items()}
    shared = sorted(placed)  # every node on the old map, fitted or placed, is in the new fit
    moved = mean_displacement(np.array([placed[i] for i in shared]), np.array([after[i] for i in shared]))
    assert report.mean_displacement == pytest.approx(moved, abs=1e-3)
    assert report.mean_displacement_unaligned is not None
    assert report.mean_displacement < 0.75 * report.mean_displacement_unaligned
    xy = np.array(list(before.values()))
    assert np.linalg.norm(xy.mean(axis=0) - np.array(list(after.values())).mean(axis=0)) < 0.25 * xy.std()
    assert projection_events(corpus_runtime)[-1]["mean_displacement"] == report.mean_displacement


def test_fit_is_reproducible_for_a_seed(corpus_template, make_runtime, tmp_path) -> None:
    """Two databases fitted with the same seed get the same map; another seed gives another map."""

    def fitted_points(name: str, seed: int) -> dict[str, tuple[float, float]]:
        db = tmp_path / f"{name}.duckdb"
        shutil.copy(corpus_template, db)
        runtime = make_runtime(db=db)
        assert update_projection(runtime, config=ProjectionConfig(seed=seed)).fitted > 30
        return {node: point[:2] for node, point in _node_points(runtime).items()}

    first, second, other = fitted_points("first", 7), fitted_points("second", 7), fitted_points("other", 8)
    assert set(first) == set(second) == set(other)
    ids = sorted(first)
    np.testing.assert_allclose([first[i] for i in ids], [second[i] for i in ids])
    moved = np.linalg.norm(np.array([first[i] for i in ids]) - np.array([other[i] for i in ids]), axis=1)
    assert np.median(moved) > 1e-3, "a different seed must give a different layout"


def test_an_empty_database_asks_for_a_fit_and_tiny_corpora_still_get_a_map(runtime) -> None:
    report = update_projection(runtime)
    assert report.fitted == 0 and not report.placed
    assert projection.place_new(runtime).version == 0
    vectors = runtime.embedder.embed(["one thing", "another thing", "a third"])
    with runtime.db.transaction() as con:
        corpus.insert_nodes(
            con,
            [
                Node(type="raw_chunk", text=t, embedding=v)
                for t, v in zip(["one thing", "another thing", "a third"], vectors, strict=True)
            ],
        )
    assert update_projection(runtime).fitted == 3
    xy = np.array([(p.x, p.y) for p in projection.load_points(runtime, "node").values()])
    assert len({tuple(np.round(row, 6)) for row in xy}) == 3


def test_cli_map_fits_once_then_places_and_refits_on_request(corpus_template, tmp_path) -> None:
    db = tmp_path / "cli.duckdb"
    shutil.copy(corpus_template, db)

    def explorer_map(*args: str) -> dict:
        out = subprocess.run(
            [sys.executable, "-m", "explorer", "map", "--db", str(db), "--json", *args],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "EXPLORER_DB": ""},
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first = explorer_map()
    assert first["version"] == 1 and first["fitted"] > 30 and first["status"]["fitted"]
    assert explorer_map()["fitted"] == 0
    refit = explorer_map("--refit")
    assert refit["version"] == 2 and refit["fitted"] == first["fitted"]
    assert first["mean_displacement"] is None and refit["mean_displacement"] is not None
    assert refit["mean_displacement"] <= refit["mean_displacement_unaligned"]
