"""Crystals: the review queue. Approve, reject or archive each insight with notes, after reading its
evidence: residues → loci → source chunks.
"""

from __future__ import annotations

import math

import streamlit as st

from explorer.records.wander import Crystal, ReviewState
from explorer.wander import service as wander
from explorer.wander.guards import review_allowed
from pages import common, untrusted

PAGE_SIZE = 10
STATUS_FILTERS: dict[str, ReviewState | None] = {
    "awaiting review": ReviewState.PENDING,
    "approved": ReviewState.APPROVED,
    "rejected": ReviewState.REJECTED,
    "archived": ReviewState.ARCHIVED,
    "all": None,
}
STATE_LABELS = {state: label for label, state in STATUS_FILTERS.items() if state is not None}

rt = common.runtime()
st.title("Crystals")
common.offline_notice(rt)

sessions = {s.id: s for s in wander.list_sessions(rt, limit=500)}
f1, f2, f3, f4 = st.columns([2, 2, 3, 2])
status = f1.selectbox("Status", list(STATUS_FILTERS), key="crystal_status")
min_confidence = f2.slider("Min confidence", 0.0, 1.0, 0.0, 0.05, key="crystal_confidence")
session_id = f3.selectbox(
    "Session",
    [None, *sessions],
    key="crystal_session",
    format_func=lambda sid: "all sessions" if sid is None else common.session_label(sessions[sid]),
)
reviewer = f4.text_input(
    "Reviewer",
    value=st.session_state.get("reviewer", ""),
    key="crystal_reviewer",
    help="Stored with each decision (default: “human”).",
)
st.session_state["reviewer"] = reviewer

crystals = [
    c
    for c in wander.list_crystals(rt, min_confidence=min_confidence or None, session_id=session_id)
    if STATUS_FILTERS[status] in (None, c.review_state)
]
crystals.sort(key=lambda c: (-c.confidence, c.id))
pending = sum(c.review_state is ReviewState.PENDING for c in wander.list_crystals(rt))
st.caption(f"{len(crystals)} crystal(s) shown · {pending} awaiting review in all sessions")
if not crystals:
    st.info(
        "No crystal matches. Crystals form when a confirmed resonance meets an interesting locus; "
        "run sessions on the Sessions page.",
        icon=":material/diamond:",
    )
    st.stop()

pages_count = max(1, math.ceil(len(crystals) / PAGE_SIZE))
page_number = st.pagination(pages_count, key="crystal_page") if pages_count > 1 else 1


def review(crystal: Crystal, decision: str, notes: str) -> None:
    wander.review_crystal(rt, crystal.id, decision, notes=notes.strip() or None, reviewer=reviewer.strip() or None)
    st.toast(f"Crystal {decision}d" if decision != "reject" else "Crystal rejected", icon=":material/check:")


for crystal in crystals[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]:
    with st.container(border=True, key=f"crystal_{crystal.id}"):
        state = STATE_LABELS[crystal.review_state]
        origin = sessions[crystal.session_id].name if crystal.session_id in sessions else "deleted session"
        st.markdown(
            f"**{state.capitalize()}** · confidence {crystal.confidence:.2f} · actionability "
            f"{crystal.actionability:.2f} · domains {untrusted.md(', '.join(crystal.domains) or '—')} · "
            f"{untrusted.md(origin)}"
        )
        untrusted.text(None, crystal.insight)
        if crystal.connects:
            bridged = " ↔ ".join(
                f"{c.get('title') or c.get('name') or '?'} ({c.get('domain') or '—'})" for c in crystal.connects
            )
            untrusted.text("connects", bridged)
        if crystal.validated_by or crystal.human_approved_by:
            who = []
            if crystal.validated_by:
                who.append(f"validated by {crystal.validated_by}")
            if crystal.human_approved_by:
                when = crystal.human_approved_at.strftime("%Y-%m-%d %H:%M") if crystal.human_approved_at else ""
                who.append(
                    f"{'approved' if crystal.human_approved else 'reviewed'} by {crystal.human_approved_by} {when}"
                )
            st.caption(untrusted.md(" · ".join(who)))
        if crystal.validation_notes:
            untrusted.text("notes", crystal.validation_notes)
        notes = st.text_input("Notes", key=f"notes_{crystal.id}", placeholder="why (stored with the decision)")
        b1, b2, b3, _ = st.columns([1, 1, 1, 3])
        if b1.button(
            "Approve",
            key=f"approve_{crystal.id}",
            icon=":material/check:",
            type="primary",
            disabled=not review_allowed(crystal.review_state, ReviewState.APPROVED),
        ):
            review(crystal, "approve", notes)
            st.rerun()
        if b2.button(
            "Reject",
            key=f"reject_{crystal.id}",
            icon=":material/close:",
            disabled=not review_allowed(crystal.review_state, ReviewState.REJECTED),
        ):
            review(crystal, "reject", notes)
            st.rerun()
        if b3.button(
            "Archive",
            key=f"archive_{crystal.id}",
            icon=":material/archive:",
            disabled=not review_allowed(crystal.review_state, ReviewState.ARCHIVED),
        ):
            review(crystal, "archive", notes)
            st.rerun()
        with st.expander("Evidence: residues → loci → source chunks", icon=":material/account_tree:"):
            evidence = wander.crystal_evidence(rt, crystal.id)
            loci = {locus.id: locus for locus in evidence.loci}
            st.markdown(f"**Residues** ({len(evidence.residues)})")
            for residue in evidence.residues:
                locus = loci.get(residue.to_locus_id)
                st.caption(
                    f"at “{untrusted.md(locus.concept[:100] if locus else residue.to_locus_id)}” · "
                    f"themes {untrusted.md(', '.join(residue.themes[:5]))} · interest "
                    f"{residue.interestingness or 0:.2f} · by {untrusted.md(residue.model_used)}"
                )
                for label in ("connection", "possibility"):
                    untrusted.text(label, getattr(residue, label))
            st.markdown(f"**Loci** ({len(evidence.loci)})")
            for locus in evidence.loci:
                untrusted.text(
                    f"{locus.source_type} · {', '.join(locus.domains) or '—'} · visits {locus.visit_count}",
                    " ".join(locus.concept.split())[:300],
                )
            st.markdown(f"**Source chunks** ({len(evidence.chunks)})")
            for chunk in evidence.chunks:
                untrusted.text(f"{chunk.domain or '—'} · {chunk.year or '—'} · chunk {chunk.chunk_index}", chunk.text)
