"""The session map (docs/wander.md#visual-encoding-for-session-archives).

Position: the stored UMAP point. Colour: domain. Size: visit count. The trace is
an ordered path whose older moves fade, with a few direction arrows and a few step
labels written beside their points; crystals are stars;
resonances are translucent halos around their supporting loci, sized by strength
and fading with decay. Dream nodes are diamonds and the links dreaming
discovered are dashed lines. A consolidation pattern's cluster is a tinted outline (convex hull)
around its member experiences, placed beside the corpus they resemble; noise is not
drawn.

Pure: a :class:`MapData` in, a ``go.Figure`` out. Every point a selection can
look up carries ``customdata = [kind, id]``, except on a compact map (more than
``DETAILED_NODES`` nodes), whose node layers carry each node's row in
``MapData.nodes`` instead: :func:`selected_items` reads both.
"""

from __future__ import annotations

import html
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explorer.figures.framing import Frame, frame
from explorer.figures.palette import (
    APPROVED_LINE,
    CLUSTER_COLOURS,
    CRYSTAL_FILL,
    CRYSTAL_LINE,
    DREAM_LINE,
    HALO_COLOUR,
    LINK_COLOUR,
    PATH_COLOUR,
    SELECTED_COLOUR,
    UNKNOWN_DOMAIN,
    domain_colours,
    hover_text,
)
from explorer.figures.step_labels import Mark, place_step_labels
from explorer.records.wander import ResonanceStatus, ReviewState, SourceType
from explorer.wording import locus_kind, node_kind

LAYERS: tuple[str, ...] = ("corpus", "dreams", "links", "clusters", "halos", "path", "loci", "crystals")
DREAM_TYPES: frozenset[str] = frozenset({"rem_dream", "fused", "pattern", "abstraction"})
# Above this many nodes the map is compact: each node carries its row in NodePoints (not [kind, id]), single-
# precision coordinates and a short hover; per-point hover text and ids made 11 MB of JSON at 50k nodes.
DETAILED_NODES = 10_000
# Bytes of a compact map's JSON for the nodes' own hover text (year and first words), over all nodes: 150 each
# up to 16k nodes, 48 at 50k, 24 at 100k; with the coordinates and rows, 100k nodes make about 4 MB.
HOVER_BYTES = 2_400_000
# A long walk's path: the newest moves drawn strong, older ones in bands of ever fainter lines (down to an alpha of
# FAINTEST), arrows on a few moves only, and a label every MILESTONE steps (or a multiple: four at most) once a
# walk is twice that long.
RECENT_MOVES = 10
AGE_BANDS = 5
OLDER_STRONGEST = 0.5  # the newest band of older moves, against 1 for the newest moves
FAINTEST = 0.12
MOST_ARROWS, RECENT_ARROWS = 12, 6
SHORTEST_ARROWED_PX = 40  # at scale 1
MILESTONE = 25
TITLE_MARGIN_PX = 12
SMALL_WIDTH = 700  # an image narrower than this has its legend below the map
# Room the legend takes at the right of a large image, below a small one or the app's map; the app's map is about
# APP_WIDTH_PX wide (the page's width).
LEGEND_SIDE_PX, LEGEND_BAND_PX, APP_WIDTH_PX = (
    170,
    70,
    1000,
)  # the title's left margin (x=0.01 of the figure) and room on its right


@dataclass
class NodePoints:
    """Corpus nodes, column-wise (tens of thousands of them)."""

    ids: list[str] = field(default_factory=list)
    x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    y: np.ndarray = field(default_factory=lambda: np.zeros(0))
    types: list[str] = field(default_factory=list)
    domains: list[str | None] = field(default_factory=list)
    years: list[int | None] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class MapLocus:
    """A locus of the session's walk where the map draws it, sized by how often the walk came back to it."""

    id: str
    x: float
    y: float
    concept: str
    domain: str | None = None
    visit_count: int = 0
    source_type: SourceType = "ADJACENT"


@dataclass(frozen=True)
class MapStep:
    """One vertex of the path: the locus reached at ``number`` (0 is where the walk started)."""

    number: int
    locus_id: str
    x: float
    y: float


@dataclass(frozen=True)
class MapCrystal:
    """A crystal as a star on the map, outlined by its review state (a rejected one is not drawn)."""

    id: str
    x: float
    y: float
    insight: str
    review: ReviewState = ReviewState.PENDING
    confidence: float = 0.0


@dataclass(frozen=True)
class MapHalo:
    """One resonance around one of its supporting loci."""

    resonance_id: str
    x: float
    y: float
    strength: float
    current_strength: float
    themes: tuple[str, ...] = ()
    status: ResonanceStatus = "candidate"


@dataclass(frozen=True)
class MapLink:
    """A link that dreaming discovered between two memories, drawn as a dashed line between their points."""

    x0: float
    y0: float
    x1: float
    y1: float
    description: str = ""


@dataclass(frozen=True)
class MapCluster:
    """A consolidation pattern's compression cluster: its member experiences where the map puts them, and their
    text for the hover.
    """

    pattern_id: str
    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    texts: tuple[str, ...] = ()


@dataclass
class MapData:
    """Everything one map shows, already placed: the figure code only draws, it never reads the store."""

    nodes: NodePoints = field(default_factory=NodePoints)
    loci: list[MapLocus] = field(default_factory=list)
    path: list[MapStep] = field(default_factory=list)
    crystals: list[MapCrystal] = field(default_factory=list)
    halos: list[MapHalo] = field(default_factory=list)
    links: list[MapLink] = field(default_factory=list)
    clusters: list[MapCluster] = field(default_factory=list)
    title: str = "Dream Explorer map"
    subtitle: str | None = None


def session_map(
    data: MapData,
    *,
    layers: frozenset[str] | set[str] | tuple[str, ...] = LAYERS,
    webgl: bool = True,
    width: int | None = None,
    height: int = 720,
    legend: bool = True,
    framed: bool = True,
    selected_step: int | None = None,
    selected_crystal: str | None = None,
) -> go.Figure:
    """The map as a figure. ``webgl`` draws the corpus with Scattergl (the app);
    ``width`` fixes the size for a static image, and marks scale with it. ``framed``: opened on the walk (and
    its crystals), the corpus around it as context (:mod:`explorer.figures.framing`); else on everything.
    ``selected_step`` and ``selected_crystal`` are ringed, and the step is labelled.
    """
    layers = frozenset(layers)
    scale = (min(width, height) / 1024) if width else 0.85
    view = _frame(data) if framed else None
    colours = domain_colours([*data.nodes.domains, *(locus.domain for locus in data.loci)])
    traces: list[go.BaseTraceType] = []
    clusters = "clusters" in layers
    if clusters:
        traces += _cluster_areas(data.clusters)  # a tint under the corpus, members over it
    if "halos" in layers:
        traces += _halos(data.halos, scale)
    if "corpus" in layers or "dreams" in layers:
        traces += _nodes(data.nodes, colours, scale, webgl, corpus="corpus" in layers, dreams="dreams" in layers)
    if clusters:
        traces += _cluster_members(data.clusters, scale)

    compact = webgl and len(data.nodes) > DETAILED_NODES
    if "links" in layers:
        traces += _links(data.links, scale)
    if width is None:
        height = _fitting_height(data, height, view)
    per_unit = _pixels_per_unit(data, view, width, height, scale)
    path_under, path_over = _path(data, scale, selected_step, per_unit) if "path" in layers else ([], [])
    traces += path_under  # the line, its arrows and its places, under the loci
    if "loci" in layers:
        traces += _painted_over(_loci(data.loci, data.path, colours, scale), compact)
    if "crystals" in layers:
        traces += _painted_over(_crystals(data.crystals, scale), compact)
    traces += _selected(data, selected_step, selected_crystal, scale)
    traces += path_over  # the start and the step numbers on top of everything, so they stay seen
    figure = go.Figure(traces)
    title_px, subtitle_px = max(11, round(20 * scale)), max(9, round(13 * scale))
    title = f"<b>{hover_text(data.title, min(90, _fitting_chars(width, title_px, bold=True)))}</b>"
    if data.subtitle:
        subtitle = hover_text(data.subtitle, min(220, _fitting_chars(width, subtitle_px)))
        title += f"<br><span style='font-size:{subtitle_px}px'>{subtitle}</span>"
    axis = dict(showgrid=False, zeroline=False, showticklabels=False, title=None, showline=False)
    small = width is not None and width < SMALL_WIDTH
    figure.update_layout(
        template="plotly_white",
        title=dict(text=title, x=0.01, xanchor="left", font=dict(size=title_px)),
        width=width,
        height=height if width is None else (height or width),
        margin=dict(l=10, r=10, t=max(40, round(70 * scale)), b=10),
        showlegend=legend,
        # under the map when space is short (a small image) or the width is the app's to choose
        legend=(
            dict(
                orientation="h",
                yanchor="top",
                y=-0.01,
                xanchor="left",
                x=0,
                font=dict(size=8 if small else 11),
                itemsizing="constant",
                itemwidth=30,
                tracegroupgap=0,
                bgcolor="rgba(255,255,255,0.8)",
            )
            if small or width is None
            else dict(
                yanchor="top",
                y=1,
                xanchor="left",
                x=1.01,
                font=dict(size=max(9, round(12 * scale))),
                itemsizing="constant",
                bgcolor="rgba(255,255,255,0.8)",
            )
        ),
        xaxis=dict(axis, range=list(view.x)) if view else axis,
        yaxis=dict(axis, scaleanchor="x", scaleratio=1, **({"range": list(view.y)} if view else {})),
        hovermode="closest",
        dragmode="pan",
        uirevision=f"map-{'framed' if view else 'whole'}",  # a person's zoom stays until the framing changes
        plot_bgcolor="white",
        paper_bgcolor="white",
    )
    if not traces:
        figure.add_annotation(text="nothing on the map yet", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return figure


def _frame(data: MapData) -> Frame | None:
    """The walk and its crystals, framed, with the corpus and the session's loci as the context."""
    focus = [(step.x, step.y) for step in data.path] + [(c.x, c.y) for c in data.crystals]
    context = np.column_stack([data.nodes.x, data.nodes.y]) if len(data.nodes) else np.zeros((0, 2))
    return frame(np.asarray(focus, dtype=float).reshape(-1, 2), context)


def _extent(data: MapData) -> float:
    """The width of everything drawn, in data units: what labels are placed against on an unframed map."""
    xs = np.concatenate([data.nodes.x, [p.x for p in data.path], [c.x for c in data.crystals]])
    ys = np.concatenate([data.nodes.y, [p.y for p in data.path], [c.y for c in data.crystals]])
    return float(max(np.ptp(xs), np.ptp(ys))) if len(xs) > 1 else 1.0


def _pixels_per_unit(data: MapData, view: Frame | None, width: int | None, height: int, scale: float) -> float:
    """About how many pixels one data unit spans where the map is drawn, a little under rather than over: the axes
    keep one scale, so the tighter of the plot's width over the x range and its height over the y range, the
    legend taking a side (a large image) or a band below (a small one, the app's). What labels and arrows are
    sized against.
    """
    legend_right = width is not None and width >= SMALL_WIDTH
    plot_width = (width or APP_WIDTH_PX) - 20 - (LEGEND_SIDE_PX if legend_right else 0)
    plot_height = height - max(40, round(70 * scale)) - 10 - (0 if legend_right else LEGEND_BAND_PX)
    spans = (view.x[1] - view.x[0], view.y[1] - view.y[0]) if view is not None else (_extent(data),) * 2
    return max(1e-9, min(plot_width / (spans[0] or 1.0), plot_height / (spans[1] or 1.0)))


def _fitting_height(data: MapData, most: int, view: Frame | None) -> int:
    """A height for the app's (container-wide, ~1000 px) chart, legend below, that suits the map's aspect (the
    frame's, when framed): the axes keep one scale, so a wide map in a tall chart is mostly blank.
    """
    if view is not None:
        aspect = (view.y[1] - view.y[0]) / (view.x[1] - view.x[0])
        return int(np.clip(1000 * aspect + 220, 480, most))
    xs = np.concatenate([data.nodes.x, [locus.x for locus in data.loci]])
    ys = np.concatenate([data.nodes.y, [locus.y for locus in data.loci]])
    if len(xs) < 2 or np.ptp(xs) <= 0:
        return most
    aspect = np.ptp(ys) / np.ptp(xs)
    return int(np.clip(1000 * aspect + 220, 480, most))


def _halos(halos: list[MapHalo], scale: float) -> list[go.BaseTraceType]:
    if not halos:
        return []
    r, g, b = HALO_COLOUR
    strengths = np.array([h.strength for h in halos], dtype=float)
    fade = np.array([0.0 if h.strength <= 0 else min(1.0, h.current_strength / h.strength) for h in halos])
    # A fresh resonance is clearly tinted, a decayed one barely; halos stack where
    # resonances share loci, so each one alone stays light.
    alpha = 0.04 + 0.18 * fade
    sizes = (16 + 9 * np.sqrt(np.clip(strengths, 0, None))) * scale * 1.3
    text = [
        f"<b>resonance</b> ({h.status})<br>themes: {hover_text(', '.join(h.themes), 120)}<br>"
        f"strength {h.strength:.2f}, now {h.current_strength:.2f}"
        for h in halos
    ]
    return [
        go.Scatter(
            x=[h.x for h in halos],
            y=[h.y for h in halos],
            mode="markers",
            name="resonance halo",
            marker=dict(
                size=sizes,
                color=[f"rgba({r},{g},{b},{a:.3f})" for a in alpha],
                line=dict(width=1.2, color=[f"rgba({r},{g},{b},{min(1, 2 * a + 0.2):.3f})" for a in alpha]),
            ),
            hovertext=text,
            hoverinfo="text",
            customdata=[["resonance", h.resonance_id] for h in halos],
            legendrank=5,
        )
    ]


def _fitting_chars(width: int | None, font_px: int, *, bold: bool = False) -> int:
    """How many characters of a title line fit across a figure ``width`` pixels wide (any number when the page
    decides the width), at an average glyph of 0.55 em (0.6 bold): the 512 px archive cut its subtitle off.
    """
    if width is None:
        return 10_000
    return int((width - 2 * TITLE_MARGIN_PX) / (font_px * (0.6 if bold else 0.55)))


def _nodes(
    nodes: NodePoints, colours: dict[str, str], scale: float, webgl: bool, *, corpus: bool, dreams: bool
) -> list[go.BaseTraceType]:
    """One trace per (domain, dream or not, node type), so a compact map's hover can say the type and domain
    from its trace and carry only the year and a few words per point.
    """
    if not len(nodes):
        return []
    scatter = go.Scattergl if webgl else go.Scatter
    compact = len(nodes) > DETAILED_NODES
    groups: dict[tuple[str, bool, str], list[int]] = defaultdict(list)
    for i, (kind, domain) in enumerate(zip(nodes.types, nodes.domains, strict=True)):
        is_dream = kind in DREAM_TYPES
        if (is_dream and dreams) or (not is_dream and corpus):
            groups[(domain or UNKNOWN_DOMAIN, is_dream, kind)].append(i)
    budget = min(150, HOVER_BYTES // len(nodes))
    # A compact map's node markers shrink so that all of them cover about the area 10k nodes cover: a denser
    # picture with less overdraw, and less to paint (the fragments are most of the drawing where Chromium paints
    # WebGL on the CPU: 100k markers took 1.8 s at 5 px, 1.2 s at 3 px).
    corpus_size, dream_size = max(3, 6 * scale), max(5, 9 * scale)
    if compact:
        shrink = math.sqrt(DETAILED_NODES / len(nodes))
        corpus_size, dream_size = max(2.0, corpus_size * shrink), max(5.0, dream_size * shrink)
    traces = []
    in_legend: set[str] = set()
    for (domain, is_dream, kind), rows in sorted(groups.items()):
        idx = np.array(rows)
        marker = (
            dict(
                size=dream_size,
                symbol="diamond",
                color=colours[domain],
                opacity=0.9,
                line=dict(width=1.2, color=DREAM_LINE),
            )
            if is_dream
            else dict(size=corpus_size, color=colours[domain], opacity=0.45, line=dict(width=0))
        )
        hover: dict[str, object]
        if compact:
            # what tells the point from its trace's neighbours, and its row in ``nodes`` for a selection
            hover = dict(
                text=np.array([_compact_hover(nodes.years[i], nodes.texts[i], budget) for i in rows]),
                hovertemplate=_template(f"<b>{node_kind(kind)}</b> · {hover_text(domain, 40)}")
                + "<br>%{text}<extra></extra>",
                customdata=idx.astype(np.int32),
            )
        else:
            hover = dict(
                hovertext=[
                    f"<b>{node_kind(kind)}</b> · {hover_text(domain, 40)}"
                    f"{' · ' + str(nodes.years[i]) if nodes.years[i] else ''}<br>{hover_text(nodes.texts[i], 140)}"
                    for i in rows
                ],
                hoverinfo="text",
                customdata=[["node", nodes.ids[i]] for i in rows],
            )
        traces.append(
            scatter(
                x=_coordinates(nodes.x[idx], compact),
                y=_coordinates(nodes.y[idx], compact),
                mode="markers",
                marker=marker,
                # a domain comes from a document, and Plotly reads tags in legend text
                name=html.escape(f"{domain} (dream)" if is_dream else domain, quote=False),
                legendgroup=domain,
                showlegend=not is_dream and domain not in in_legend,  # one entry per domain, whatever the types
                legendrank=10,
                **hover,
            )
        )
        if not is_dream:
            in_legend.add(domain)
    if any(is_dream for _, is_dream, _ in groups):
        # one legend entry for the shape; the colour is the domain's, as for any node
        traces.append(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name="dream node",
                legendrank=20,
                marker=dict(symbol="diamond", size=9, color="white", line=dict(width=1.5, color=DREAM_LINE)),
            )
        )
    return traces


def _coordinates(values: np.ndarray, compact: bool) -> np.ndarray:
    """Single precision on a compact map: half the bytes, and still far finer than a pixel."""
    return np.asarray(values, dtype=np.float32 if compact else np.float64)


def _compact_hover(year: int | None, text: str | None, budget: int) -> str:
    """A point's own part of a compact map's hover: its year and first words, in at most ``budget`` bytes of the
    figure's JSON, quotes and comma included (a character outside ASCII costs six).
    """
    head = f"{year}: " if year else ""
    words = " ".join((text or "").split())
    most = budget - 3 - len(head)
    room = most
    while room > 3:
        cut = words if len(words) <= room else words[: room - 3].rstrip() + "..."
        shown = html.escape(cut, quote=False)
        over = _json_chars(shown) - most
        if over <= 0:
            return head + shown
        room -= max(1, math.ceil(over / 6))  # a character dropped saves one to six bytes
    return head.removesuffix(": ")


def _json_chars(text: str) -> int:
    """Characters ``text`` takes in the figure's JSON: Plotly writes ``/`` and every character outside ASCII as
    six (a ``u`` escape).
    """
    if text.isascii() and not any(c in text for c in '/"\\'):
        return len(text)
    return sum(6 if c == "/" or ord(c) >= 128 else 2 if c in '"\\' else 1 for c in text)


def _template(text: str) -> str:
    """Constant text for a hovertemplate: Plotly would read ``%{...}`` in a domain's name as a field."""
    return text.replace("%", "&#37;")


def selected_items(points: Iterable[Mapping[str, Any]], nodes: NodePoints) -> list[tuple[str, str]]:
    """(kind, id) of each point of a selection (Plotly's points, as Streamlit hands them over), once each: a point
    names its item in its customdata as ``[kind, id]``, or, on a compact map's node layers, by its row in
    ``nodes`` (one number, to keep the figure small). The walk's items come before the corpus's, in the order
    selected: a box around a star on a dense map holds hundreds of nodes and the one crystal it was drawn for.
    """
    found: list[tuple[str, str]] = []
    for point in points:
        data = point.get("customdata")
        if isinstance(data, int | float) and not isinstance(data, bool):
            if data == int(data) and 0 <= data < len(nodes):
                found.append(("node", nodes.ids[int(data)]))
        elif isinstance(data, Sequence) and not isinstance(data, str) and len(data) >= 2:
            found.append((str(data[0]), str(data[1])))
    return sorted(dict.fromkeys(found), key=lambda item: item[0] == "node")


def _links(links: list[MapLink], scale: float) -> list[go.BaseTraceType]:
    if not links:
        return []
    xs: list[float | None] = []
    ys: list[float | None] = []
    for link in links:
        xs += [link.x0, link.x1, None]
        ys += [link.y0, link.y1, None]
    return [
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            name="discovered link",
            hoverinfo="skip",
            line=dict(color=LINK_COLOUR, width=max(1, 1.6 * scale), dash="dash"),
            opacity=0.6,
            legendrank=30,
        )
    ]


def outline(x: Sequence[float], y: Sequence[float]) -> tuple[list[float], list[float]]:
    """The convex hull of the points as a closed polygon (Andrew's monotone chain); fewer than three distinct
    points, or points on one line, give the segment between the extremes.
    """
    points = sorted(set(zip(x, y, strict=True)))
    if len(points) < 3:
        return [p[0] for p in points], [p[1] for p in points]

    def half(ordered: list[tuple[float, float]]) -> list[tuple[float, float]]:
        chain: list[tuple[float, float]] = []
        for p in ordered:
            while len(chain) >= 2 and _turn(chain[-2], chain[-1], p) <= 0:
                chain.pop()
            chain.append(p)
        return chain[:-1]

    hull = half(points) + half(points[::-1])
    hull.append(hull[0])
    return [p[0] for p in hull], [p[1] for p in hull]


def _turn(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """Positive when o → a → b turns left."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _cluster_rgb(index: int) -> tuple[int, int, int]:
    return CLUSTER_COLOURS[index % len(CLUSTER_COLOURS)]


def _cluster_areas(clusters: list[MapCluster]) -> list[go.BaseTraceType]:
    """Each cluster's hull, tinted, with the pattern's name on hover (a fill's hover shows its trace's name), and
    one legend entry that shows or hides every cluster at once.
    """
    traces: list[go.BaseTraceType] = []
    for index, cluster in enumerate(clusters):
        xs, ys = outline(cluster.x, cluster.y)
        if len(xs) < 2:
            continue  # a single place: its member marker is the whole cluster
        r, g, b = _cluster_rgb(index)
        traces.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                fill="toself",
                fillcolor=f"rgba({r},{g},{b},0.12)",
                line=dict(color=f"rgba({r},{g},{b},0.75)", width=1.5),
                name=f"pattern: {hover_text(cluster.name, 80)}",  # Plotly reads tags in a trace's name too
                hoveron="fills",
                hoverlabel=dict(namelength=-1),
                legendgroup="clusters",
                showlegend=False,
            )
        )
    if clusters:
        r, g, b = _cluster_rgb(0)
        traces.append(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name="pattern cluster",
                legendgroup="clusters",
                legendrank=25,
                marker=dict(
                    symbol="square",
                    size=12,
                    color=f"rgba({r},{g},{b},0.2)",
                    line=dict(width=1.5, color=f"rgb({r},{g},{b})"),
                ),
            )
        )
    return traces


def _cluster_members(clusters: list[MapCluster], scale: float) -> list[go.BaseTraceType]:
    """Each cluster's member experiences, in its colour, over the corpus; no customdata: they are not corpus items
    a selection could look up.
    """
    return [
        go.Scatter(
            x=list(cluster.x),
            y=list(cluster.y),
            mode="markers",
            name=f"members: {hover_text(cluster.name, 80)}",
            marker=dict(
                size=max(5, 8 * scale),
                color="rgb({},{},{})".format(*_cluster_rgb(index)),
                line=dict(width=1, color="white"),
            ),
            hovertext=[
                f"<b>pattern</b> {hover_text(cluster.name, 80)}<br>{hover_text(text, 160)}" for text in cluster.texts
            ],
            hoverinfo="text",
            legendgroup="clusters",
            showlegend=False,
        )
        for index, cluster in enumerate(clusters)
    ]


def _path(data: MapData, scale: float, selected: int | None, per_unit: float) -> tuple[list[Any], list[Any]]:
    """The walk, as (what goes under the loci, what goes over everything): the line fading with age, sparse
    direction arrows and every place's steps on hover; then the start and the step labels.

    A walk of a hundred steps drawn at full strength was a hairball: the newest :data:`RECENT_MOVES` moves are
    drawn as before, older ones ever fainter and thinner, so the order reads from faint to strong.
    """
    steps = data.path
    if not steps:
        return [], []
    strength = _move_strengths(len(steps) - 1)
    under = [*_path_lines(steps, strength, scale), _arrows(steps, strength, scale, per_unit)]
    # every place a step reached says its numbers on hover ("steps 3, 7")
    by_place: dict[tuple[float, float], list[int]] = defaultdict(list)
    for step in steps:
        by_place[(step.x, step.y)].append(step.number)
    under.append(
        go.Scatter(
            x=[x for x, _ in by_place],
            y=[y for _, y in by_place],
            mode="markers",
            name="steps",
            marker=dict(size=max(8, 14 * scale), color=PATH_COLOUR, opacity=0),
            hovertext=[_steps_text(numbers) for numbers in by_place.values()],
            hoverinfo="text",
            showlegend=False,
        )
    )
    start = go.Scatter(
        x=[steps[0].x],
        y=[steps[0].y],
        mode="markers",
        name="start",
        marker=dict(symbol="square", size=max(8, 14 * scale), color="white", line=dict(width=2.5, color=PATH_COLOUR)),
        hoverinfo="skip",
        legendrank=41,
    )
    # the end framed, its locus's colour still seen inside (a long walk's last label has neighbours to tell from)
    sizes = {locus.id: _locus_size(locus, scale) for locus in data.loci}
    end = go.Scatter(
        x=[steps[-1].x],
        y=[steps[-1].y],
        mode="markers",
        name="end",
        marker=dict(
            symbol="square-open",
            size=max(14 * scale, sizes.get(steps[-1].locus_id, 0) + 8 * scale),
            color=PATH_COLOUR,
            line=dict(width=max(1.5, 2.5 * scale)),
        ),
        hoverinfo="skip",
        legendrank=41.5,
    )
    over = [start, end] if len(steps) > 1 else [start]
    return under, [*over, _step_numbers(data, scale, selected, per_unit)]


def _move_strengths(moves: int) -> list[float]:
    """How strongly each move is drawn, oldest first, in (0, 1]: the newest :data:`RECENT_MOVES` at 1, older ones
    in :data:`AGE_BANDS` steps down to the faintest (steps, not a gradient: each band is one trace).
    """
    older = moves - RECENT_MOVES
    strengths = []
    for index in range(moves):
        if index >= older:
            strengths.append(1.0)
            continue
        band = 1 + index * AGE_BANDS // older  # 1 (the oldest moves) … AGE_BANDS
        strengths.append(OLDER_STRONGEST * band / AGE_BANDS)  # a step down from the newest moves
    return strengths


def _path_rgba(strength: float) -> str:
    r, g, b = (int(PATH_COLOUR[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{FAINTEST + (1 - FAINTEST) * strength:.2f})"


def _path_lines(steps: list[MapStep], strength: list[float], scale: float) -> list[go.Scatter]:
    """One line per band of equal strength (each a run of consecutive moves); the newest is the legend's."""
    traces = []
    full = max(1.2, 2.4 * scale)
    start = 0
    while start < len(strength):
        end = start
        while end + 1 < len(strength) and strength[end + 1] == strength[start]:
            end += 1
        band = steps[start : end + 2]  # move i runs from step i to step i + 1
        newest = end == len(strength) - 1
        traces.append(
            go.Scatter(
                x=[s.x for s in band],
                y=[s.y for s in band],
                mode="lines",
                name="trace (path)" if newest else f"trace (path), steps {band[0].number}–{band[-1].number}",
                hoverinfo="skip",
                line=dict(color=_path_rgba(strength[start]), width=full * (0.4 + 0.6 * strength[start])),
                legendgroup="path",
                showlegend=newest,
                legendrank=40,
            )
        )
        start = end + 1
    if not traces:  # a walk that has not moved yet: its one place, in the legend as the path
        traces.append(
            go.Scatter(
                x=[steps[0].x],
                y=[steps[0].y],
                mode="lines",
                name="trace (path)",
                line=dict(color=PATH_COLOUR, width=full),
                legendgroup="path",
                legendrank=40,
            )
        )
    return traces


def _arrows(steps: list[MapStep], strength: list[float], scale: float, px_per_unit: float) -> go.Scatter:
    """Direction arrows at the midpoints of a few moves: every move of a short walk; on a long one the newest
    :data:`RECENT_ARROWS` and a few older ones evenly spread, :data:`MOST_ARROWS` in all. A long walk's moves
    between neighbouring loci get none: their arrow would hide under the loci.

    Arrows use ``angleref="previous"``: each midpoint follows an invisible copy of its move's first vertex, so it
    points along its move in screen space, whatever the zoom.
    """
    moving = [i for i in range(len(steps) - 1) if (steps[i].x, steps[i].y) != (steps[i + 1].x, steps[i + 1].y)]
    if len(moving) > MOST_ARROWS:
        shortest = SHORTEST_ARROWED_PX * scale / px_per_unit
        length = {i: math.dist((steps[i].x, steps[i].y), (steps[i + 1].x, steps[i + 1].y)) for i in moving}
        moving = [i for i in moving if length[i] >= shortest] or moving[-1:]
    chosen = moving
    if len(moving) > MOST_ARROWS:
        older = moving[:-RECENT_ARROWS]
        spread = MOST_ARROWS - RECENT_ARROWS
        chosen = [older[round(k * (len(older) - 1) / (spread - 1))] for k in range(spread)]
        chosen += moving[-RECENT_ARROWS:]
    xs: list[float] = []
    ys: list[float] = []
    sizes: list[float] = []
    colours: list[str] = []
    full = max(9, 17 * scale)
    for i in chosen:
        before, after = steps[i], steps[i + 1]
        xs += [before.x, (before.x + after.x) / 2]
        ys += [before.y, (before.y + after.y) / 2]
        sizes += [0, full * (0.6 + 0.4 * strength[i])]
        colours += [_path_rgba(0), _path_rgba(strength[i])]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="markers",
        name="direction",
        hoverinfo="skip",
        marker=dict(symbol="arrow", size=sizes, angleref="previous", color=colours, line=dict(width=0)),
        legendgroup="path",
        showlegend=False,
    )


def _step_numbers(data: MapData, scale: float, selected: int | None, per_unit: float) -> go.Scatter:
    """Labels where they help: the start, the end, the selected step and on a long walk every
    :data:`MILESTONE`-th step (every 50th past 100 steps, ...), each beside its point where it covers no locus,
    star or other label.
    """
    steps = data.path
    last = steps[-1].number
    named = {steps[0].number: "start", last: str(last)}
    if last >= 2 * MILESTONE:  # every 25th step up to 100 steps, then every 50th, ...: four at most
        every = MILESTONE * math.ceil(last / (4 * MILESTONE))
        named.update({s.number: str(s.number) for s in steps if s.number % every == 0 and s.number not in named})
    if selected is not None and selected in {step.number for step in steps}:
        named[selected] = str(selected)
    first = {steps[0].number, last, selected}  # the ends and the selection choose their side first
    wanted = sorted(
        ((s.x, s.y, named.pop(s.number), s.number not in first) for s in steps if s.number in named),
        key=lambda w: w[3],
    )
    marks = [Mark(locus.x, locus.y, _locus_size(locus, scale) / 2) for locus in data.loci]
    marks += [Mark(c.x, c.y, max(12, 28 * scale) / 2) for c in data.crystals if c.review is not ReviewState.REJECTED]
    marks += [Mark(s.x, s.y, max(8, 14 * scale) / 2 + 2) for s in (steps[0], steps[-1])]  # the start and end
    font = max(8, round(13 * scale))
    labels = place_step_labels(
        [(x, y, text) for x, y, text, _ in wanted],
        marks,
        px_per_unit=per_unit,
        font_px=font,
        nearest_px=max(10, 18 * scale),
    )
    return go.Scatter(
        x=[label.x for label in labels],
        y=[label.y for label in labels],
        mode="markers+text",  # an invisible marker: the text starts beside the point, never on it
        marker=dict(size=[label.marker_px for label in labels], opacity=0),
        text=[label.text for label in labels],
        textposition=[label.position for label in labels],
        name="step numbers",
        textfont=dict(size=font, color=PATH_COLOUR, weight="bold", shadow="0px 0px 3px white"),
        hoverinfo="skip",
        showlegend=False,
    )


def _selected(data: MapData, step: int | None, crystal: str | None, scale: float) -> list[go.BaseTraceType]:
    """A ring around the selected step's place and the selected crystal, so a link's choice is seen at once."""
    points = [(s.x, s.y) for s in data.path if s.number == step][:1]
    points += [(c.x, c.y) for c in data.crystals if c.id == crystal]
    if not points:
        return []
    return [
        go.Scatter(
            x=[x for x, _ in points],
            y=[y for _, y in points],
            mode="markers",
            name="selected",
            marker=dict(symbol="circle-open", size=max(16, 30 * scale), color=SELECTED_COLOUR, line=dict(width=3)),
            hoverinfo="skip",
            legendrank=42,
        )
    ]


def _painted_over(traces: list[go.BaseTraceType], compact: bool) -> list[go.BaseTraceType]:
    """A small layer, and on a compact map a WebGL copy of it that only paints it over the corpus.

    Plotly paints WebGL above every SVG trace, so thousands of WebGL nodes would hide the stars and loci; but the
    SVG trace must stay to be hovered and clicked: Plotly picks an SVG marker anywhere on it, a WebGL one only by
    its centre, which the node a locus (and its crystal) stands on shares.
    """
    if not compact:
        return traces
    copies = [
        go.Scattergl(
            x=trace.x,
            y=trace.y,
            mode="markers",
            marker=trace.marker.to_plotly_json(),
            name=trace.name,
            legendgroup=trace.legendgroup,
            showlegend=False,
            hoverinfo="skip",
        )
        for trace in traces
    ]
    return [*traces, *copies]


def _steps_text(numbers: list[int]) -> str:
    """The steps that reached one place, as its hover says them: "step start", "steps 1, 3, 6"."""
    return ("step " if len(numbers) == 1 else "steps ") + ", ".join("start" if n == 0 else str(n) for n in numbers)


def _loci(loci: list[MapLocus], steps: list[MapStep], colours: dict[str, str], scale: float) -> list[go.BaseTraceType]:
    """The session's loci, sized by visits; each says on hover which steps reached it (the map labels only the
    start, the end and the selected step).
    """
    if not loci:
        return []
    reached: dict[str, list[int]] = defaultdict(list)
    for step in steps:
        reached[step.locus_id].append(step.number)
    sizes = [_locus_size(locus, scale) for locus in loci]
    text = [
        f"<b>locus</b> ({locus_kind(locus.source_type)}) · visits {locus.visit_count} · "
        f"{hover_text(locus.domain or UNKNOWN_DOMAIN, 40)}<br>{hover_text(locus.concept, 160)}"
        + (f"<br>{_steps_text(reached[locus.id])}" if reached[locus.id] else "")
        for locus in loci
    ]
    return [
        go.Scatter(
            x=[locus.x for locus in loci],
            y=[locus.y for locus in loci],
            mode="markers",
            name="locus (size: visits)",
            marker=dict(
                size=sizes,
                color=[colours.get(locus.domain or UNKNOWN_DOMAIN) for locus in loci],
                line=dict(width=1.5, color=PATH_COLOUR),
                opacity=0.95,
            ),
            hovertext=text,
            hoverinfo="text",
            customdata=[["locus", locus.id] for locus in loci],
            legendgroup="loci",  # with its WebGL copy on a compact map
            legendrank=50,
        )
    ]


def _locus_size(locus: MapLocus, scale: float) -> float:
    """A locus's marker size in pixels: it grows with the visits, up to a cap."""
    return min(34.0, (9 + 5 * math.sqrt(max(0, locus.visit_count)))) * scale * 1.2


def _crystals(crystals: list[MapCrystal], scale: float) -> list[go.BaseTraceType]:
    shown = [c for c in crystals if c.review is not ReviewState.REJECTED]
    if not shown:
        return []
    colours = [CRYSTAL_FILL if c.review is not ReviewState.ARCHIVED else "#dee2e6" for c in shown]
    lines = [APPROVED_LINE if c.review is ReviewState.APPROVED else CRYSTAL_LINE for c in shown]
    text = [
        f"<b>crystal</b> ({c.review}) · confidence {c.confidence:.2f}<br>{hover_text(c.insight, 200)}" for c in shown
    ]
    return [
        go.Scatter(
            x=[c.x for c in shown],
            y=[c.y for c in shown],
            mode="markers",
            name="crystal",
            marker=dict(
                symbol="star",
                size=max(12, 28 * scale),
                color=colours,
                line=dict(width=[3 if c.review is ReviewState.APPROVED else 1.5 for c in shown], color=lines),
            ),
            hovertext=text,
            hoverinfo="text",
            customdata=[["crystal", c.id] for c in shown],
            legendgroup="crystals",  # with its WebGL copy on a compact map
            legendrank=60,
        )
    ]
