"""The map's layer of consolidation clusters: a tinted hull and the members of each pattern, the pattern's name on
hover, nothing for noise, and the layer switched off like the others.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.map import LAYERS, MapCluster, MapData, NodePoints, outline, session_map


def clustered() -> MapData:
    """A few corpus nodes and two patterns' clusters (one of them named with markup) beside them."""
    nodes = NodePoints(
        ids=["n1", "n2", "n3"],
        x=np.array([0.0, 5.0, 9.0]),
        y=np.array([0.0, 5.0, 1.0]),
        types=["raw_chunk"] * 3,
        domains=["python"] * 3,
        years=[None] * 3,
        texts=["a", "b", "c"],
    )
    square = MapCluster(
        "p1",
        "Naked <b>single</b>",
        (0.0, 2.0, 2.0, 0.0, 1.0),
        (0.0, 0.0, 2.0, 2.0, 1.0),
        ("cell <i>one</i>", "cell two", "cell three", "cell four", "the centre"),
    )
    triangle = MapCluster("p2", "Backtracking", (6.0, 8.0, 7.0), (6.0, 6.0, 8.0), ("guess", "undo", "revert"))
    return MapData(nodes=nodes, clusters=[square, triangle])


def cluster_traces(figure: go.Figure) -> list[go.BaseTraceType]:
    return [t for t in figure.data if t.legendgroup == "clusters"]


def test_each_pattern_has_a_tinted_hull_around_its_members_and_its_name_on_hover() -> None:
    figure = session_map(clustered(), webgl=False)
    hulls = [t for t in figure.data if t.fill == "toself"]
    assert [h.name for h in hulls] == ["pattern: Naked &lt;b&gt;single&lt;/b&gt;", "pattern: Backtracking"]
    assert all(h.hoveron == "fills" and h.hoverlabel.namelength == -1 for h in hulls)  # the whole name on hover
    square = hulls[0]
    assert set(zip(square.x, square.y, strict=True)) == {(0, 0), (2, 0), (2, 2), (0, 2)}  # the centre is inside
    assert (square.x[0], square.y[0]) == (square.x[-1], square.y[-1])  # closed
    assert square.fillcolor.startswith("rgba(") and square.fillcolor != hulls[1].fillcolor
    members = [t for t in figure.data if t.mode == "markers" and (t.name or "").startswith("members: ")]
    assert [len(t.x) for t in members] == [5, 3]
    assert members[0].hovertext[0] == "<b>pattern</b> Naked &lt;b&gt;single&lt;/b&gt;<br>cell &lt;i&gt;one&lt;/i&gt;"
    assert all(t.customdata is None for t in cluster_traces(figure))  # not corpus items: a selection skips them
    legend = [t for t in cluster_traces(figure) if t.showlegend is not False]
    assert [t.name for t in legend] == ["pattern cluster"]  # one entry shows or hides them all


def test_the_tint_lies_under_the_corpus_and_the_members_over_it() -> None:
    names = [t.name for t in session_map(clustered(), webgl=False).data]
    corpus = names.index("python")
    assert names.index("pattern: Backtracking") < corpus < names.index("members: Backtracking")


def test_noise_is_unmarked_only_the_clusters_members_are_drawn() -> None:
    data = clustered()
    drawn = sum(len(t.x) for t in cluster_traces(session_map(data)) if (t.name or "").startswith("members: "))
    assert drawn == sum(len(c.x) for c in data.clusters)  # every experience outside a cluster is simply absent


def test_switching_the_layer_off_removes_every_cluster_trace() -> None:
    data = clustered()
    assert cluster_traces(session_map(data, layers=set(LAYERS)))
    off = session_map(data, layers=set(LAYERS) - {"clusters"})
    assert cluster_traces(off) == [] and {t.name for t in off.data} == {"python"}
    assert cluster_traces(session_map(MapData(nodes=data.nodes))) == []  # no run yet: no layer, no legend entry


def test_a_cluster_in_one_place_is_its_marker_and_one_on_a_line_a_segment() -> None:
    data = MapData(
        clusters=[
            MapCluster("p1", "one place", (1.0, 1.0, 1.0), (2.0, 2.0, 2.0), ("a", "b", "c")),
            MapCluster("p2", "a line", (0.0, 1.0, 2.0), (0.0, 1.0, 2.0), ("a", "b", "c")),
        ]
    )
    figure = session_map(data)
    assert [t.name for t in figure.data if t.fill == "toself"] == ["pattern: a line"]
    assert len([t for t in figure.data if (t.name or "").startswith("members: ")]) == 2


def test_outline_is_the_convex_hull() -> None:
    xs, ys = outline([0, 4, 4, 0, 2, 1, 3], [0, 0, 4, 4, 2, 3, 1])
    assert set(zip(xs, ys, strict=True)) == {(0, 0), (4, 0), (4, 4), (0, 4)} and len(xs) == 5
    assert outline([0, 1, 2], [0, 1, 2]) == ([0, 2, 0], [0, 2, 0])
    assert outline([1, 1], [1, 1]) == ([1], [1])
