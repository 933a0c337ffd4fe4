"""Small charts for the pages: counts, resonance strength by step, selection scores by step."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from explorer.figures.palette import domain_colours, hover_text

SCORE_KEYS: tuple[str, ...] = ("score", "interestingness", "novelty", "bridge_potential", "uncertainty")


def _small(figure: go.Figure, title: str, height: int) -> go.Figure:
    figure.update_layout(
        template="plotly_white",
        title=dict(text=title, font=dict(size=14), x=0.01),
        height=height,
        margin=dict(l=10, r=10, t=36, b=10),
        showlegend=figure.layout.showlegend,
    )
    return figure


def count_bars(counts: Mapping[str, int], title: str, *, colour_by_name: bool = False, height: int = 240) -> go.Figure:
    """Horizontal bars, largest first (domains get their map colour)."""
    items = sorted(((str(k), int(v)) for k, v in counts.items()), key=lambda kv: (-kv[1], kv[0]))
    names = [k for k, _ in items]
    colours = domain_colours(names) if colour_by_name else None
    figure = go.Figure(
        go.Bar(
            x=[v for _, v in items],
            y=[html.escape(n, quote=False) for n in names],  # names may come from documents: Plotly reads tags
            orientation="h",
            text=[v for _, v in items],
            textposition="auto",
            marker=dict(color=[colours[n] for n in names] if colours else "#4c6ef5"),
            hovertemplate="%{y}: %{x}<extra></extra>",
        )
    )
    figure.update_yaxes(autorange="reversed", automargin=True)
    figure.update_layout(showlegend=False)
    return _small(figure, title, height)


def year_bars(counts: Mapping[int | None, int], title: str = "Nodes by year", height: int = 240) -> go.Figure:
    """How the corpus spreads over the years the REM cycle dreams from; undated nodes are counted in the title.
    Every year from the first to the last has its place, a year without nodes an empty one: a gap in the corpus
    shows as a gap, not as two neighbouring bars.
    """
    known = {int(k): int(v) for k, v in counts.items() if k is not None}
    dated = [(year, known.get(year, 0)) for year in range(min(known), max(known) + 1)] if known else []
    figure = go.Figure(
        go.Bar(
            x=[k for k, _ in dated],
            y=[v for _, v in dated],
            marker=dict(color="#4c6ef5"),
            hovertemplate="%{x}: %{y}<extra></extra>",
        )
    )
    undated = counts.get(None, 0)
    # no year at all: no axes either, which Plotly would otherwise number from -1 to 4
    figure.update_layout(
        showlegend=False,
        xaxis=dict(type="category", title=None, visible=bool(dated)),
        yaxis=dict(title=None, visible=bool(dated)),
    )
    if undated:
        title += f" ({undated} undated)"
    return _small(figure, title, height)


@dataclass(frozen=True)
class StrengthPoint:
    """A resonance's strength after the step that touched it."""

    resonance_id: str
    label: str
    step: int
    strength: float


def strength_by_step(
    points: Sequence[StrengthPoint], title: str = "Resonance strength by step", top: int = 8, height: int = 300
) -> go.Figure:
    """One line per resonance (the ``top`` strongest at their last touch)."""
    series: dict[str, list[StrengthPoint]] = {}
    for point in points:
        series.setdefault(point.resonance_id, []).append(point)
    strongest = sorted(series.values(), key=lambda s: -s[-1].strength)[:top]
    figure = go.Figure(
        [
            go.Scatter(
                x=[p.step for p in s],
                y=[p.strength for p in s],
                mode="lines+markers",
                name=hover_text(s[-1].label, 40),
                line=dict(shape="hv"),
                hovertemplate="step %{x}: strength %{y:.2f}<extra>" + hover_text(s[-1].label, 60) + "</extra>",
            )
            for s in strongest
        ]
    )
    figure.update_layout(
        xaxis=dict(title="step"), yaxis=dict(title="strength"), showlegend=True, legend=dict(font=dict(size=10))
    )
    return _small(figure, title, height)


def scores_by_step(
    steps: Sequence[int],
    scores: Sequence[Mapping[str, float]],
    title: str = "Selection scores by step",
    keys: Sequence[str] = SCORE_KEYS,
    height: int = 300,
) -> go.Figure:
    """The chosen adjacency's scores at each step (composite score bold)."""
    figure = go.Figure(
        [
            go.Scatter(
                x=list(steps),
                y=[s.get(key) for s in scores],
                mode="lines+markers",
                name=key,
                line=dict(width=3 if key == "score" else 1.5),
                marker=dict(size=5),
            )
            for key in keys
            if any(key in s for s in scores)
        ]
    )
    figure.update_layout(
        xaxis=dict(title="step"),
        yaxis=dict(title=None, range=[0, 1.05]),
        showlegend=True,
        legend=dict(font=dict(size=10), orientation="h", y=-0.25),
    )
    return _small(figure, title, height)
