"""A long walk's path reads in order: older moves fade, arrows are few, a few steps are labelled beside their
point and never on a mark; a short walk is drawn whole, as before.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.map import MOST_ARROWS, RECENT_MOVES, MapCrystal, MapData, MapLocus, MapStep, session_map
from explorer.figures.step_labels import Mark, covered_marks, place_step_labels


def walk(steps: int, seed: int = 4) -> MapData:
    """A walk of ``steps`` steps among 40 loci in four clusters, coming back to them as a real walk does."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [10.0, 1.0], [5.0, 9.0], [-4.0, 7.0]])
    xy = centres[np.arange(40) % 4] + rng.normal(scale=0.8, size=(40, 2))
    visits = [0] * 40
    order = [0]
    for _ in range(steps):
        here = order[-1]
        same = [i for i in range(40) if i % 4 == here % 4 and i != here]
        order.append(int(rng.choice(same)) if rng.random() < 0.6 else int(rng.integers(40)))
    for i in order:
        visits[i] += 1
    loci = [MapLocus(f"l{i}", float(x), float(y), f"locus {i}", "python", visits[i]) for i, (x, y) in enumerate(xy)]
    return MapData(
        loci=loci,
        path=[MapStep(n, loci[i].id, loci[i].x, loci[i].y) for n, i in enumerate(order)],
        crystals=[MapCrystal("c1", loci[5].x, loci[5].y, "insight"), MapCrystal("c2", loci[10].x, loci[10].y, "two")],
    )


def path_lines(figure: go.Figure) -> list[go.Scatter]:
    return [t for t in figure.data if t.legendgroup == "path" and t.mode == "lines"]


def alpha(colour: str) -> float:
    return float(colour.rsplit(",", 1)[1].rstrip(")")) if colour.startswith("rgba") else 1.0


def move_styles(figure: go.Figure, data: MapData) -> list[tuple[float, float]]:
    """(alpha, width) of each move of the walk, oldest first, from the lines that draw it."""
    styles: list[tuple[float, float]] = []
    for line in path_lines(figure):
        styles += [(alpha(line.line.color), line.line.width)] * (len(line.x) - 1)
    assert len(styles) == len(data.path) - 1  # every move drawn once, in order
    return styles


def test_older_moves_of_a_long_walk_are_fainter_and_thinner_than_the_last_ones() -> None:
    data = walk(100)
    figure = session_map(data)
    lines = path_lines(figure)
    # consecutive lines share the step that joins them: together they are the walk's vertices, in order
    drawn = [(x, y) for k, line in enumerate(lines) for x, y in list(zip(line.x, line.y, strict=True))[k > 0 :]]
    assert drawn == [(s.x, s.y) for s in data.path]
    styles = move_styles(figure, data)
    newest = styles[-RECENT_MOVES:]
    assert all(a == 1.0 for a, _ in newest)
    oldest = styles[: len(styles) // 4]
    assert max(a for a, _ in oldest) < 0.5 * min(a for a, _ in newest)
    assert max(w for _, w in oldest) < min(w for _, w in newest)
    assert [a for a, _ in styles] == sorted(a for a, _ in styles)  # never stronger going back in time
    assert len(lines) <= 8  # a few bands, not a trace per move
    assert [t.name for t in figure.data if t.showlegend is not False and t.legendgroup == "path"] == ["trace (path)"]


def arrow_count(figure: go.Figure) -> int:
    (direction,) = [t for t in figure.data if t.name == "direction"]
    return sum(1 for size in direction.marker.size if size > 0)


def test_a_long_walk_has_a_bounded_number_of_arrows() -> None:
    data = walk(100)
    figure = session_map(data)
    assert 3 <= arrow_count(figure) <= MOST_ARROWS
    (direction,) = [t for t in figure.data if t.name == "direction"]
    # the newest arrowed move is among the last ones, and drawn strong
    last = [i for i, size in enumerate(direction.marker.size) if size > 0][-1]
    assert alpha(direction.marker.color[last]) == 1.0


def label_boxes(figure: go.Figure, size: int) -> tuple[list[tuple[str, tuple[float, ...]]], object]:
    """Each label's text box in the image's pixels (y down), as Plotly places text beside a marker, and a function
    from data to pixels built on the axis ranges Plotly itself settles on.
    """
    full = figure.full_figure_for_development(warn=False).layout
    (x0, x1), (y0, y1) = full.xaxis.range, full.yaxis.range
    margin = figure.layout.margin
    # Plotly widens one range so that both fill the plot at one scale; the legend pushes the right margin (a large
    # image) or the bottom one (a small one) by what it needs, so the scale is the tighter of the two unpushed
    # sides' and the plot starts at the left and top margins, which nothing pushes.
    per_unit = min((size - margin.l - margin.r) / (x1 - x0), (size - margin.t - margin.b) / (y1 - y0))

    def pixel(x: float, y: float) -> tuple[float, float]:
        return margin.l + (x - x0) * per_unit, margin.t + (y1 - y) * per_unit

    (labels,) = [t for t in figure.data if t.name == "step numbers"]
    font = labels.textfont.size
    boxes = []
    for x, y, text, position, marker in zip(
        labels.x, labels.y, labels.text, labels.textposition, labels.marker.size, strict=True
    ):
        cx, cy = pixel(x, y)
        gap = marker / 2 / 0.8 + 1  # plotly.js Drawing.textPointPosition
        width, height = len(text) * font * 0.55, font
        left = cx + gap if "right" in position else cx - gap - width if "left" in position else cx - width / 2
        top = cy - gap - height if "top" in position else cy + gap if "bottom" in position else cy - height / 2
        boxes.append((text, (left, top, left + width, top + height)))
    return boxes, pixel


@pytest.mark.parametrize("size", [1024, 512])
def test_labels_name_the_start_the_end_and_a_few_steps_beside_their_points_and_never_on_a_mark(size: int) -> None:
    data = walk(100)
    figure = session_map(data, webgl=False, width=size, height=size)
    (labels,) = [t for t in figure.data if t.name == "step numbers"]
    assert set(labels.text) == {"start", "25", "50", "75", "100"}
    assert "middle center" not in labels.textposition and min(labels.marker.size) > 0
    boxes, pixel = label_boxes(figure, size)
    marks = [(locus.x, locus.y) for locus in data.loci] + [(c.x, c.y) for c in data.crystals]
    for text, (left, top, right, bottom) in boxes:
        on = [
            (x, y)
            for x, y in marks
            if left - 3 <= pixel(x, y)[0] <= right + 3 and top - 3 <= pixel(x, y)[1] <= bottom + 3
        ]
        assert not on, (text, on)
    for i, (_, a) in enumerate(boxes):  # and no label on another
        for _, b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def test_a_short_walk_shows_every_step_as_before() -> None:
    data = walk(3)
    figure = session_map(data)
    (line,) = path_lines(figure)
    assert list(zip(line.x, line.y, strict=True)) == [(s.x, s.y) for s in data.path]
    assert alpha(line.line.color) == 1.0 and line.name == "trace (path)"
    moves = sum(1 for a, b in zip(data.path, data.path[1:], strict=False) if (a.x, a.y) != (b.x, b.y))
    assert arrow_count(figure) == moves == 3
    (labels,) = [t for t in figure.data if t.name == "step numbers"]
    assert sorted(labels.text) == ["3", "start"]
    (places,) = [t for t in figure.data if t.name == "steps"]
    assert sorted(places.hovertext) == ["step 1", "step 2", "step 3", "step start"]


def test_a_label_moves_off_the_side_a_mark_takes() -> None:
    free = place_step_labels([(0.0, 0.0, "100")], [], px_per_unit=1.0, font_px=13, nearest_px=18)
    assert free[0].position == "top right"
    # a locus just to the upper right of the point: the label goes elsewhere, and covers nothing
    neighbour = Mark(25.0, 16.0, 10.0)
    (label,) = place_step_labels([(0.0, 0.0, "100")], [neighbour], px_per_unit=1.0, font_px=13, nearest_px=18)
    assert label.position != "top right"
    assert covered_marks(label, [neighbour], px_per_unit=1.0, font_px=13) == []
    assert covered_marks(free[0], [neighbour], px_per_unit=1.0, font_px=13) == [neighbour]
    # marks all round: the label steps further out rather than sit on one
    ring = [Mark(22 * np.cos(a), 22 * np.sin(a), 8.0) for a in np.linspace(0, 2 * np.pi, 12, endpoint=False)]
    (far,) = place_step_labels([(0.0, 0.0, "7")], ring, px_per_unit=1.0, font_px=13, nearest_px=18)
    assert far.marker_px > 18 and covered_marks(far, ring, px_per_unit=1.0, font_px=13) == []


def test_a_very_long_walk_labels_a_few_steps_still() -> None:
    (labels,) = [t for t in session_map(walk(1000)).data if t.name == "step numbers"]
    assert sorted(labels.text, key=lambda text: -1 if text == "start" else int(text)) == [
        "start",
        "250",
        "500",
        "750",
        "1000",
    ]
