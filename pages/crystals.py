"""Crystals: the review queue, opened first while crystals wait. **List** pages through them, each with its
evidence; **Review** shows one crystal at a time, decided by one key each (A approve, X reject, S skip, Backspace
undo) without reloading the page, with the crystal in the URL (``?view=Review&crystal=ID``) and its history, any
entry of which can be reverted; **Bulk** decides everything a filter takes, after a count. Every decision goes
through the engine's review state machine and into its review log.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import streamlit as st

from explorer.errors import ExplorerError
from explorer.notes import service as notes_export
from explorer.records.wander import REVIEW_OUTCOMES, Crystal, Review, ReviewDecision, ReviewFilter, ReviewState
from explorer.text import shorten
from explorer.wander import review as reviewing
from explorer.wander import service as wander
from explorer.wander.guards import review_allowed
from explorer.wording import SOURCE_RETIRED, counted, locus_kind
from pages import clicks, common, signin, untrusted

PAGE_SIZE = 10
STATUS_FILTERS: dict[str, ReviewState | None] = {
    "awaiting review": ReviewState.PENDING,
    "approved": ReviewState.APPROVED,
    "rejected": ReviewState.REJECTED,
    "archived": ReviewState.ARCHIVED,
    "all": None,
}
STATE_LABELS = {state: label for label, state in STATUS_FILTERS.items() if state is not None}
VIEWS = ("List", "Review", "Bulk")
# One key per decision, as annotation tools have it; Streamlit keeps C and R for itself (clear cache, rerun).
KEYS = {"approve": "A", "reject": "X", "skip": "S", "undo": "Backspace"}
SKIPPED, DONE, FLASH = "review_skipped", "review_done", "review_flash"  # this visitor's queue state
ICONS: dict[ReviewDecision, str] = {
    "approve": ":material/check:",
    "reject": ":material/close:",
    "archive": ":material/archive:",
}

rt = common.runtime()
st.title("Crystals")
common.offline_notice(rt)

sessions = {s.id: s for s in wander.list_sessions(rt, limit=500)}
f1, f2, f3 = st.columns([3, 2, 2])
session_id = f1.selectbox(
    "Session",
    [None, *sessions],
    key="crystal_session",
    format_func=lambda sid: "all sessions" if sid is None else common.session_label(sessions[sid]),
)
min_confidence = f2.slider("Min confidence", 0.0, 1.0, 0.0, 0.05, key="crystal_confidence")
signed_in = signin.person()
if signed_in:  # a deployment that names its people logs each review under the name its reviewer signed in as
    st.session_state["crystal_reviewer"] = signed_in
    f3.text_input("Reviewer", key="crystal_reviewer", disabled=True, help="You signed in as this name.")
else:
    reviewer = f3.text_input(
        "Reviewer",
        value=st.session_state.get("reviewer", ""),
        key="crystal_reviewer",
        help="Stored with each decision (default: “human”).",
    )
    st.session_state["reviewer"] = reviewer


def who() -> str | None:
    """Who a decision is logged under: the signed-in name, or the one typed (also read by the clicks' callbacks)."""
    return signin.reviewer(str(st.session_state.get("crystal_reviewer") or "").strip() or None)


def origin(crystal: Crystal) -> str:
    return sessions[crystal.session_id].name if crystal.session_id in sessions else "deleted session"


def describe(crystal: Crystal) -> None:
    """A crystal's state, scores, insight, the two sources it connects and who reviewed it (model text as text)."""
    st.markdown(
        f"**{STATE_LABELS[crystal.review_state].capitalize()}** · confidence {crystal.confidence:.2f} · "
        f"actionability {crystal.actionability:.2f} · domains {untrusted.md(', '.join(crystal.domains) or '—')} · "
        f"{untrusted.md(origin(crystal))}"
    )
    untrusted.text(None, crystal.insight)
    if crystal.connects:
        bridged = " ↔ ".join(
            f"{c.get('title') or c.get('name') or '?'} ({c.get('domain') or '—'}"
            + (f"; {SOURCE_RETIRED[c['retired']]})" if c.get("retired") else ")")
            for c in crystal.connects
        )
        untrusted.text("connects", bridged)
    if crystal.validated_by or crystal.human_approved_by:
        said = []
        if crystal.validated_by:
            said.append(f"validated by {crystal.validated_by}")
        if crystal.human_approved_by:
            when = crystal.human_approved_at.strftime("%Y-%m-%d %H:%M") if crystal.human_approved_at else ""
            said.append(f"{'approved' if crystal.human_approved else 'reviewed'} by {crystal.human_approved_by} {when}")
        st.caption(untrusted.md(" · ".join(said)))
    if crystal.validation_notes:
        untrusted.text("notes", crystal.validation_notes)


def evidence(crystal: Crystal) -> None:
    """What supports a crystal: residues → loci → source chunks."""
    found = wander.crystal_evidence(rt, crystal.id)
    loci = {locus.id: locus for locus in found.loci}
    st.markdown(f"**Residues** ({len(found.residues)})")
    for residue in found.residues:
        locus = loci.get(residue.to_locus_id)
        st.caption(
            f"at “{untrusted.md(shorten(locus.concept, chars=100) if locus else residue.to_locus_id)}” · "
            f"themes {untrusted.md(', '.join(residue.themes[:5]))} · interest "
            f"{residue.interestingness or 0:.2f} · by {untrusted.md(residue.model_used)}"
        )
        for label in ("connection", "possibility"):
            untrusted.text(label, getattr(residue, label))
    st.markdown(f"**Loci** ({len(found.loci)})")
    for locus in found.loci:
        untrusted.text(
            f"{locus_kind(locus.source_type)} · {', '.join(locus.domains) or '—'} · visits {locus.visit_count}",
            shorten(locus.concept, chars=300),
        )
    st.markdown(f"**Source chunks** ({len(found.chunks)})")
    for chunk in found.chunks:
        retired = found.retired.get(chunk.document_id or "")
        mark = f" · {SOURCE_RETIRED[retired]}" if retired else ""
        section = f" · {chunk.section}" if chunk.section else ""  # the heading it stands under
        untrusted.text(
            f"{chunk.domain or '—'} · {chunk.year or '—'} · chunk {chunk.chunk_index}{section}{mark}", chunk.text
        )


# -- List: every crystal a filter takes, a page at a time ---------------------------------------------------------


def list_view() -> None:
    status = st.selectbox("Status", list(STATUS_FILTERS), key="crystal_status")
    in_scope = wander.list_crystals(rt, min_confidence=min_confidence or None, session_id=session_id)
    crystals = [c for c in in_scope if STATUS_FILTERS[status] in (None, c.review_state)]
    crystals.sort(key=lambda c: (-c.confidence, c.id))
    st.caption(f"{counted(len(crystals), 'crystal')} shown · {awaiting} awaiting review in all sessions")
    export_to_notes()
    if not crystals:
        st.info(hidden_by_filters(status, in_scope), icon=":material/diamond:")
        return
    pages_count = max(1, math.ceil(len(crystals) / PAGE_SIZE))
    page_number = st.pagination(pages_count, key="crystal_page") if pages_count > 1 else 1
    for crystal in crystals[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]:
        with st.container(border=True, key=f"crystal_{crystal.id}"):
            describe(crystal)
            notes = st.text_input("Notes", key=f"notes_{crystal.id}", placeholder="why (stored with the decision)")
            columns = st.columns([1, 1, 1, 3])
            for column, (decision, target) in zip(columns, REVIEW_OUTCOMES.items(), strict=False):
                if column.button(
                    decision.capitalize(),
                    key=f"{decision}_{crystal.id}",
                    icon=ICONS[decision],
                    type="primary" if decision == "approve" else "secondary",
                    disabled=not review_allowed(crystal.review_state, target),
                ):
                    reviewing.review_crystal(rt, crystal.id, decision, notes=notes.strip() or None, reviewer=who())
                    st.toast(f"Crystal {STATE_LABELS[target]}", icon=":material/check:")
                    st.rerun()
            with st.expander("Evidence: residues → loci → source chunks", icon=":material/account_tree:"):
                evidence(crystal)


def export_to_notes() -> None:
    """The approved crystals (of the session above, when one is chosen) and the kept dreams as Markdown notes in a
    folder of the person's vault, through the engine's export (``explorer export --notes`` does the same).
    """
    with st.expander("Export to notes", icon=":material/note_stack:"):
        folder = st.text_input("Folder", key="notes_folder", placeholder="~/vault/findings")
        into_vault = st.checkbox(
            "Write inside an ingested folder too",
            key="notes_into_vault",
            help="A folder the knowledge base was read from is refused unless this is ticked; ingest never reads "
            "the exported notes back.",
        )
        if st.button("Export to notes", key="notes_export", icon=":material/download:", disabled=not folder.strip()):
            try:
                done = notes_export.export_notes(rt, folder.strip(), session_id=session_id, into_vault=into_vault)
            except ExplorerError as exc:
                st.error(common.error_text(exc), icon=":material/error:")
                return
            st.success(
                f"{counted(done.written, 'note')} written, {done.unchanged} unchanged, {done.removed} removed in "
                f"{untrusted.md(done.directory)}",
                icon=":material/done_all:",
            )


def hidden_by_filters(status: str, in_scope: list[Crystal]) -> str:
    """Why the list is empty: what the status filter hides and how to see it, what Session and Min confidence
    hide, or, when there are none at all, how crystals come to be.
    """
    if in_scope:
        states = Counter(STATE_LABELS[c.review_state] for c in in_scope)
        held = ", ".join(f"{n} {label}" for label, n in states.most_common())
        return (
            f"No crystal is {status} here; this filter hides {counted(len(in_scope), 'crystal')} ({held}). "
            "Choose “all” in Status to see them."
        )
    everywhere = len(wander.list_crystals(rt))
    if everywhere:
        return (
            f"No crystal in this session above this confidence; {counted(everywhere, 'crystal')} in all. "
            "Choose “all sessions” or lower Min confidence to see them."
        )
    return (
        "No crystal yet. Crystals form when a confirmed resonance meets an interesting locus: walk a session on "
        "the Sessions page."
    )


# -- Review: one crystal at a time, one key per decision -----------------------------------------------------------
# The queue is the pending crystals the filters take, surest first. This visitor's skips go to its end, and every
# decision and skip goes on a stack that Backspace takes back (a decision by reverting its log entry). The buttons'
# callbacks decide and clear ``crystal`` (the URL's), so the fragment's one read draws the next crystal at once.


def _filter() -> ReviewFilter:
    return ReviewFilter(session_id=session_id, min_confidence=min_confidence or None)


def _flash(message: str) -> None:
    st.session_state[FLASH] = message


once = clicks.once(st.session_state, keeps=("crystal",))


@once
def _decide(crystal_id: str, decision: ReviewDecision) -> None:
    notes = str(st.session_state.get(f"review_notes_{crystal_id}") or "").strip() or None
    try:
        entry = reviewing.decide(rt, crystal_id, decision, notes=notes, reviewer=who())
    except ExplorerError as exc:
        _flash(common.error_text(exc))
        return
    st.session_state[DONE].append(("review", crystal_id, entry.id))
    st.session_state["crystal"] = ""  # the next one


@once
def _skip(crystal_id: str) -> None:
    skipped: list[str] = st.session_state[SKIPPED]
    if crystal_id in skipped:
        skipped.remove(crystal_id)
    skipped.append(crystal_id)
    st.session_state[DONE].append(("skip", crystal_id, None))
    st.session_state["crystal"] = ""


@once
def _undo() -> None:
    kind, crystal_id, review_id = st.session_state[DONE].pop()
    if kind == "review":
        try:
            reviewing.revert_review(rt, review_id, reviewer=who(), notes="undone in the review queue")
        except ExplorerError as exc:
            _flash(common.error_text(exc))
    elif crystal_id in st.session_state[SKIPPED]:
        st.session_state[SKIPPED].remove(crystal_id)
    st.session_state["crystal"] = crystal_id


@once
def _revert(review_id: str, force: bool) -> None:
    try:
        reviewing.revert_review(rt, review_id, reviewer=who(), force=force)
    except ExplorerError as exc:
        _flash(common.error_text(exc))


def _entry_line(entry: Review) -> str:
    when = entry.created_at.strftime("%Y-%m-%d %H:%M:%S") if entry.created_at else "?"
    marks = [m for m, on in (("forced", entry.forced), ("bulk", entry.batch_id)) if on]
    extra = f" ({', '.join(marks)})" if marks else ""
    return f"{when} · {entry.decision}{extra} · {entry.state_before} → {entry.state_after} · by {entry.reviewer}"


def history(entries: list[Review], drawn: int) -> None:
    """A crystal's reviews and reverts, newest first, each of which can be reverted: an older one puts the crystal
    back as it was before it over the later ones (a forced revert, logged as such and itself revertible).
    """
    st.markdown(f"**History** ({len(entries)})")
    if not entries:
        st.caption("Not reviewed yet.")
    latest = entries[-1].id if entries else None
    for entry in reversed(entries):
        text, button = st.columns([5, 1], vertical_alignment="center")
        text.caption(untrusted.md(_entry_line(entry)))
        if entry.notes:
            with text:
                untrusted.text(None, entry.notes)
        newest = entry.id == latest
        button.button(
            "Revert" if newest else "Revert to before",
            key=f"revert_{entry.id}",
            icon=":material/undo:",
            on_click=_revert,
            args=(drawn, entry.id, not newest),
            disabled=not entry.revertible,
            help="Put the crystal back as it was before this."
            if newest
            else "Put the crystal back as it was before this, over the later entries (logged as a forced revert).",
        )


@st.fragment
def review_view() -> None:
    skipped: list[str] = st.session_state.setdefault(SKIPPED, [])
    done: list[tuple[str, str, str | None]] = st.session_state.setdefault(DONE, [])
    drawn = clicks.drawing(st.session_state)
    # the URL's crystal (a shared link) until this visit has a widget state of its own
    asked = str(st.session_state["crystal"] if "crystal" in st.session_state else st.query_params.get("crystal", ""))
    try:
        view = reviewing.queue_view(rt, _filter(), asked or None, skipped)
    except ExplorerError as exc:
        _flash(common.error_text(exc))
        view = reviewing.queue_view(rt, _filter(), None, skipped)
    crystal = view.crystal
    st.session_state["crystal"] = crystal.id if crystal else ""
    st.text_input(
        "Crystal under review",
        key="crystal",
        bind="query-params",
        help="Its id, also in the page's address: share the address to show someone this crystal.",
    )
    if FLASH in st.session_state:
        st.error(st.session_state.pop(FLASH), icon=":material/error:")
    st.caption(
        f"{len(view.queue)} awaiting review in this filter · {len(skipped)} skipped · keys: "
        f"{KEYS['approve']} approve, {KEYS['reject']} reject, {KEYS['skip']} skip, {KEYS['undo']} undo"
    )
    state = crystal.review_state if crystal else ReviewState.PENDING
    shown = crystal.id if crystal else ""
    controls: list[tuple[str, str, dict[str, Any]]] = [
        ("Approve", "approve", {"type": "primary", "shortcut": KEYS["approve"]}),
        ("Reject", "reject", {"shortcut": KEYS["reject"]}),
        ("Skip", "skip", {"icon": ":material/skip_next:", "shortcut": KEYS["skip"]}),
        ("Undo", "undo", {"icon": ":material/undo:", "shortcut": KEYS["undo"]}),
        ("Archive", "archive", {}),
    ]
    for column, (label, action, options) in zip(st.columns(len(controls)), controls, strict=True):
        args: tuple[Any, ...]
        if action in REVIEW_OUTCOMES:
            options.setdefault("icon", ICONS[action])
            disabled = crystal is None or not review_allowed(state, REVIEW_OUTCOMES[action])
            callback, args = _decide, (drawn, shown, action)
        elif action == "skip":
            disabled, callback, args = crystal is None, _skip, (drawn, shown)
        else:
            disabled, callback, args = not done, _undo, (drawn,)
        column.button(label, key=f"review_{action}", on_click=callback, args=args, disabled=disabled, **options)
    if crystal is None:
        st.success("Nothing awaits review in this filter.", icon=":material/task_alt:")
        return
    with st.container(border=True, key="review_card"):
        describe(crystal)
        st.text_input("Notes", key=f"review_notes_{crystal.id}", placeholder="why (stored with the decision)")
    history(view.history, drawn)
    with st.expander("Evidence: residues → loci → source chunks", key="review_evidence", on_change="rerun") as box:
        if box.open:
            evidence(crystal)


# -- Bulk: one decision on everything a filter takes -------------------------------------------------------------


def bulk_view() -> None:
    st.caption("The crystals of the session and minimum confidence above, and of these:")
    b1, b2 = st.columns([2, 3])
    max_confidence = b1.slider("Max confidence", 0.0, 1.0, 1.0, 0.05, key="bulk_max_confidence")
    states = b2.multiselect(
        "Review state",
        list(ReviewState),
        default=[ReviewState.PENDING],
        key="bulk_states",
        format_func=lambda s: STATE_LABELS[s],
    )
    d1, d2 = st.columns([2, 5])
    decision = d1.segmented_control(
        "Decision", list(REVIEW_OUTCOMES), default="approve", key="bulk_decision", required=True
    )
    notes = d2.text_input("Notes", key="bulk_notes", placeholder="why (stored with each decision)")
    where = ReviewFilter(
        session_id=session_id,
        min_confidence=min_confidence or None,
        max_confidence=max_confidence if max_confidence < 1 else None,
        states=frozenset(states),
    )
    count = reviewing.bulk_review(rt, where, decision, dry_run=True)
    refused = (
        f"; {count.refused} more match but keep their earlier decision (the command line's --force changes them)"
        if count.refused
        else ""
    )
    outcome = STATE_LABELS[REVIEW_OUTCOMES[decision]]
    st.markdown(f"**{count.reviewed}** of {counted(count.matched, 'matching crystal')} would be {outcome}{refused}.")
    sure = st.checkbox(
        f"Yes, {decision} {'this crystal' if count.reviewed == 1 else f'these {count.reviewed} crystals'}",
        key="bulk_sure",
        disabled=not count.reviewed,
    )
    st.button(
        f"{decision.capitalize()} {counted(count.reviewed, 'crystal')}",
        key="bulk_go",
        icon=ICONS[decision],
        type="primary",
        disabled=not (sure and count.reviewed),
        on_click=_bulk,
        args=(where, decision, notes.strip() or None),
    )
    if "bulk_result" in st.session_state:
        st.success(st.session_state.pop("bulk_result"), icon=":material/done_all:")


def _bulk(where: ReviewFilter, decision: ReviewDecision, notes: str | None) -> None:
    done = reviewing.bulk_review(rt, where, decision, notes=notes, reviewer=who())
    st.session_state["bulk_sure"] = False  # the next bulk review is confirmed afresh
    st.session_state["bulk_result"] = (
        f"{STATE_LABELS[REVIEW_OUTCOMES[decision]].capitalize()} {counted(done.reviewed, 'crystal')} "
        f"(batch {done.batch_id}); "
        "each one's history (Review) can revert it."
    )


awaiting = reviewing.awaiting_review(rt)  # counted in the database: this page runs again after every key
# The review queue first when something waits for review, or when a link names a crystal; the list otherwise.
linked = "crystal" in st.query_params
tabs = st.tabs(VIEWS, key="view", bind="query-params", default="Review" if linked or awaiting else "List")
for tab, view in zip(tabs, (list_view, review_view, bulk_view), strict=True):
    if tab.open:
        with tab:
            view()
