"""Where a session map looks and what it names.

A walk covers a small part of the corpus: drawn over the whole of it, the demo's 18 steps filled a tenth of the
plot and their labels ran into each other. A session map is therefore framed on the walk, with the corpus around
it as context, and names only what helps to find one's way: the start, the end and the step a person selected;
the other steps say their numbers on hover. Labels are placed so that none covers another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PADDING = 0.15  # of the walk's extent, on each side
SMALLEST = 0.2  # of the corpus's extent: a walk that barely moved still shows its neighbourhood
# A label's size in the frame's units, for a frame drawn about this many pixels wide, in a font of about this size.
FRAME_PIXELS = 900
CHAR_PIXELS, LINE_PIXELS = 8.5, 18
# Where a label may go around its point, in the order tried (Plotly's textposition), and which way each moves it.
POSITIONS = {
    "top right": (1, 1),
    "top left": (-1, 1),
    "bottom right": (1, -1),
    "bottom left": (-1, -1),
}


@dataclass(frozen=True)
class Frame:
    """The x and y ranges a session map opens on."""

    x: tuple[float, float]
    y: tuple[float, float]

    @property
    def extent(self) -> float:
        """The frame's larger side, in data units (labels are sized against it)."""
        return max(self.x[1] - self.x[0], self.y[1] - self.y[0])


@dataclass(frozen=True)
class Label:
    """A text at a point, on the side of it where it covers no other label."""

    x: float
    y: float
    text: str
    position: str = "top right"

    def box(self, extent: float) -> tuple[float, float, float, float]:
        """(left, bottom, right, top) of the text, in data units, in a frame ``extent`` units wide."""
        unit = (extent or 1.0) / FRAME_PIXELS
        width, height = (len(self.text) * CHAR_PIXELS + 6) * unit, LINE_PIXELS * unit
        dx, dy = POSITIONS[self.position]
        left = self.x if dx > 0 else self.x - width
        bottom = self.y if dy > 0 else self.y - height
        return left, bottom, left + width, bottom + height


def frame(focus: np.ndarray, context: np.ndarray) -> Frame | None:
    """The ranges that hold every ``focus`` point (x, y rows: the walk, its crystals) with room around them, each
    at least :data:`SMALLEST` of the ``context`` (the corpus) wide; None when there is nothing to frame.
    """
    if len(focus) == 0:
        return None
    low, high = focus.min(axis=0), focus.max(axis=0)
    least = SMALLEST * float(max(context.max(axis=0) - context.min(axis=0))) if len(context) else 0.0
    spans = np.maximum(high - low, least)  # each axis its own: the map's equal scale widens the one with room
    spans[spans == 0] = 1.0
    centre, half = (low + high) / 2, spans * (0.5 + PADDING)
    x, y = (centre - half).tolist(), (centre + half).tolist()
    return Frame((x[0], y[0]), (x[1], y[1]))


def place_labels(wanted: Sequence[tuple[float, float, str]], extent: float) -> list[Label]:
    """Each wanted label on the first side of its point where it covers none placed before it; one that fits
    nowhere joins the text of the label it would cover (so "17" beside "start" reads "start · 17"). ``extent``:
    the frame's width in data units, which sets how large a label is.
    """
    placed: list[Label] = []
    for x, y, text in wanted:
        sides = (Label(x, y, text, position) for position in POSITIONS)
        free = next((label for label in sides if not any(overlaps(label, other, extent) for other in placed)), None)
        if free is not None:
            placed.append(free)
            continue
        covered = next(i for i, other in enumerate(placed) if overlaps(Label(x, y, text), other, extent))
        other = placed[covered]
        placed[covered] = Label(other.x, other.y, f"{other.text} · {text}", other.position)
    return placed


def overlaps(a: Label, b: Label, extent: float) -> bool:
    """Whether the two labels' boxes cross, drawn in a frame ``extent`` data units wide."""
    (al, ab, ar, at), (bl, bb, br, bt) = a.box(extent), b.box(extent)
    return al < br and bl < ar and ab < bt and bb < at
