"""The session map figure: what each layer draws, from data alone."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.map import (
    DETAILED_NODES,
    MapCrystal,
    MapData,
    MapHalo,
    MapLink,
    MapLocus,
    MapStep,
    NodePoints,
    selected_items,
    session_map,
)
from explorer.figures.palette import APPROVED_LINE, domain_colours
from explorer.records.wander import ReviewState
from explorer.wording import node_kind


def sample(steps: int = 6) -> MapData:
    rng = np.random.default_rng(1)
    n = 60
    nodes = NodePoints(
        ids=[f"n{i}" for i in range(n)],
        x=rng.normal(size=n),
        y=rng.normal(size=n),
        types=["raw_chunk"] * (n - 3) + ["rem_dream"] * 3,
        domains=[("python", "art", None)[i % 3] for i in range(n)],
        years=[2000] * n,
        texts=["chunk <b>text</b>"] * n,
    )
    loci = [MapLocus(f"l{i}", float(i), float(i % 2), f"concept {i}", "python", visit_count=i) for i in range(4)]
    # the walk goes 0 → 1 → 2 → 1 → 3 …, revisiting locus 1
    order = [0, 1, 2, 1, 3, 2, 1][: steps + 1]
    path = [MapStep(k, loci[i].id, loci[i].x, loci[i].y) for k, i in enumerate(order)]
    return MapData(
        nodes=nodes,
        loci=loci,
        path=path,
        crystals=[
            MapCrystal("c1", 2.0, 0.0, "pending insight", confidence=0.7),
            MapCrystal("c2", 3.0, 1.0, "approved insight", review=ReviewState.APPROVED, confidence=0.9),
            MapCrystal("c3", 1.0, 1.0, "rejected insight", review=ReviewState.REJECTED),
        ],
        halos=[
            MapHalo("r1", 1.0, 1.0, strength=4.0, current_strength=4.0, themes=("<i>a</i>", "b")),
            MapHalo("r2", 2.0, 0.0, strength=1.0, current_strength=0.25),
        ],
        links=[MapLink(0, 0, 1, 1, "found")],
        title="A <walk>",
        subtitle="six steps",
    )


def by_name(figure: go.Figure) -> dict[str, go.BaseTraceType]:
    return {trace.name: trace for trace in figure.data}


def test_path_is_ordered_with_an_arrow_per_move_and_step_numbers() -> None:
    data = sample()
    traces = by_name(session_map(data))
    path = traces["trace (path)"]  # a short walk is one line at full strength, as it always was
    assert list(zip(path.x, path.y, strict=True)) == [(s.x, s.y) for s in data.path]
    assert not [t for t in figure_paths(traces) if t is not path]
    direction = traces["direction"]
    arrows = [i for i, size in enumerate(direction.marker.size) if size > 0]
    assert len(arrows) == len(data.path) - 1 and direction.marker.angleref == "previous"
    for i, step in zip(arrows, data.path, strict=False):  # each arrow halfway along its move, after its start
        after = data.path[step.number + 1]
        assert (direction.x[i - 1], direction.y[i - 1]) == (step.x, step.y)
        assert (direction.x[i], direction.y[i]) == ((step.x + after.x) / 2, (step.y + after.y) / 2)
    numbers = traces["step numbers"]
    labels = dict(zip(zip(numbers.x, numbers.y, strict=True), numbers.text, strict=True))
    assert labels == {(data.loci[0].x, data.loci[0].y): "start", (data.loci[1].x, data.loci[1].y): "6"}
    places = traces["steps"]  # every place says its steps on hover: a revisited locus lists them all
    hover = dict(zip(zip(places.x, places.y, strict=True), places.hovertext, strict=True))
    assert hover[(data.loci[1].x, data.loci[1].y)] == "steps 1, 3, 6" and hover[(0.0, 0.0)] == "step start"
    drawn = traces["locus (size: visits)"]
    loci = dict(zip((c[1] for c in drawn.customdata), drawn.hovertext, strict=True))
    assert loci["l1"].endswith("<br>steps 1, 3, 6") and loci["l0"].endswith("<br>step start")  # over the places


def figure_paths(traces: dict[str, go.BaseTraceType]) -> list[go.BaseTraceType]:
    return [t for name, t in traces.items() if name.startswith("trace (path)")]


def test_labels_name_the_start_the_end_and_the_selected_step_and_never_overlap() -> None:
    loci = [MapLocus(f"l{i}", float(i % 7) * 0.01, float(i // 7) * 0.01, "c") for i in range(100)]
    data = MapData(loci=loci, path=[MapStep(i, locus.id, locus.x, locus.y) for i, locus in enumerate(loci)])
    numbers = by_name(session_map(data, selected_step=42))["step numbers"]
    assert sorted(numbers.text) == ["25", "42", "50", "75", "99", "start"]  # and every 25th on a long walk


def test_the_map_opens_on_the_walk_with_the_corpus_around_it() -> None:
    data = sample()
    view = session_map(data).layout
    xs = [s.x for s in data.path] + [c.x for c in data.crystals]
    ys = [s.y for s in data.path] + [c.y for c in data.crystals]
    assert view.xaxis.range[0] < min(xs) and max(xs) < view.xaxis.range[1]
    assert view.yaxis.range[0] < min(ys) and max(ys) < view.yaxis.range[1]
    whole = session_map(data, framed=False).layout
    assert whole.xaxis.range is None and whole.uirevision != view.uirevision  # a switch of framing redraws
    tiny = MapData(nodes=data.nodes, path=[MapStep(0, "a", 0.0, 0.0), MapStep(1, "b", 0.001, 0.0)])
    span = session_map(tiny).layout.xaxis.range
    assert span[1] - span[0] >= 0.2 * np.ptp(data.nodes.x)  # a walk that barely moved shows its neighbourhood


def test_the_selected_step_and_crystal_are_ringed() -> None:
    data = sample()
    ring = by_name(session_map(data, selected_step=2, selected_crystal="c2"))["selected"]
    assert list(zip(ring.x, ring.y, strict=True)) == [(data.path[2].x, data.path[2].y), (3.0, 1.0)]
    assert "selected" not in by_name(session_map(data))


def test_crystals_are_stars_and_rejected_ones_are_not_drawn() -> None:
    crystals = by_name(session_map(sample()))["crystal"]
    assert crystals.marker.symbol == "star"
    assert [c[1] for c in crystals.customdata] == ["c1", "c2"]
    assert list(crystals.marker.line.color) == ["#7a5800", APPROVED_LINE]


def test_halos_grow_with_strength_and_fade_with_decay() -> None:
    halos = by_name(session_map(sample()))["resonance halo"]
    strong, weak = halos.marker.size
    assert strong > weak
    alpha = [float(c.rsplit(",", 1)[1].rstrip(")")) for c in halos.marker.color]
    assert alpha[0] > alpha[1] > 0  # fresh vs decayed to a quarter


def test_colour_is_domain_size_is_visits_and_dreams_are_diamonds() -> None:
    data = sample()
    figure = session_map(data)
    traces = by_name(figure)
    colours = domain_colours(data.nodes.domains)
    assert traces["python"].marker.color == colours["python"] and traces["art"].marker.color == colours["art"]
    assert traces["(no domain)"].marker.color == colours["(no domain)"]
    dreams = [t for t in figure.data if t.name.endswith("(dream)")]
    assert dreams and all(t.marker.symbol == "diamond" and not t.showlegend for t in dreams)
    assert sum(len(t.x) for t in dreams) == 3
    loci = traces["locus (size: visits)"]
    assert list(loci.marker.size) == sorted(loci.marker.size) and loci.marker.size[0] < loci.marker.size[-1]


def test_every_point_names_its_item_and_hover_text_is_escaped() -> None:
    figure = session_map(sample())
    kinds = {c[0] for trace in figure.data if trace.customdata is not None for c in trace.customdata}
    assert kinds == {"node", "locus", "crystal", "resonance"}
    hover = " ".join(t for trace in figure.data if trace.hovertext is not None for t in trace.hovertext)
    assert "&lt;b&gt;text&lt;/b&gt;" in hover and "<b>text</b>" not in hover
    assert "&lt;i&gt;a&lt;/i&gt;" in hover
    assert figure.layout.title.text.startswith("<b>A &lt;walk&gt;</b>")


def test_layers_webgl_and_static_size() -> None:
    data = sample()
    only = by_name(session_map(data, layers={"path", "crystals"}))
    assert set(only) == {"trace (path)", "direction", "steps", "start", "end", "step numbers", "crystal"}
    interactive = session_map(data)
    static = session_map(data, webgl=False, width=512, height=512)
    assert isinstance(by_name(interactive)["python"], go.Scattergl)
    assert isinstance(by_name(static)["python"], go.Scatter)
    assert (static.layout.width, static.layout.height) == (512, 512)
    assert static.layout.yaxis.scaleanchor == "x"  # distances on the map read the same both ways


def test_an_empty_map_says_so() -> None:
    figure = session_map(MapData())
    assert not figure.data and figure.layout.annotations[0].text == "nothing on the map yet"


def large(n: int, text: str = "Ünïcode / <b>markup</b> & a chunk's text, " * 4) -> MapData:
    """A map of ``n`` nodes in three domains (one named with a per cent sign), two node types and dreams."""
    rng = np.random.default_rng(2)
    types = np.array(["raw_chunk", "entity", "rem_dream"])[rng.integers(0, 3, size=n)]
    return MapData(
        nodes=NodePoints(
            ids=[f"{i:08d}-0000-0000-0000-000000000000" for i in range(n)],
            x=rng.normal(size=n) * 10,
            y=rng.normal(size=n) * 10,
            types=list(types),
            domains=[("python", "art", "50%{x}")[i % 3] for i in range(n)],
            years=[2000 + i % 20 if i % 7 else None for i in range(n)],
            texts=[text] * n,
        ),
        crystals=[MapCrystal("c1", 0.0, 0.0, "an insight")],
    )


def node_traces(figure: go.Figure) -> list[go.BaseTraceType]:
    return [t for t in figure.data if t.legendgroup in {"python", "art", "50%{x}"}]


def test_a_large_map_is_compact_webgl_and_each_point_still_says_what_it_is() -> None:
    data = large(DETAILED_NODES + 1)
    figure = session_map(data)
    traces = node_traces(figure)
    assert traces and all(isinstance(t, go.Scattergl) for t in traces)
    assert sum(len(t.x) for t in traces) == len(data.nodes)
    for trace in traces:
        # the trace says the type and domain; each point its year and first words, and its row for a selection
        assert trace.x.dtype == np.float32 and trace.customdata.dtype == np.int32
        rows = trace.customdata
        np.testing.assert_array_equal(trace.x, data.nodes.x[rows].astype(np.float32))
        kind = data.nodes.types[rows[0]]
        assert trace.hovertemplate.startswith(f"<b>{node_kind(kind)}</b> · ")
        assert all(data.nodes.types[r] == kind and data.nodes.domains[r] == trace.legendgroup for r in rows)
        year = data.nodes.years[rows[0]]
        assert trace.text[0].startswith(f"{year}: Ünïcode" if year else "Ünïcode")
        assert "<b>" not in " ".join(trace.text[:50])  # corpus text is shown as text, never as markup
    percent = next(t for t in traces if t.legendgroup == "50%{x}")
    assert "%{x}" not in percent.hovertemplate and "50&#37;{x}" in percent.hovertemplate
    # one legend entry per domain, whatever the types in it
    assert sorted(t.name for t in traces if t.showlegend) == ["50%{x}", "art", "python"]
    crystal, painted = [t for t in figure.data if t.name == "crystal"]
    assert list(crystal.customdata) == [["crystal", "c1"]]  # small layers name their items as before
    # Plotly paints WebGL over SVG: a WebGL copy paints the stars over the nodes, the SVG trace takes the clicks
    assert isinstance(crystal, go.Scatter) and isinstance(painted, go.Scattergl)
    assert figure.data.index(painted) > figure.data.index(traces[-1])
    assert painted.hoverinfo == "skip" and painted.marker.symbol == "star" and not painted.showlegend
    assert painted.legendgroup == crystal.legendgroup  # the legend shows or hides both


def test_a_map_of_100k_points_is_under_5_mb_of_json_whatever_its_text() -> None:
    for text in ("plain words of a chunk " * 10, "ünïcödé / ‘quoted’ — “text” " * 10):
        figure = session_map(large(100_000, text))
        assert len(figure.to_json()) < 4.5e6
    # and its markers are smaller, so the picture (and the browser's work) stays about that of 10k nodes
    corpus = next(t for t in node_traces(figure) if t.legendgroup == "python" and not t.name.endswith("(dream)"))
    assert corpus.marker.size <= 0.5 * by_name(session_map(sample()))["python"].marker.size


def test_a_selection_names_its_items_on_a_small_or_a_compact_map() -> None:
    data = large(DETAILED_NODES + 1)
    traces = node_traces(session_map(data))
    row = int(traces[1].customdata[5])
    points = [
        {"curve_number": 1, "point_index": 5, "customdata": row},
        {"customdata": ["crystal", "c1"]},
        {"customdata": float(row)},  # the same node again
        {"x": 1.0},  # a point that names nothing (the path, a cluster's member)
        {"customdata": len(data.nodes)},  # no such row
    ]
    # the walk's items first (a box around a star also holds the nodes near it), then the nodes, each once
    assert selected_items(points, data.nodes) == [("crystal", "c1"), ("node", data.nodes.ids[row])]
    small = sample()
    figure = session_map(small)
    clicked = [{"customdata": list(t.customdata[0])} for t in figure.data if t.customdata is not None]
    assert {kind for kind, _ in selected_items(clicked, small.nodes)} == {"node", "locus", "crystal", "resonance"}


def test_an_archive_titles_fit_their_width() -> None:
    """The 512 px archive cut a long subtitle off at its right edge: each line is shortened to what fits."""
    data = sample()
    data.subtitle = "seed: " + "how a colony of bees decides where to live " * 4 + "· 20 steps · 13 loci · active"
    small, large = (session_map(data, width=size, height=size).layout.title.text for size in (512, 1024))
    subtitle = {size: text.split("<br>")[1] for size, text in ((512, small), (1024, large))}
    assert subtitle[512].count("…") == 1 and len(subtitle[512]) < len(subtitle[1024])
    assert "…" not in session_map(sample(), width=512, height=512).layout.title.text  # a short one stays whole
