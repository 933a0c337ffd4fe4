"""The map as a static image (kaleido + Chromium): the right size, not blank, the path and the stars
drawn, and close to a stored baseline, as DataMapPlot tests its images.

Regenerate the baseline after an intended change of the drawing with
``UPDATE_BASELINES=1 pytest tests/figures/test_map_image.py`` and look at it before committing.
"""

from __future__ import annotations

import io
import os
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
        path=[MapStep(i, l.id, l.x, l.y) for i, l in enumerate(loci)],
        crystals=[
            MapCrystal("c1", 5.0, 4.0, "one", confidence=0.8),
            MapCrystal("c2", 3.0, -5.0, "two", review=ReviewState.APPROVED),
        ],
        halos=[MapHalo("r1", l.x, l.y, 3.0, 2.0, ("theme",), "confirmed") for l in loci[2:5]],
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


def test_the_image_matches_the_stored_baseline(full) -> None:
    image = full[512]
    if os.environ.get("UPDATE_BASELINES") or not BASELINE.exists():
        BASELINE.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image.astype(np.uint8)).save(BASELINE)
        if not os.environ.get("UPDATE_BASELINES"):
            pytest.fail(f"no baseline yet: wrote {BASELINE}; look at it, commit it, run again")
    baseline = np.asarray(Image.open(BASELINE).convert("RGB")).astype(np.int16)
    assert baseline.shape == image.shape
    difference = np.abs(baseline - image).max(axis=2)
    # fonts and anti-aliasing may differ a little between machines; shapes and places may not
    assert difference.mean() < 4.0, difference.mean()
    assert (difference > 80).mean() < 0.01, (difference > 80).mean()
