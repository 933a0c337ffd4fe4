"""Resonances: the themes that keep coming back, their strength (decaying 10% a day) and how it grew by step."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.figures.charts import strength_by_step
from explorer.views import strength_history
from explorer.wander import service as wander
from pages import common, untrusted

STATUSES = ["candidate", "confirmed", "invalidated"]

rt = common.runtime()
st.title("Resonances")
common.offline_notice(rt)

left, right = st.columns([3, 2])
with left:
    session = common.pick_session(rt, "resonance_session", allow_none="all sessions")
with right:
    statuses = st.multiselect("Status", STATUSES, default=["candidate", "confirmed"], key="resonance_status")

resonances = [
    r
    for r in wander.list_resonances(rt, session_id=session.id if session else None)
    if r.status in (statuses or STATUSES)
]
resonances.sort(key=lambda r: -r.current_strength())
if session is not None:
    history = strength_history(rt, session.id)
    if history:
        st.plotly_chart(strength_by_step(history), key="strength_chart")
if not resonances:
    st.info(
        "No resonance matches. Resonances appear as a session's reflections repeat themes.",
        icon=":material/graphic_eq:",
    )
    st.stop()

table = pd.DataFrame(
    {
        "themes": [", ".join(r.themes[:6]) for r in resonances],
        "status": [r.status for r in resonances],
        "occurrences": [r.occurrences for r in resonances],
        # two decimals: a strength read minutes after it was stored showed "3.999" beside "4", as if they differed
        "strength now": [round(r.current_strength(), 2) for r in resonances],
        "at last reinforcement": [round(r.strength, 2) for r in resonances],
        "last reinforced": [r.last_reinforced_at for r in resonances],
        "scope": ["cross-session" if r.session_id is None else "session" for r in resonances],
        "id": [r.id for r in resonances],
    }
)
event = st.dataframe(table, hide_index=True, on_select="rerun", selection_mode="single-row", key="resonance_table")
rows = event.selection.rows if event and event.selection else []
by_id = {r.id: r for r in resonances}
chosen = common.linked_selectbox(
    "Resonance",
    [r.id for r in resonances],
    key="resonance_pick",
    param="resonance",
    what="resonance",
    clicked=resonances[rows[0]].id if rows else None,
    format_func=lambda rid: f"{', '.join(by_id[rid].themes[:4])} · {by_id[rid].status}",
)
resonance = by_id[chosen]
with st.container(border=True):
    untrusted.text("themes", ", ".join(resonance.themes))
    st.caption(
        f"{resonance.occurrences} occurrences · {len(resonance.supporting_residue_ids)} supporting residues · "
        f"decays {resonance.decay_rate:.0%} a day"
    )
    if resonance.status != "invalidated" and st.button("Invalidate", key="invalidate", icon=":material/block:"):
        wander.invalidate_resonance(rt, resonance.id)
        st.rerun()
