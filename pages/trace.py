"""Trace: every step of a session's walk, why it went there, what it cost, and what dwelling left behind."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.figures.charts import scores_by_step
from explorer.text import shorten
from explorer.wander import service as wander
from explorer.wording import counted, way
from pages import common, untrusted

rt = common.runtime()
st.title("Trace")
common.offline_notice(rt)

session = common.pick_session(rt, "trace_session")
if session is None:
    st.stop()
common.checkpoint_banner(session)
view = wander.session_view(rt, session.id)
trace = sorted(view.trace, key=lambda t: t.step_number)
if not trace:
    st.info("No step yet: run the session on the Sessions page.", icon=":material/timeline:")
    st.stop()

loci = {locus.id: locus for locus in view.loci}


def concept(locus_id: str | None) -> str:
    locus = loci.get(locus_id or "")
    return shorten(locus.concept, chars=90) if locus else "—"


st.plotly_chart(scores_by_step([t.step_number for t in trace], [t.selection_scores for t in trace]), key="scores")
table = pd.DataFrame(
    {
        "step": [t.step_number for t in trace],
        "found by": [way(t.strategy) for t in trace],
        "from": [concept(t.from_locus_id) for t in trace],
        "to": [concept(t.to_locus_id) for t in trace],
        "score": [t.selection_scores.get("score") for t in trace],
        "considered": [t.adjacencies_considered for t in trace],
        "drift": [t.drift for t in trace],
        "model": [t.model_used for t in trace],
        "cost (¢)": [t.cost_cents for t in trace],
        "failures": [t.failures for t in trace],
    }
)
event = st.dataframe(table, hide_index=True, on_select="rerun", selection_mode="single-row", key="trace_table")
rows = event.selection.rows if event and event.selection else []
numbers = [t.step_number for t in trace]
number = common.linked_selectbox(
    "Step",
    numbers,
    key="trace_step",
    param="step",
    what="step",
    clicked=numbers[rows[0]] if rows else None,
    default=numbers[-1],
)
chosen = next(t for t in trace if t.step_number == number)
residue = next((r for r in view.residues if r.trace_id == chosen.id), None)
with st.container(border=True):
    st.markdown(
        f"**Step {chosen.step_number}** · found by {untrusted.md(way(chosen.strategy))} · "
        f"{counted(chosen.adjacencies_considered, 'place')} considered · model {untrusted.md(chosen.model_used)}"
    )
    untrusted.text("from", concept(chosen.from_locus_id))
    untrusted.text("to", loci[chosen.to_locus_id].concept if chosen.to_locus_id in loci else "—")
    untrusted.text("why this step", chosen.selection_reason)
    if residue is not None:
        st.markdown(
            f"**Residue** · themes {untrusted.md(', '.join(residue.themes))} · interest "
            f"{residue.interestingness or 0:.2f} · actionability {residue.actionability or 0:.2f}"
        )
        for label in ("connection", "tension", "bridge", "surprise", "possibility"):
            untrusted.text(label, getattr(residue, label))
