"""Where a session map writes its step labels: beside their point, clear of the other marks.

A label is Plotly text beside an invisible marker (``mode="markers+text"``): the text starts just outside the
marker on the side its ``textposition`` names, so it keeps its distance in pixels at any zoom. On a 100-step walk
the side that is free of labels was often on a neighbouring locus ("100" sat on a point); each label here takes the
side and distance, of a few tried nearest first, whose text covers the fewest marks (loci, stars, the start) and
no other label.

Sizes are in the drawn map's pixels: the caller says how many a data unit spans, a little under rather than over
(a map drawn larger only moves its marks further apart).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GLYPH_EM = 0.62  # a bold glyph's average width, in ems
PAD_PX = 3  # kept clear around a mark
# Plotly's text positions, in the order tried at each distance, and which way each moves the text.
SIDES: dict[str, tuple[int, int]] = {
    "top right": (1, 1),
    "top left": (-1, 1),
    "bottom right": (1, -1),
    "bottom left": (-1, -1),
    "middle right": (1, 0),
    "middle left": (-1, 0),
    "top center": (0, 1),
    "bottom center": (0, -1),
}
DISTANCES = (1.0, 1.7, 2.6, 3.8, 5.5)  # the invisible marker's size, in multiples of the smallest one


@dataclass(frozen=True)
class Mark:
    """Something drawn on the map that a label must not cover: its centre and radius in pixels."""

    x: float
    y: float
    radius_px: float


@dataclass(frozen=True)
class StepLabel:
    """A label's point, its text, the side it is written on and the size of the invisible marker it starts beside."""

    x: float
    y: float
    text: str
    position: str
    marker_px: float


def text_box(label: StepLabel, font_px: float, px_per_unit: float) -> tuple[float, float, float, float]:
    """(left, bottom, right, top) of the label's text in pixels, y up, from its point's pixel.

    Plotly starts a text ``marker_radius / 0.8 + 1`` pixels from its marker's centre on the side it is written
    (``Drawing.textPointPosition``); a middle one is centred on the point along that axis.
    """
    dx, dy = SIDES[label.position]
    gap = label.marker_px / 2 / 0.8 + 1
    width, height = len(label.text) * font_px * GLYPH_EM, font_px * 1.1
    cx, cy = label.x * px_per_unit, label.y * px_per_unit
    left = cx + gap if dx > 0 else cx - gap - width if dx < 0 else cx - width / 2
    bottom = cy + gap if dy > 0 else cy - gap - height if dy < 0 else cy - height / 2
    return left, bottom, left + width, bottom + height


def place_step_labels(
    wanted: Sequence[tuple[float, float, str]],
    marks: Sequence[Mark],
    *,
    px_per_unit: float,
    font_px: float,
    nearest_px: float,
) -> list[StepLabel]:
    """Each wanted label (x, y, text in data units), in order, on the nearest side of its point where it covers
    the fewest ``marks`` and none of the labels placed before it. ``px_per_unit`` converts data units to
    pixels; ``nearest_px`` is the smallest invisible marker, about a locus's size.
    """
    placed: list[StepLabel] = []
    boxes: list[tuple[float, float, float, float]] = []
    centres = np.array([(mark.x, mark.y) for mark in marks], dtype=float).reshape(-1, 2) * px_per_unit
    reach = np.array([mark.radius_px + PAD_PX for mark in marks], dtype=float)
    for x, y, text in wanted:
        best: tuple[float, StepLabel, tuple[float, float, float, float]] | None = None
        for rank, (distance, position) in enumerate((d, p) for d in DISTANCES for p in SIDES):
            label = StepLabel(x, y, text, position, nearest_px * distance)
            box = text_box(label, font_px, px_per_unit)
            cost = float(_covering(box, centres, reach).sum())
            cost += 100 * sum(_crosses(box, other) for other in boxes)
            cost += rank / 1000  # nearest first, then the order of SIDES
            if best is None or cost < best[0]:
                best = (cost, label, box)
        assert best is not None
        placed.append(best[1])
        boxes.append(best[2])
    return placed


def covered_marks(label: StepLabel, marks: Sequence[Mark], *, px_per_unit: float, font_px: float) -> list[Mark]:
    """The marks the label's text covers (what a test checks)."""
    box = text_box(label, font_px, px_per_unit)
    centres = np.array([(mark.x, mark.y) for mark in marks], dtype=float).reshape(-1, 2) * px_per_unit
    reach = np.array([mark.radius_px + PAD_PX for mark in marks], dtype=float)
    return [mark for mark, covered in zip(marks, _covering(box, centres, reach), strict=True) if covered]


def _covering(box: tuple[float, float, float, float], centres: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """Which marks (centres in pixels, each with the distance to keep) the text box comes within reach of."""
    left, bottom, right, top = box
    nearest = np.column_stack([np.clip(centres[:, 0], left, right), np.clip(centres[:, 1], bottom, top)])
    result: np.ndarray = ((centres - nearest) ** 2).sum(axis=1) < reach**2
    return result


def _crosses(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
