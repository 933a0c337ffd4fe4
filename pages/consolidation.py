"""Consolidation: turn experiences (walks, dreams, imported agent logs) into verified patterns, an abstraction
ladder and their connections; read the newest run's report, open its ladder level by level, see its patterns,
their checks and their clusters on the map.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from explorer import projection
from explorer.consolidation.ladder import ITEM_NAMES, LEVEL_NAMES
from explorer.figures.map import session_map
from explorer.records.consolidation import LadderItem, Pattern
from explorer.runtime import Runtime
from explorer.views import ConsolidationView, latest_consolidation, map_data
from explorer.wording import counted
from pages import common, untrusted

SOURCES = {
    "all": "Everything below.",
    "wander": "Walks: each step, and the crystals they formed.",
    "dreams": "Dreams, fused memories and the judge's verdicts on discovered links.",
    "imported": "Agent experience logs imported with `explorer consolidate import FILE.jsonl`.",
}
NOTHING_YET = (
    "Nothing consolidated yet. Consolidation turns experiences into a few verified patterns: walk (Sessions), "
    "dream (Dreams) or import an agent's experience log (`explorer consolidate import FILE.jsonl`), then press "
    "**Consolidate** above."
)
MAP_LAYERS = ("corpus", "dreams", "clusters")


def outcome(report: dict[str, Any]) -> None:
    """What the run just asked for did, when it stored nothing the page could show below."""
    if report["status"] == "skipped":
        st.info(
            f"Nothing to consolidate from {report['source']}: no experiences yet. Walk, dream or import a log first.",
            icon=":material/info:",
        )
    elif report["status"] == "not_due":
        st.info(f"Not due: {untrusted.md(report['reason'])}.", icon=":material/schedule:")
    else:
        st.warning(
            f"{report['experiences']} experiences from {report['source']} made no pattern "
            f"({report['noise']} left as noise): they are kept as they are.",
            icon=":material/warning:",
        )
        warnings(report)


def warnings(report: dict[str, Any]) -> None:
    """The run's warnings and failures (their text may quote a model)."""
    for warning in report.get("warnings") or []:
        st.warning(untrusted.md(warning), icon=":material/warning:")
    errors = report.get("errors") or []
    if report.get("failures") or errors:
        st.caption(f"{counted(report.get('failures') or len(errors), 'item')} failed (counted, not fatal):")
        st.text("\n".join(str(e) for e in errors[:20]) or "—")


def summary(view: ConsolidationView) -> None:
    """The run's numbers, as ``explorer consolidate run`` prints them."""
    report = view.report
    check = report.get("verification") or {}
    ratio = report.get("compression_ratio")
    numbers = {
        "experiences": report["experiences"],
        "kept by triage": report["triaged"],
        "patterns": len(report["patterns"]),
        "compression": f"{ratio:g}:1" if ratio else "—",
        "ladder levels": report["ladder_levels"],
        "connections": report["connections"],
        "pruned as redundant": report["pruned_redundant"],
        "pruned for low utility": report["pruned_low_utility"],
        "verification": check.get("status", "not run"),
        "verification score": f"{check['score']:.2f}" if check else "—",
    }
    for row in (list(numbers.items())[:5], list(numbers.items())[5:]):
        for column, (label, value) in zip(st.columns(len(row)), row, strict=True):
            column.metric(label, value)
    st.caption(particulars(view))
    warnings(report)


def particulars(view: ConsolidationView) -> str:
    """The run's when, whence and how, on one line: triage, clustering, quality, connections and cost."""
    report = view.report
    kinds = ", ".join(f"{n} {kind}" for kind, n in (report.get("connection_types") or {}).items())
    quality = report.get("pattern_quality")
    dropped = ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in (report.get("dropped") or {}).items() if n)
    return (
        f"Run {view.run_id[:8]} · {view.ran_at:%Y-%m-%d %H:%M %Z} · source {report['source']} · trigger "
        f"{report['trigger']} · triage dropped {dropped or 'nothing'} · {report['clustering']}: "
        f"{report['clusters']} clusters, {report['noise']} noise · pattern quality "
        f"{'—' if quality is None else f'{quality:.2f}'} (aim 0.70) · connections: {kinds or 'none'} · "
        f"{report['model_calls']} model calls · {sum((report.get('seconds') or {}).values()):.1f} s"
    )


def instance(view: ConsolidationView, item: LadderItem) -> None:
    """A rung's bottom: the experience itself, with how it went."""
    found = view.experiences.get(item.id)
    if found is None:
        untrusted.text(None, item.text)
        return
    st.caption(f"{found.kind} · {found.outcome} · {found.source} · session {untrusted.md(found.session_id)}")
    st.text(found.text)


def rung(view: ConsolidationView, item: LadderItem) -> None:
    """An item as an expander holding its statement and, one level down, what it subsumes (opened in turn)."""
    below = view.below(item)
    label = f"{ITEM_NAMES[item.level].capitalize()}: **{untrusted.md(item.name or '—')}** · subsumes {len(below)}"
    with st.expander(label, icon=":material/account_tree:" if item.level > 1 else ":material/category:"):
        untrusted.text(None, item.statement)
        for lower in below:
            if lower.level == 0:
                instance(view, lower)
            else:
                rung(view, lower)


def ladder(view: ConsolidationView) -> None:
    """The ladder from its most general rung, each item opening onto the items it subsumes, down to instances."""
    st.caption(
        " → ".join(f"{len(level)} {LEVEL_NAMES[depth]}" for depth, level in enumerate(view.ladder))
        + ". Open an item to see what it subsumes, down to the experiences themselves."
    )
    for item in view.ladder[-1] if view.ladder else []:
        rung(view, item)


def pattern_card(view: ConsolidationView, pattern: Pattern) -> None:
    """A pattern: what it says, when it applies, what to do, its numbers and its example experiences."""
    rate = "n/a (error recovery)" if pattern.success_rate is None else f"{pattern.success_rate:.0%}"
    label = f"**{untrusted.md(pattern.name)}** · {pattern.type} · {pattern.status} · success {rate}"
    with st.expander(label, icon=":material/lightbulb:"):
        untrusted.text("description", pattern.description)
        untrusted.text("when (conditions)", "\n".join(f"• {c}" for c in pattern.conditions))
        untrusted.text("do (actions)", "\n".join(f"• {a}" for a in pattern.actions))
        st.caption(
            f"used {pattern.usage_count} times · confidence {pattern.confidence:.2f} · utility {pattern.utility:.2f} "
            f"· {len(pattern.member_ids)} experiences in its cluster"
        )
        st.markdown(f"**Examples** ({len(pattern.example_ids)})")
        for example in view.examples(pattern):
            st.caption(f"{example.kind} · {example.outcome} · session {untrusted.md(example.session_id)}")
            st.text(example.text)


def verification(report: dict[str, Any]) -> None:
    """The five checks, each with its score and what it found."""
    check = report.get("verification")
    if not check:
        st.info("Verification did not run: the run made no ladder to verify.", icon=":material/info:")
        return
    st.markdown(f"**Status: {check['status']}** · score {check['score']:.2f}")
    st.dataframe(
        pd.DataFrame(
            {
                "check": [c["name"] for c in check["checks"]],
                "passed": [c["passed"] for c in check["checks"]],
                "score": [round(c["score"], 3) for c in check["checks"]],
                "message": [c["message"] for c in check["checks"]],
            }
        ),
        hide_index=True,
    )


def cluster_map(rt: Runtime) -> None:
    """The patterns' clusters on the stable map, beside the corpus their experiences resemble."""
    status = projection.projection_status(rt)
    if not status.fitted:
        st.info(
            "The map is not fitted yet: fit it on the Map page, then the clusters appear here.",
            icon=":material/scatter_plot:",
        )
        return
    shown = common.layer_switches(MAP_LAYERS, "consolidation_layers")

    projection.place_new(rt)  # nodes made since the last visit join the map first
    data = map_data(rt, discoveries=0, clusters="clusters" in shown)
    data.title = "Pattern clusters of the newest consolidation"
    st.plotly_chart(session_map(data, layers=shown, height=640), key="consolidation_map", config={"displaylogo": False})
    st.caption(
        "Each pattern's experiences are placed beside the corpus nodes they resemble most, as new nodes are, and "
        "outlined in the pattern's colour; experiences that joined no cluster (noise) are not drawn. Hover an "
        "outline for the pattern's name."
    )


rt = common.runtime()
st.title("Consolidation")
common.offline_notice(rt)

with st.form("consolidate"):
    source = st.radio(
        "Experiences", list(SOURCES), horizontal=True, captions=list(SOURCES.values()), key="consolidation_source"
    )
    started = st.form_submit_button("Consolidate", type="primary", icon=":material/neurology:")

RUN = "consolidation_job"  # the consolidation job this page follows: it goes on if the page is left or reloaded
if started:
    common.start_job(rt, "consolidate.run", {"source": source}, RUN)
ran = common.follow_job(rt, RUN, "Consolidating")
if ran is not None:
    report = ran.result or {}
    common.job_outcome(ran, f"Consolidation of {ran.params.get('source', 'all')}: {report.get('status')}")
    if ran.result is not None:
        st.session_state["last_consolidation"] = ran.result

view = latest_consolidation(rt)
last = st.session_state.get("last_consolidation")
if last and (view is None or last["run_id"] != view.run_id):
    outcome(last)
if view is None:
    st.info(NOTHING_YET, icon=":material/neurology:")
    st.stop()

st.subheader("Newest consolidation")
summary(view)
ladder_tab, patterns_tab, checks_tab, map_tab = st.tabs(["Ladder", "Patterns", "Verification", "Cluster map"])
with ladder_tab:
    ladder(view)
with patterns_tab:
    for pattern in view.patterns:
        pattern_card(view, pattern)
with checks_tab:
    verification(view.report)
with map_tab:
    cluster_map(rt)
