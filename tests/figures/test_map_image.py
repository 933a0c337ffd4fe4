"""The map as a static image (kaleido + Chromium): the right size, not blank, each star and the path
drawn where the figure's data puts them (positions from plotly's own axis ranges), and close to a
stored baseline, as DataMapPlot tests its images.

Regenerate the baseline after an intended change of the drawing with
``UPDATE_BASELINES=1 pytest tests/figures/test_map_image.py`` and look at it before committing.
"""

from __future__ import annotations

import io
import itertools
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from explorer.export import render_png
from explorer.figures.map import LAYERS, MapCrystal, MapData, MapHalo, MapLocus, MapStep, NodePoints, session_map
from explorer.figures.palette import CRYSTAL_FILL, PATH_COLOUR
from explorer.records.wander import ReviewState

BASELINE = Path(__file__).parent / "baselines" / "session-map-512.png"


def scene() -> MapData:
    """A fixed corpus of three clusters and a walk across them, with two crystals and a resonance."""
    rng = np.random.default_rng(7)
    centres = np.array([[-6.0, 0.0], [5.0, 4.0], [3.0, -5.0]])
    labels = np.repeat([0, 1, 2], 120)
    xy = centres[labels] + rng.normal(scale=1.3, size=(len(labels), 2))
    nodes = NodePoints(
        ids=[f"n{i}" for i in range(len(labels))],
        x=xy[:, 0],
        y=xy[:, 1],
        types=["raw_chunk"] * len(labels),
        domains=[("python", "art", "science")[k] for k in labels],
        years=[None] * len(labels),
        texts=[""] * len(labels),
    )
    stops = [(-6, 0), (-3, 1), (0, 2), (5, 4), (4, 0), (3, -5), (-1, -3)]
    loci = [
        MapLocus(
            f"l{i}",
            float(x),
            float(y),
            f"stop {i}",
            ("python", "python", "art", "art", "science", "science", "python")[i],
            visit_count=1 + i % 3,
        )
        for i, (x, y) in enumerate(stops)
    ]
    return MapData(
        nodes=nodes,
        loci=loci,
        path=[MapStep(i, locus.id, locus.x, locus.y) for i, locus in enumerate(loci)],
        crystals=[
            MapCrystal("c1", 5.0, 4.0, "one", confidence=0.8),
            MapCrystal("c2", 3.0, -5.0, "two", review=ReviewState.APPROVED),
        ],
        halos=[MapHalo("r1", locus.x, locus.y, 3.0, 2.0, ("theme",), "confirmed") for locus in loci[2:5]],
        title="Baseline walk",
        subtitle="7 steps · 2 crystals",
    )


def png(data: MapData, size: int, layers=LAYERS) -> np.ndarray:
    figure = session_map(data, layers=layers, webgl=False, width=size, height=size)
    return np.asarray(Image.open(io.BytesIO(render_png(figure, size, size))).convert("RGB")).astype(np.int16)


def near(image: np.ndarray, colour: str, tolerance: int = 40) -> int:
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(image - rgb).max(axis=2) <= tolerance).sum())


@pytest.fixture(scope="module")
def full() -> dict[int, np.ndarray]:
    data = scene()
    return {size: png(data, size) for size in (1024, 512)}


def test_both_sizes_are_drawn_and_not_blank(full) -> None:
    for size, image in full.items():
        assert image.shape == (size, size, 3)
        not_white = (image.min(axis=2) < 235).mean()
        assert 0.02 < not_white < 0.6, (size, not_white)
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 50


def test_the_path_and_the_stars_are_drawn(full) -> None:
    data = scene()
    without_path = png(data, 512, layers=set(LAYERS) - {"path"})
    without_crystals = png(data, 512, layers=set(LAYERS) - {"crystals"})
    with_all = full[512]
    assert near(with_all, PATH_COLOUR) > 2 * near(without_path, PATH_COLOUR) + 300
    assert near(with_all, CRYSTAL_FILL) > 60 and near(without_crystals, CRYSTAL_FILL) < 10
    # the 1024 image draws the same things, larger
    assert near(full[1024], CRYSTAL_FILL) > 2 * near(with_all, CRYSTAL_FILL)


def test_the_image_matches_the_stored_baseline(full, pixels) -> None:
    image = full[512]
    if os.environ.get("UPDATE_BASELINES") or not BASELINE.exists():
        BASELINE.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image.astype(np.uint8)).save(BASELINE)
        if not os.environ.get("UPDATE_BASELINES"):
            pytest.fail(f"no baseline yet: wrote {BASELINE}; look at it, commit it, run again")
    baseline = np.asarray(Image.open(BASELINE).convert("RGB")).astype(np.int16)
    assert baseline.shape == image.shape
    difference = np.abs(baseline - image).max(axis=2)
    # On the machine that made the baseline the image is identical; elsewhere fonts and anti-aliasing may
    # move a few hundred pixels of text, but nothing at the stars and along the path may differ.
    assert difference.mean() < 0.5, difference.mean()
    assert (difference > 48).mean() < 0.003, (difference > 48).mean()
    for column, row in [*crystal_centres(scene(), pixels), *path_samples(scene(), pixels)]:
        here = (slice(row - 2, row + 3), slice(column - 2, column + 3))
        assert difference[here].max() <= 24, ("the image differs from the baseline at", column, row)


def to_pixels(data: MapData, size: int) -> Callable[[float, float], tuple[int, int]]:
    """Where plotly draws a data point in the ``size`` px image: (column, row).

    The axes' final ranges come from plotly.js itself; with the equal aspect (``scaleanchor``) the ranges fill
    the plot area, whose left, right and top margins are the figure's (the legend below widens only the bottom).
    """
    figure = session_map(data, webgl=False, width=size, height=size)
    layout = figure.full_figure_for_development(warn=False).layout
    (x0, x1), (_, y1) = layout.xaxis.range, layout.yaxis.range
    margin = figure.layout.margin
    per_unit = (size - margin.l - margin.r) / (x1 - x0)
    return lambda x, y: (round(margin.l + (x - x0) * per_unit), round(margin.t + (y1 - y) * per_unit))


@pytest.fixture(scope="module")
def pixels() -> Callable[[float, float], tuple[int, int]]:
    return to_pixels(scene(), 512)


def crystal_centres(data: MapData, pixels: Callable[[float, float], tuple[int, int]]) -> list[tuple[int, int]]:
    return [pixels(c.x, c.y) for c in data.crystals]


def path_samples(data: MapData, pixels: Callable[[float, float], tuple[int, int]]) -> list[tuple[int, int]]:
    """Points well inside each segment of the walk (clear of the loci, stars and labels at its stops)."""
    return [
        pixels(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y))
        for a, b in itertools.pairwise(data.path)
        for t in (0.3, 0.4, 0.6, 0.7)
    ]


def closest(image: np.ndarray, colour: str, column: int, row: int, radius: int = 2) -> int:
    """How far the pixel nearest ``colour`` within ``radius`` of (column, row) is from it (max over channels)."""
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    window = image[row - radius : row + radius + 1, column - radius : column + radius + 1]
    return int(np.abs(window - rgb).max(axis=2).min())


def test_each_star_is_drawn_where_its_crystal_is(full, pixels) -> None:
    data = scene()
    image = full[512]
    for crystal, (column, row) in zip(data.crystals, crystal_centres(data, pixels), strict=True):
        assert closest(image, CRYSTAL_FILL, column, row, radius=1) <= 24, (crystal.id, column, row)


def test_the_path_runs_along_the_walk(full, pixels) -> None:
    data = scene()
    image = full[512]
    missed = [
        (column, row) for column, row in path_samples(data, pixels) if closest(image, PATH_COLOUR, column, row) > 60
    ]
    assert not missed, missed
