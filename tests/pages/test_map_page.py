"""The Map page: the figure's layers, layer toggles, inspecting a step, and fitting an unfitted map."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from explorer import projection
from explorer.reading.ingest import ingest_paths
from explorer.store import corpus
from explorer.wander import service as wander

VAULT = Path(__file__).resolve().parents[1] / "data" / "vault"


def figure(at) -> dict:
    (chart,) = [c for c in at.get("plotly_chart")]
    return json.loads(chart.proto.spec)


def traces(spec: dict) -> dict[str, dict]:
    return {t.get("name"): t for t in spec["data"]}


def test_the_map_draws_the_session_on_the_stored_projection(open_app, app_runtime, page_text) -> None:
    (session,) = wander.list_sessions(app_runtime)
    view = wander.session_view(app_runtime, session.id)
    at = open_app("map")
    assert "Offline provider" in page_text(at)
    spec = figure(at)
    drawn = traces(spec)
    assert spec["layout"]["title"]["text"].startswith(f"<b>{session.name}</b>")
    # the path: one vertex per step plus the start (a short walk: one line), arrows along it that follow its moves
    path = drawn["trace (path)"]
    assert len(path["x"]) == len(view.trace) + 1
    direction = drawn["direction"]
    assert direction["marker"]["angleref"] == "previous" and direction["marker"]["symbol"] == "arrow"
    assert any(size > 0 for size in direction["marker"]["size"])
    points = projection.load_points(app_runtime)
    start = points[("locus", view.trace[0].from_locus_id)]
    assert (path["x"][0], path["y"][0]) == (start.x, start.y)
    # crystals as stars at their stored points, loci sized by visits, halos for live resonances
    crystal_trace = drawn["crystal"]
    assert crystal_trace["marker"]["symbol"] == "star"
    assert {c[1] for c in crystal_trace["customdata"]} == {c.id for c in view.crystals if c.status != "invalidated"}
    loci = drawn["locus (size: visits)"]
    assert len(loci["x"]) == len(view.loci)
    sizes = dict(zip((c[1] for c in loci["customdata"]), loci["marker"]["size"], strict=True))
    most = max(view.loci, key=lambda locus: locus.visit_count)
    least = min(view.loci, key=lambda locus: locus.visit_count)
    assert most.visit_count > least.visit_count and sizes[most.id] > sizes[least.id]
    assert "resonance halo" in drawn
    # corpus nodes, one trace per domain, each point naming its node
    node_ids = {c[1] for t in spec["data"] for c in t.get("customdata", []) if c[0] == "node"}
    assert len(node_ids) == projection.projection_status(app_runtime).fitted_nodes
    assert "python" in drawn


def test_the_map_opens_on_the_walk_and_rings_what_the_link_names(open_app, app_runtime) -> None:
    (session,) = wander.list_sessions(app_runtime)
    view = wander.session_view(app_runtime, session.id)
    crystal = next(c for c in view.crystals if c.status != "invalidated")
    at = open_app(f"map?step=2&point=crystal:{crystal.id}")
    spec = figure(at)
    path = traces(spec)["trace (path)"]
    (x0, x1), (y0, y1) = spec["layout"]["xaxis"]["range"], spec["layout"]["yaxis"]["range"]
    assert all(x0 < x < x1 for x in path["x"]) and all(y0 < y < y1 for y in path["y"])
    points = projection.load_points(app_runtime)
    ring = traces(spec)["selected"]
    step_two = next(t for t in view.trace if t.step_number == 2)
    place = points[("locus", step_two.to_locus_id)]
    stored = points[("crystal", crystal.id)]
    assert list(zip(ring["x"], ring["y"], strict=True)) == [(place.x, place.y), (stored.x, stored.y)]
    assert any("2" in label.split(" · ") for label in traces(spec)["step numbers"]["text"])  # labelled, maybe joined
    at.toggle(key="map_whole").set_value(True).run()
    assert "range" not in figure(at)["layout"]["xaxis"]  # the whole corpus, as before


def test_layers_can_be_switched_off(open_app) -> None:
    at = open_app("map")
    at.pills(key="map_layers").set_value(["corpus", "path"]).run()
    names = set(traces(figure(at)))
    assert "trace (path)" in names and "python" in names
    assert not names & {"crystal", "resonance halo", "locus (size: visits)"}


def test_inspecting_a_step_shows_its_locus_and_residue(open_app, app_runtime) -> None:
    (session,) = wander.list_sessions(app_runtime)
    view = wander.session_view(app_runtime, session.id)
    step = max(view.trace, key=lambda t: t.step_number)
    residue = next(r for r in view.residues if r.trace_id == step.id)
    locus = next(candidate for candidate in view.loci if candidate.id == step.to_locus_id)
    at = open_app("map")
    at.selectbox(key="map_step").select(step.step_number).run()
    shown = [t.value for t in at.text]
    assert locus.concept in shown and residue.connection in shown
    assert any(e.label.startswith("Residue · themes") for e in at.expander)


def test_an_unfitted_map_is_fitted_on_request(open_app, corpus_template, app_db, app_runtime, page_text) -> None:
    shutil.copy(corpus_template, app_db)  # the corpus alone: no session, no projection
    at = open_app("map")
    assert "has not been fitted yet" in page_text(at) and not at.get("plotly_chart")
    at.button(key="fit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    status = projection.projection_status(app_runtime)
    assert status.fitted and status.missing["node"] == 0
    assert at.get("plotly_chart")


def test_a_nodes_detail_says_which_notes_it_links_and_mentions(open_app, app_runtime, page_text) -> None:
    assert ingest_paths(app_runtime, [VAULT]).errors == []
    with app_runtime.db.connect() as con:
        (gc,) = [d for d in corpus.list_documents(con) if d.title == "Garbage collection"]
        (first,) = [
            n for n in corpus.list_nodes(con, types=["raw_chunk"]) if n.document_id == gc.id and n.chunk_index == 0
        ]
    said = page_text(open_app(f"map?point=node:{first.id}"))
    assert "links in the vault to Reference counting" in said  # the wikilink the person wrote
    assert "mentioned in Reference counting" in said  # and what reading found: its words name an alias
