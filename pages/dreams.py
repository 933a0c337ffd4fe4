"""Dreams: run the night's mechanisms (REM cycle, REM exploration, fusion, or all) and read what they made."""

from __future__ import annotations

from dataclasses import fields
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from explorer import jobs, projection
from explorer.dreaming import service as dreaming
from explorer.records.dreaming import CycleReport, ExplorationReport, FusionReport, RemReport
from explorer.text import shorten
from explorer.wording import counted, node_kind
from pages import common, untrusted


def explained(kind: str, result: dict[str, Any]) -> list[str]:
    """The engine's plain words on why a run did less than it could, read back from its stored report."""

    def report(kind_of: type[Any], values: dict[str, Any]) -> Any:
        return kind_of(**{f.name: values[f.name] for f in fields(kind_of) if f.name in values})

    if kind == "dream.cycle":
        parts = [report(k, result[n]) for k, n in ((ExplorationReport, "exploration"), (FusionReport, "fusion"))]
        return CycleReport(*parts, report(RemReport, result["rem"])).explain()
    return report(REPORTS[kind], result).explain()


REPORTS: dict[str, type[Any]] = {"dream.rem": RemReport, "dream.explore": ExplorationReport, "dream.fuse": FusionReport}

rt = common.runtime()
st.title("Dreams")
common.offline_notice(rt)

MECHANISMS = {
    "REM cycle": "Three memories that bear on each other across categories (one from the latest year) → the "
    "question that binds them → a dream node; dreams that add nothing are dropped.",
    "REM exploration": "Seeds with strong bridges not yet in the graph, noisy spreading activation from them; a "
    "judge weighs the measured evidence and keeps the strongest links as EXTENDS relations.",
    "Fusion": "Fading, related memories merged into one shorter summary; the sources are superseded, never deleted.",
    "All (one night)": "Exploration, then fusion, then the REM cycle.",
}

with st.form("dream"):
    mechanism = st.radio("Mechanism", list(MECHANISMS), horizontal=True, captions=list(MECHANISMS.values()))
    c1, c2, c3 = st.columns(3)
    dreams = c1.number_input("Dreams (REM cycle)", 1, 200, 10, help="How many dreams the REM cycle attempts.")
    year = c2.number_input(
        "Current year (REM cycle)", 1, 2999, value=None, help="One memory of each dream comes from it (default: the "
        "latest year in the corpus).",
    )  # fmt: skip
    seed = c3.number_input("Seed", 0, 2**32 - 1, value=None, help="The same seed dreams the same again.")
    as_of = c1.date_input(
        "As of", value=None, help="Dream as on this date: memories fade with the days since they were last read "
        "(exploration and fusion start from fading ones), so a later date lets today's notes fade.",
    )  # fmt: skip
    budget = c2.number_input("Budget (cents)", 0, 100_000, value=None, help="Spend at most this on cloud calls.")
    started = st.form_submit_button("Dream", type="primary", icon=":material/bedtime:")


def report_lines(values: dict[str, Any]) -> list[str]:
    """A stored report's counts and flags as "dreams stored: 2" lines (its ids and errors are shown elsewhere)."""
    lines = []
    for key, value in values.items():
        if isinstance(value, bool):
            lines.append(f"{key.replace('_', ' ')}: {'yes' if value else 'no'}")
        elif isinstance(value, int | float):
            lines.append(f"{key.replace('_', ' ')}: {value:g}")
    return lines


KINDS = {
    "REM cycle": "dream.rem",
    "REM exploration": "dream.explore",
    "Fusion": "dream.fuse",
    "All (one night)": "dream.cycle",
}
MECHANISM_OF = {kind: mechanism for mechanism, kind in KINDS.items()}
NIGHT_PARTS = {"exploration": "REM exploration", "fusion": "Fusion", "rem": "REM cycle"}  # a night's reports
NIGHT = "dream_job"  # the dreaming job this page follows: it goes on if the page is left or reloaded
if started:
    chosen = {"seed": seed, "as_of": as_of and as_of.isoformat(), "budget_cents": budget}
    if KINDS[mechanism] in ("dream.rem", "dream.cycle"):
        chosen |= {"dreams": int(dreams), "year": year if KINDS[mechanism] == "dream.rem" else None}
    params = {name: value for name, value in chosen.items() if value is not None}
    common.start_job(rt, KINDS[mechanism], params, NIGHT)
    st.session_state["dream_job_mechanism"] = mechanism
dreamt = common.follow_job(rt, NIGHT, st.session_state.get("dream_job_mechanism", "Dreaming"))
if dreamt is not None:
    mechanism = st.session_state.pop("dream_job_mechanism", dreamt.kind)
    projection.place_new(rt)  # dream and fused nodes join the map where they belong
    common.job_outcome(dreamt, f"{mechanism}: done")
    if dreamt.result is not None:
        st.session_state["last_dream_report"] = (mechanism, dreamt.result)

if "last_dream_report" not in st.session_state:  # a reload, or another visit: the newest run stands
    last = next((j for j in jobs.list_jobs(rt, status="succeeded", limit=50) if j.kind in MECHANISM_OF), None)
    if last is not None and last.result is not None:
        st.session_state["last_dream_report"] = (MECHANISM_OF[last.kind], last.result)

if "last_dream_report" in st.session_state:
    mechanism, result = st.session_state["last_dream_report"]
    with st.container(border=True):
        st.markdown(f"**Last run: {mechanism}**")
        for sentence in explained(KINDS[mechanism], result):
            st.info(sentence, icon=":material/lightbulb:")
        parts = result if "rem" not in result else {k: result[k] for k in ("exploration", "fusion", "rem")}
        flat = {k: v for k, v in parts.items() if isinstance(v, (int, float)) and v is not None}
        # at most six metrics; a report without any still gets its one (empty) column, hence not strict
        columns = st.columns(max(1, min(6, len(flat))))
        for column, (key, value) in zip(columns, list(flat.items())[:6], strict=False):
            column.metric(key.replace("_", " "), value)
        for name, part in parts.items():  # a night's three reports, each as lines a person reads
            if isinstance(part, dict):
                st.markdown(f"**{NIGHT_PARTS.get(name, name)}**")
                st.text("\n".join(report_lines(part)) or "—")
        errors = [e for e in (result.get("errors") or [])] + [
            e for part in parts.values() if isinstance(part, dict) for e in part.get("errors", [])
        ]
        if errors:
            st.warning(f"{counted(len(errors), 'item')} failed (counted, not fatal).")
            for error in errors[:10]:
                st.text(str(error))


def name_in_url(dream_id: str) -> None:
    """An opened dream is named in the URL (?dream=ID), so the link opens it."""
    if st.session_state.get(f"dream_{dream_id}"):
        common.set_url_param("dream", dream_id)


left, right = st.columns(2)
with left:
    st.subheader("Recent dreams")
    recent = dreaming.recent_dreams(rt, limit=30)
    # A link names a dream (?dream=ID): it comes first, open. Opening another one names it in the URL.
    linked = st.query_params.get("dream")
    shared = dreaming.get_dream(rt, linked) if linked else None
    if linked and shared is None:
        st.warning(f"The link names dream {untrusted.md(linked)}, which is not here.", icon=":material/link_off:")
    if shared is not None:
        recent = [shared, *(view for view in recent if view.dream.id != shared.dream.id)]
    if not recent:
        st.caption("No dream yet.")
    for view in recent:
        with st.expander(
            untrusted.md(shorten(view.dream.text, chars=110)),
            icon=":material/bedtime:",
            expanded=view is shared,
            key=f"dream_{view.dream.id}",
            on_change=partial(name_in_url, view.dream.id),
        ):
            untrusted.text("question", view.question)
            untrusted.text("dream", view.dream.text)
            st.caption(
                f"year {view.dream.year or '—'} · confidence {view.dream.confidence:.2f} · "
                f"model {untrusted.md((view.dream.metadata or {}).get('model', '—'))}"
            )
            st.markdown(f"**Dreamt from** ({len(view.sources)})")
            for source in view.sources:
                untrusted.text(
                    f"{node_kind(source.type)} · {source.domain or '—'} · {source.year or '—'}",
                    shorten(source.text, chars=400),
                )
with right:
    st.subheader("Discovered links")
    links, verdicts = st.tabs(["Kept links", "Every verdict"])
    with links:
        found = dreaming.recent_discoveries(rt, limit=100)
        if not found:
            st.caption("No link discovered yet.")
        else:
            st.dataframe(
                pd.DataFrame(
                    {
                        "from": [shorten(d.seed.text, chars=80) for d in found],
                        "to": [shorten(d.neighbor.text, chars=80) for d in found],
                        "why": [d.relation.description or "" for d in found],
                        "confidence": [round(d.relation.confidence, 3) for d in found],
                    }
                ),
                hide_index=True,
            )
    with verdicts:
        judged = dreaming.recent_verdicts(rt, limit=200)
        if not judged:
            st.caption("No verdict yet: REM exploration's judge weighs each candidate link and says why.")
        else:
            kept = sum(v.verdict.kept for v in judged)
            st.caption(f"{kept} of {len(judged)} candidate links kept; every verdict with its scores and reason.")
            st.dataframe(
                pd.DataFrame(
                    {
                        "kept": [v.verdict.kept for v in judged],
                        "from": [shorten(v.seed.text, chars=60) for v in judged],
                        "to": [shorten(v.candidate.text, chars=60) for v in judged],
                        "reason": [v.verdict.reason for v in judged],
                        "novelty": [v.verdict.novelty for v in judged],
                        "plausibility": [v.verdict.plausibility for v in judged],
                        "usefulness": [v.verdict.usefulness for v in judged],
                        "evidence": [v.verdict.evidence or "" for v in judged],
                    }
                ),
                hide_index=True,
            )
