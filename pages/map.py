"""Map: the corpus and a session's walk on the stable UMAP projection. Select points to see what they hold."""

from __future__ import annotations

import streamlit as st

from explorer import projection
from explorer.figures.map import LAYERS, selected_items, session_map
from explorer.text import shorten
from explorer.views import map_data, node_provenance
from explorer.wander import service as wander
from explorer.wording import locus_kind, node_kind, note_link, way
from pages import common, untrusted

MAX_SHOWN = 20  # selected items shown (and named in the URL)


def review_link(crystal_id: str) -> None:
    """A link to the crystal on the Crystals page's review, with its evidence and history."""
    st.page_link(
        "pages/crystals.py",
        label="Review it, with its evidence",
        icon=":material/diamond:",
        query_params={"view": "Review", "crystal": crystal_id},
    )


rt = common.runtime()
st.title("Map")
common.offline_notice(rt)

status = projection.projection_status(rt)
if not status.fitted:
    if sum(status.missing.values()) == 0:
        st.info("Nothing to draw yet: add documents on the Corpus page.", icon=":material/upload:")
        st.stop()
    st.info(
        "The map has not been fitted yet. It is fitted once (UMAP over every node), then new points are placed "
        "on it without refitting.",
        icon=":material/scatter_plot:",
    )
    if st.button("Fit the map now", type="primary", key="fit"):
        with st.spinner("Fitting the map (the first time in a process, UMAP compiles: up to a minute)…"):
            report = projection.update_projection(rt)
        st.success(f"Fitted {report.fitted} nodes in {report.seconds:.0f} s.")
        st.rerun()
    st.stop()

session = common.pick_session(rt, "map_session", allow_none="(corpus only)")
layers = common.layer_switches(LAYERS, "map_layers")

view = wander.session_view(rt, session.id) if session else None
if session:
    common.checkpoint_banner(session)
projection.place_new(rt)  # loci and nodes made since the last visit join the map first
data = map_data(rt, session.id if session else None, view=view, clusters="clusters" in layers)
# What the URL names is ringed: the step (?step=N) and a crystal among the points (?point=crystal:ID).
linked_step = st.query_params.get("step", "")
linked_crystal = next((p.split(":", 1)[1] for p in st.query_params.get_all("point") if p.startswith("crystal:")), None)
whole = session is None or st.toggle(
    "Whole corpus", key="map_whole", help="Open the map on the whole corpus, not framed on the session's walk."
)
figure = session_map(
    data,
    layers=layers,
    height=760,
    framed=not whole,
    selected_step=int(linked_step) if linked_step.isdigit() else None,
    selected_crystal=linked_crystal,
)

event = st.plotly_chart(
    figure,
    on_select="rerun",
    selection_mode=("points", "box", "lasso"),
    key="map_chart",
    config={"scrollZoom": True, "displaylogo": False},
)

caption = f"Map version {status.version}: {status.fitted_nodes} nodes fitted, {status.placed_nodes} placed since."
if status.stale:
    caption += " Many nodes arrived after the fit: a refit would draw the map around them."
st.caption(
    caption + " Colour: domain · size: visits · ◆ dream node · ★ crystal · halo: resonance (fades with decay) · "
    "tinted outline: a consolidation pattern's experiences, placed beside the corpus they resemble."
)

with st.expander("Refit the map", icon=":material/refresh:"):
    st.caption("Fits UMAP again over every node. Every point moves, the version goes up; sessions keep their data.")
    if st.button("Refit now", key="refit"):
        with st.spinner("Refitting…"):
            report = projection.update_projection(rt, refit=True)
        st.success(f"Map version {report.version}: fitted {report.fitted} nodes in {report.seconds:.0f} s.")
        st.rerun()

# -- what is selected --------------------------------------------------------------------

# Clicked points are also in the URL (?point=kind:id, repeated), so a link or a refresh shows the same selection.
clicked = selected_items(event.selection.points if event and event.selection else [], data.nodes)
if "map_clicked" not in st.session_state:
    st.session_state["map_clicked"] = clicked  # a first visit: what the URL names stands
elif clicked != st.session_state["map_clicked"]:
    st.session_state["map_clicked"] = clicked
    st.query_params["point"] = [f"{kind}:{item_id}" for kind, item_id in clicked[:MAX_SHOWN]]
selected = [tuple(value.split(":", 1)) for value in st.query_params.get_all("point") if ":" in value]
if view is not None:
    by_step = {t.step_number: t.to_locus_id for t in sorted(view.trace, key=lambda t: t.step_number)}
    loci = {locus.id: locus for locus in view.loci}
    step = common.linked_selectbox(
        "Or inspect a step of the path",
        [None, *by_step],
        key="map_step",
        param="step",
        what="step",
        format_func=lambda number: (
            "—"
            if number is None
            else f"step {number} · "
            + (shorten(loci[by_step[number]].concept, chars=90) if by_step[number] in loci else by_step[number])
        ),
    )
    if step is not None:
        selected = [("locus", by_step[step]), *selected]

if not selected:
    st.caption("Click a point, or draw a box or lasso, to see what it holds.")
    st.stop()

st.subheader(f"Selected ({len(selected)})")
residues_at: dict[str, list] = {}
if view is not None:
    for residue in view.residues:
        residues_at.setdefault(residue.to_locus_id, []).append(residue)
crystals = {c.id: c for c in view.crystals} if view else {}
resonances = {r.id: r for r in view.resonances} if view else {}
loci = {locus.id: locus for locus in view.loci} if view else {}

for kind, item_id in list(dict.fromkeys(selected))[:MAX_SHOWN]:
    with st.container(border=True):
        if kind == "node":
            found = node_provenance(rt, item_id)
            if found is None:
                continue
            st.markdown(
                f"**{node_kind(found.node.type)}** · {untrusted.md(found.node.domain or '—')} · "
                f"{found.node.year or '—'}"
                + (f" · from *{untrusted.md(found.document.title)}*" if found.document else "")
                + (f", section “{untrusted.md(found.node.section)}”" if found.node.section else "")
            )
            untrusted.text(None, found.node.text)
            if found.parents:
                st.caption("Made from: " + untrusted.md("; ".join(f"{p.type} {p.id[:8]}" for p in found.parents)))
            if found.links:  # a wikilink the person wrote reads apart from a mention reading found
                st.caption(untrusted.md("; ".join(f"{note_link(k.kind, k.outgoing)} {k.title}" for k in found.links)))
        elif kind == "locus" and item_id in loci:
            locus = loci[item_id]
            st.markdown(
                f"**Locus** ({untrusted.md(locus_kind(locus.source_type))}, "
                f"found by {untrusted.md(way(locus.strategy))}) · visits "
                f"{locus.visit_count} · domains {untrusted.md(', '.join(locus.domains) or '—')} · interest "
                f"{locus.interestingness:.2f} · novelty {locus.novelty_score:.2f}"
            )
            untrusted.text(None, locus.concept)
            for residue in residues_at.get(item_id, []):
                with st.expander(
                    f"Residue · themes: {untrusted.md(', '.join(residue.themes[:5]))} · by "
                    f"{untrusted.md(residue.model_used)}"
                ):
                    for label in ("connection", "tension", "bridge", "surprise", "possibility"):
                        untrusted.text(label, getattr(residue, label))
            for crystal in (c for c in crystals.values() if c.source_locus_id == item_id):
                # a crystal sits on its locus: clicking the star may pick either, so show both
                st.markdown(f"**Crystal formed here** · {crystal.review_state} · confidence {crystal.confidence:.2f}")
                untrusted.text(None, crystal.insight)
                review_link(crystal.id)
            if locus.node_id:
                found = node_provenance(rt, locus.node_id)
                if found is not None:
                    st.caption(
                        f"Stands on a corpus node ({node_kind(found.node.type)})"
                        + (f" from *{untrusted.md(found.document.title)}*" if found.document else "")
                    )
        elif kind == "crystal" and item_id in crystals:
            crystal = crystals[item_id]
            st.markdown(f"**Crystal** · {crystal.review_state} · confidence {crystal.confidence:.2f}")
            untrusted.text(None, crystal.insight)
            review_link(crystal.id)
        elif kind == "resonance" and item_id in resonances:
            resonance = resonances[item_id]
            st.markdown(
                f"**Resonance** · {resonance.status} · {resonance.occurrences} occurrences · strength "
                f"{resonance.strength:.2f} (now {resonance.current_strength():.2f})"
            )
            untrusted.text("themes", ", ".join(resonance.themes))
