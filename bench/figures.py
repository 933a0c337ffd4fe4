"""Figures: build and serialise the session map at 10k, 50k and 100k points, fetch and draw it in Chromium,
export PNGs; and how new points are placed on the stable map (neighbour placement vs UMAP ``transform``).

    python -m bench.figures [--sizes 10000,50000,100000] [--db DEMO.duckdb] [--no-browser] [--no-png]
                            [--no-placement]

Synthetic maps (nine domains, a 50-step walk, crystals, halos) measure the figure code;
``--db`` (a database with a corpus, e.g. the demo's) measures placement on real vectors
and the Map page's own script time (Streamlit AppTest, server side).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from explorer.export import WEBGL_ABOVE, render_png
from explorer.figures.map import (
    DETAILED_NODES,
    MapCrystal,
    MapData,
    MapHalo,
    MapLocus,
    MapStep,
    NodePoints,
    session_map,
)

T = TypeVar("T")

DOMAINS = ("art", "education", "literature", "love", "politics", "python", "science", "wisdom", "work")


def synthetic(n: int, steps: int = 50, seed: int = 0) -> MapData:
    """A map of ``n`` nodes in nine domain clusters, with a walk of ``steps``, crystals and halos on it."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-15, 15, size=(len(DOMAINS), 2))
    labels = rng.integers(0, len(DOMAINS), size=n)
    xy = centres[labels] + rng.normal(scale=2.0, size=(n, 2))
    nodes = NodePoints(
        ids=[f"{i:08d}-0000-0000-0000-000000000000" for i in range(n)],
        x=xy[:, 0],
        y=xy[:, 1],
        types=["raw_chunk"] * (n - n // 50) + ["rem_dream"] * (n // 50),
        domains=[DOMAINS[k] for k in labels],
        years=[2000 + int(k) for k in labels],
        texts=["A chunk of text of about the length the map shows on hover, " * 3] * n,
    )
    picks = rng.choice(n, size=steps + 1, replace=False)
    loci = [
        MapLocus(f"l{i}", float(xy[p, 0]), float(xy[p, 1]), "a concept " * 8, DOMAINS[labels[p]], 1 + i % 4)
        for i, p in enumerate(picks)
    ]
    return MapData(
        nodes=nodes,
        loci=loci,
        path=[MapStep(i, locus.id, locus.x, locus.y) for i, locus in enumerate(loci)],
        crystals=[MapCrystal(f"c{i}", loci[i * 9].x, loci[i * 9].y, "insight " * 20) for i in range(5)],
        halos=[MapHalo(f"r{i % 4}", locus.x, locus.y, 1 + i % 5, 0.5 + i % 5) for i, locus in enumerate(loci[::4])],
        title=f"Synthetic map of {n} nodes",
        subtitle=f"{steps} steps",
    )


def timed(fn: Callable[[], T], repeat: int = 3) -> tuple[float, T]:
    """Median seconds of ``repeat`` calls (at least one), and the last result."""
    times: list[float] = []
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


HTML = """<!doctype html><html><head><meta charset="utf-8"><script src="plotly.min.js"></script></head>
<body><div id="map" style="width:1200px;height:760px"></div></body></html>"""

# Fetch the figure's JSON from a loopback server (what Streamlit sends, minus its websocket), parse it, and draw
# it as Streamlit's chart does (Plotly.react), until Plotly says it has drawn (plotly_afterplot) and two frames
# have been painted. An empty chart first, untimed, so the listener is there before the drawing starts.
DRAW = """async (url) => {
    const gd = document.getElementById('map');
    Plotly.purge(gd);
    await Plotly.newPlot(gd, [], {});
    const started = performance.now();
    const body = await (await fetch(url, {cache: 'no-store'})).text();
    const fetched = performance.now();
    const figure = JSON.parse(body);
    const parsed = performance.now();
    const drawn = new Promise(resolve => gd.once('plotly_afterplot', resolve));
    await Plotly.react(gd, figure.data, figure.layout);
    await drawn;
    await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const done = performance.now();
    return [(fetched - started) / 1000, (parsed - fetched) / 1000, (done - parsed) / 1000];
}"""


class Browser:
    """Debian's Chromium as the browser test drives it (``tests/e2e/harness.py``), on a page that loads the
    plotly.js bundled with the plotly package (offline), and a loopback server for the figures' JSON.
    """

    def __init__(self, stack: contextlib.ExitStack) -> None:
        import plotly

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
        import harness

        self.folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", self.folder)
        (self.folder / "map.html").write_text(HTML, encoding="utf-8")
        handler = partial(QuietHandler, directory=str(self.folder))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        stack.callback(server.server_close)
        stack.callback(server.shutdown)
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self.page = stack.enter_context(harness.chromium(1400, 1000))
        self.page.goto(f"{self.url}/map.html")

    def draw(self, figure_json: str) -> tuple[float, float, float]:
        """Seconds to fetch the figure's JSON, to parse it and to draw it: each the median of three."""
        (self.folder / "figure.json").write_text(figure_json, encoding="utf-8")
        runs = [self.page.evaluate(DRAW, f"{self.url}/figure.json") for _ in range(3)]
        fetched, parsed, drawn = (statistics.median(column) for column in zip(*runs, strict=True))
        return fetched, parsed, drawn


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves the bench's folder without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Nothing: the table is the output."""


def square_png(data: MapData, webgl: bool, size: int) -> bytes:
    """The map as the archive exports it, a ``size``-pixel square PNG."""
    return render_png(session_map(data, webgl=webgl, width=size, height=size), size, size)


def figure_figures(sizes: list[int], browser: bool, png: bool) -> None:
    """Time building and serialising the session map at each size, fetching and drawing it in Chromium, and
    exporting it as a PNG.
    """
    print(f"session map figure (median of 3; compact above {DETAILED_NODES} nodes)")
    print(
        f"{'points':>8} {'build s':>8} {'to_json s':>9} {'JSON MB':>8} {'fetch s':>8} {'parse s':>8} "
        f"{'draw s':>7} {'browser s':>9}" + (f" {'PNG 1024 s':>10} {'PNG 512 s':>9}" if png else "")
    )
    with contextlib.ExitStack() as stack:
        chromium = Browser(stack) if browser else None
        if png:
            render_png(session_map(synthetic(100), webgl=False, width=512, height=512), 512, 512)  # start kaleido
        for n in sizes:
            data = synthetic(n)
            build, figure = timed(partial(session_map, data))
            serialise, spec = timed(figure.to_json)
            fetched, parsed, drawn = chromium.draw(spec) if chromium else (float("nan"),) * 3
            line = (
                f"{n:>8} {build:>8.3f} {serialise:>9.3f} {len(spec) / 1e6:>8.2f} {fetched:>8.3f} {parsed:>8.3f} "
                f"{drawn:>7.3f} {fetched + parsed + drawn:>9.3f}"
            )
            if png:
                webgl = n > WEBGL_ABOVE  # as the archive does
                repeat = 1 if n > 10000 else 3
                png_1024 = timed(partial(square_png, data, webgl, 1024), repeat=repeat)[0]
                png_512 = timed(partial(square_png, data, webgl, 512), repeat=repeat)[0]
                line += f" {png_1024:>10.2f} {png_512:>9.2f}"
            print(line, flush=True)


def placement_figures(db: Path, held_out: float = 0.2, k: int = 10) -> None:
    """Fit on most of the corpus, place the rest: by neighbours (ours) and by UMAP's transform; then refit it all
    and measure how far the aligned refit moves the points.
    """
    from explorer.projection import ProjectionConfig, align_to, exact_knn, fit_layout, place_by_neighbours
    from explorer.store import Database
    from explorer.store import projection as projection_store
    from explorer.umap_loader import import_umap

    with Database(db, embedding_model="local:all-MiniLM-L6-v2", embedding_dim=384).connect() as con:
        ids, vectors = projection_store.all_node_vectors(con)
    n = len(ids)
    rng = np.random.default_rng(0)
    order = rng.permutation(n)
    cut = int(n * (1 - held_out))
    fit_rows, new_rows = np.sort(order[:cut]), np.sort(order[cut:])
    config = ProjectionConfig()
    started = time.perf_counter()
    import_umap()
    import_s = time.perf_counter() - started
    fit_s, fitted_xy = timed(lambda: fit_layout(vectors[fit_rows], config), repeat=1)
    ours_s, ours = timed(
        lambda: place_by_neighbours(
            vectors[fit_rows], fitted_xy, vectors[new_rows], config.place_k, config.place_temperature
        )
    )
    umap = import_umap()
    model = umap.UMAP(
        n_components=2,
        n_neighbors=config.n_neighbors,
        min_dist=config.min_dist,
        metric="cosine",
        random_state=config.seed,
    )
    refit_s = timed(lambda: model.fit(vectors[fit_rows]), repeat=1)[0]
    first_transform_s, theirs = timed(lambda: model.transform(vectors[new_rows]), repeat=1)
    transform_s, again = timed(lambda: model.transform(vectors[new_rows]))
    model_xy = model.embedding_

    def preserved(layout_fit: np.ndarray, placed: np.ndarray) -> float:
        """Share of each new point's k nearest fitted neighbours (cosine, 384-d) that are also
        among its k nearest fitted points on the map.
        """
        high = np.argsort(-(vectors[new_rows] @ vectors[fit_rows].T), axis=1)[:, :k]
        low = np.argsort(((placed[:, None, :] - layout_fit[None, :, :]) ** 2).sum(-1), axis=1)[:, :k]
        return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(high, low, strict=True)]))

    fitted_knn = exact_knn(vectors[fit_rows], k + 1)[0][:, 1:]
    map_knn = np.argsort(((fitted_xy[:, None, :] - fitted_xy[None, :, :]) ** 2).sum(-1), axis=1)[:, 1 : k + 1]
    fit_quality = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(fitted_knn, map_knn, strict=True)]))
    print(
        f"\nplacing new points on a fitted map ({db.name}: {cut} nodes fitted, {len(new_rows)} placed; "
        f"UMAP import {import_s:.1f} s, our fit {fit_s:.1f} s)"
    )
    print(f"{'method':<34} {'seconds':>8} {'kNN kept@10':>11} {'deterministic':>13}")
    print(f"{'fitted points themselves':<34} {'':>8} {fit_quality:>11.3f} {'':>13}")
    print(f"{'neighbour placement (ours)':<34} {ours_s:>8.4f} {preserved(fitted_xy, ours):>11.3f} {'yes':>13}")
    print(
        f"{'UMAP transform, first call':<34} {first_transform_s:>8.2f} {preserved(model_xy, theirs):>11.3f} "
        f"{str(bool(np.allclose(theirs, again))).lower():>13}"
    )
    print(f"{'UMAP transform, warm':<34} {transform_s:>8.3f}")
    print(f"(UMAP's own fit with its search index, needed for transform: {refit_s:.1f} s)")

    # The refit that follows: every node fitted afresh, aligned to the map the people saw (fitted and placed).
    old_xy = np.empty((n, 2))
    old_xy[fit_rows], old_xy[new_rows] = fitted_xy, ours
    refit_xy = fit_layout(vectors, config)
    rows = [str(i) for i in range(n)]
    _, (aligned, unaligned) = align_to(rows, refit_xy, rows, old_xy)
    width = float(np.ptp(old_xy, axis=0).max())
    print(
        f"\nrefit of all {n} nodes, aligned to that map (Procrustes): old points moved {aligned:.2f} on average "
        f"({aligned / width:.1%} of the map's width), {unaligned:.2f} as fitted ({unaligned / width:.1%})"
    )


def page_figures(db: Path) -> None:
    """Server-side time of the Map page's script on a real database (AppTest, no browser)."""
    from streamlit.testing.v1 import AppTest

    os.environ["EXPLORER_DB"] = str(db)
    app = Path(__file__).resolve().parents[1] / "app.py"
    at = AppTest.from_file(str(app), default_timeout=300)
    at.run()
    at.switch_page("pages/map.py")
    first = timed(lambda: at.run(), repeat=1)[0]
    warm = timed(lambda: at.run(), repeat=3)[0]
    spec = at.get("plotly_chart")[0].proto.spec if at.get("plotly_chart") else ""
    print(
        f"\nMap page script ({db.name}): first run {first:.2f} s, warm {warm:.2f} s; "
        f"figure JSON {len(spec) / 1e6:.1f} MB"
    )


def main() -> None:
    """The figure benches the options ask for."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,50000,100000")
    parser.add_argument("--db", type=Path, help="a database with a corpus (placement and Map page figures)")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-png", action="store_true")
    parser.add_argument("--no-placement", action="store_true")
    args = parser.parse_args()
    figure_figures([int(s) for s in args.sizes.split(",")], browser=not args.no_browser, png=not args.no_png)
    if args.db:
        if not args.no_placement:
            placement_figures(args.db)
        page_figures(args.db)


if __name__ == "__main__":
    main()
