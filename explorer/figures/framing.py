"""Where a session map looks and what it names.

A walk covers a small part of the corpus: drawn over the whole of it, the demo's 18 steps filled a tenth of the
plot and their labels ran into each other. A session map is therefore framed on the walk, with the corpus around
it as context, and names only what helps to find one's way: the start, the end and the step a person selected;
the other steps say their numbers on hover (figures/step_labels.py places the labels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PADDING = 0.15  # of the walk's extent, on each side
SMALLEST = 0.2  # of the corpus's extent: a walk that barely moved still shows its neighbourhood


@dataclass(frozen=True)
class Frame:
    """The x and y ranges a session map opens on."""

    x: tuple[float, float]
    y: tuple[float, float]


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
