"""Sessions: create a wander session, run it step by step or N steps at a time, watch its map grow,
pause, resume, stop or delete it, and download its archive.
"""

from __future__ import annotations

from dataclasses import fields

import pandas as pd
import streamlit as st

from explorer import jobs, projection
from explorer.consolidation import service as consolidation
from explorer.export import archive_zip, map_figure, render_png
from explorer.figures.map import session_map
from explorer.records.wander import ReviewState
from explorer.text import shorten
from explorer.views import corpus_overview, map_data
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig
from explorer.wording import counted
from pages import common, event_feed, untrusted

DEFAULTS = {f.name: f.default for f in fields(SessionConfig)}
HELP = {
    "seed_concept": "Where the walk starts: a concept, a question or a sentence.",
    "name": "A name to find the session by (default: made from the seed).",
    "attractor": "A concept that gently pulls the walk towards it (optional).",
    "allowed_domains": "Stay within these domains (empty: any domain).",
    "forbidden_domains": "Never step into these domains.",
    "max_drift_distance": "How far (cosine distance from the seed and the fence's anchors) the walk may drift.",
    "max_steps": "The session completes after this many steps.",
    "cloud_budget_cents": "Most the session may spend on the cloud model, in cents; then it falls back to the local "
    "model (or the offline provider).",
    "temperature": "Softmax temperature of the choice of the next locus: low follows the best score, high explores.",
    "human_checkpoint_frequency": "Pause for a person's review every N steps (0: never).",
    "random_seed": "The same seed replays the same walk (empty: a fresh seed, recorded with the session).",
}

rt = common.runtime()
st.title("Sessions")
common.offline_notice(rt)
overview = corpus_overview(rt)
domains = overview.domains
if overview.nodes == 0:  # a walk's seed is placed among what reading stored: nothing stored, nowhere to walk
    st.info("A walk moves through what the knowledge base holds, and it is empty: add documents first.")
    st.page_link("pages/corpus.py", label="Add documents on the Corpus page", icon=":material/upload:")

# -- create ---------------------------------------------------------------------------

with (
    st.expander(
        "New session", icon=":material/add:", expanded=overview.nodes > 0 and not wander.list_sessions(rt, limit=1)
    ),
    st.form("new_session"),
):
    seed_concept = st.text_area("Seed concept", key="new_seed_concept", help=HELP["seed_concept"], height=80)
    c1, c2 = st.columns(2)
    name = c1.text_input("Name", key="new_name", help=HELP["name"])
    attractor = c2.text_input("Attractor", key="new_attractor", help=HELP["attractor"])
    allowed = c1.multiselect("Allowed domains", domains, key="new_allowed", help=HELP["allowed_domains"])
    forbidden = c2.multiselect("Forbidden domains", domains, key="new_forbidden", help=HELP["forbidden_domains"])
    c1, c2, c3 = st.columns(3)
    max_drift = c1.number_input(
        "Max drift distance",
        0.05,
        2.0,
        float(DEFAULTS["max_drift_distance"]),
        0.05,
        key="new_max_drift",
        help=HELP["max_drift_distance"],
    )
    temperature = c2.number_input(
        "Temperature",
        0.05,
        5.0,
        float(DEFAULTS["temperature"]),
        0.05,
        key="new_temperature",
        help=HELP["temperature"],
    )
    max_steps = c3.number_input(
        "Max steps", 1, 100_000, int(DEFAULTS["max_steps"]), key="new_max_steps", help=HELP["max_steps"]
    )
    budget = c1.number_input(
        "Cloud budget (cents)",
        0,
        1_000_000,
        int(rt.settings.cloud_budget_cents),
        key="new_budget",
        help=HELP["cloud_budget_cents"],
    )
    checkpoint = c2.number_input(
        "Human checkpoint every N steps",
        0,
        100_000,
        int(DEFAULTS["human_checkpoint_frequency"]),
        key="new_checkpoint",
        help=HELP["human_checkpoint_frequency"],
    )
    seed = c3.number_input(
        "Random seed", 0, 2**31 - 1, value=DEFAULTS["random_seed"], key="new_seed", help=HELP["random_seed"]
    )
    if st.form_submit_button("Create session", type="primary", icon=":material/add:"):
        if not seed_concept.strip():
            st.warning("A session needs a seed concept.")
        else:
            created = wander.create_session(
                rt,
                SessionConfig(
                    seed_concept=seed_concept,
                    name=name or None,
                    attractor=attractor or None,
                    allowed_domains=tuple(allowed) or None,
                    forbidden_domains=tuple(forbidden) or None,
                    max_drift_distance=float(max_drift),
                    max_steps=int(max_steps),
                    cloud_budget_cents=int(budget),
                    temperature=float(temperature),
                    human_checkpoint_frequency=int(checkpoint),
                    random_seed=None if seed is None else int(seed),
                ),
            )
            projection.place_new(rt)
            st.session_state[common.CURRENT] = created.id
            st.success(f"Created “{untrusted.md(created.name)}”, standing at its seed.")

# -- list ------------------------------------------------------------------------------

sessions = wander.list_sessions(rt, limit=500)
if not sessions:
    st.stop()
st.subheader("All sessions")
st.dataframe(
    pd.DataFrame(
        {
            "name": [s.name for s in sessions],
            "status": [s.status for s in sessions],
            "steps": [s.step_count for s in sessions],
            "max steps": [s.max_steps for s in sessions],
            "seed concept": [shorten(s.seed_concept, chars=80) for s in sessions],
            "why": [s.status_reason or "" for s in sessions],
            "last step": [f"{s.last_step_at:%Y-%m-%d %H:%M}" if s.last_step_at else "—" for s in sessions],
            "id": [s.id for s in sessions],
        }
    ),
    hide_index=True,
)

session = common.pick_session(rt, "sessions_pick", label="Open session")
if session is None:
    st.stop()


def counts(view) -> dict[str, int]:
    return {
        "Steps": view.session.step_count,
        "Loci": len(view.loci),
        "Resonances": sum(r.status != "invalidated" for r in view.resonances),
        "Crystals": len(view.crystals),
        "Awaiting review": sum(c.review_state is ReviewState.PENDING for c in view.crystals),
    }


drawn = [0]  # redraws in this run: each needs its own element key


def draw(view, counts_box, map_box) -> None:
    drawn[0] += 1
    with counts_box.container():
        for column, (label, value) in zip(st.columns(5), counts(view).items(), strict=True):
            column.metric(label, value)
    projection.place_new(rt)  # the loci this run just reached
    map_box.plotly_chart(session_map(map_data(rt, view.session.id, view=view), height=720), key=f"live_map_{drawn[0]}")


st.subheader(untrusted.md(session.name))
common.checkpoint_banner(session)
st.caption(
    f"Status **{session.status}**"
    + (f" ({untrusted.md(session.status_reason)})" if session.status_reason else "")
    + f" · seed: {untrusted.md(shorten(session.seed_concept, chars=120))} · random seed {session.random_seed} · "
    f"calls: {session.local_calls} local, {session.cloud_calls} cloud, {session.offline_calls} offline · "
    f"cloud spend {session.cloud_spent_cents:.2f}/{session.cloud_budget_cents} ¢"
)

active = session.status == "active"
CONSOLIDATED = "consolidated_after_stop"  # what the stop's consolidation said, shown after the rerun


def consolidated_line(brief: dict | None) -> str | None:
    """What the session-complete consolidation made, as one line (``None``: the session is still open)."""
    if brief is None:
        return None
    if brief["status"] == "failed":
        return f"Session completed, but consolidating it failed: {untrusted.md(brief.get('error', ''))}"
    if brief["status"] == "skipped":
        return "Session completed; there was nothing to consolidate yet."
    return (
        f"Session completed and consolidated: {counted(brief['patterns'], 'pattern')}, a ladder of "
        f"{counted(brief['ladder_levels'], 'level')}, verification {brief['status']} (see the Consolidation page)."
    )


def consolidate_after(status: str) -> str | None:
    """The session-complete trigger, after a step or a stop made here: once a session has completed,
    consolidate the walks' experiences; the line that says what it made.
    """
    with st.spinner("The session completed: consolidating the walks' experiences…"):
        report = consolidation.after_session(rt, status)
    return consolidated_line(None if report is None else report.brief())


WALK = f"walk_job_{session.id}"  # the job walking this session, followed by this page
walking = next(
    (
        job
        for job in jobs.list_jobs(rt, status="active", limit=100)
        if job.kind == "wander.run" and job.params.get("session_id") == session.id
    ),
    None,
)
if walking is not None:
    st.session_state.setdefault(WALK, walking.id)  # started elsewhere (another page, the command line, the API)
    active = False  # one walk at a time: the job's
    st.caption("A background job is walking this session; its progress shows below.")

c1, c2, c3, c4, c5, c6 = st.columns([1, 1, 1.4, 1, 1, 1])
step_once = c1.button("Step once", icon=":material/skip_next:", disabled=not active, key="step_once")
steps = c2.number_input("Steps", 1, 500, 10, key="run_steps", label_visibility="collapsed")
run_n = c3.button(
    f"Run {int(steps)} steps", icon=":material/fast_forward:", disabled=not active, type="primary", key="run_n"
)
if session.status == "paused":
    if c4.button("Resume", icon=":material/play_arrow:", key="resume"):
        wander.resume(rt, session.id)
        st.rerun()
elif c4.button("Pause", icon=":material/pause:", disabled=not active, key="pause"):
    wander.pause(rt, session.id)
    st.rerun()
if c5.button("Stop", icon=":material/stop:", disabled=session.status not in ("active", "paused"), key="stop"):
    st.session_state[CONSOLIDATED] = consolidate_after(wander.stop(rt, session.id).status)
    st.rerun()
if said := st.session_state.pop(CONSOLIDATED, None):
    st.info(said, icon=":material/hub:")
with c6.popover("Delete", icon=":material/delete:"):
    st.caption("Deletes the session, its loci, trace, residues and resonances. Its crystals stay (without a session).")
    if st.button("Delete for good", type="primary", key="delete"):
        wander.delete_session(rt, session.id)
        projection.place_new(rt)  # drops the deleted loci's points
        st.session_state.pop(common.CURRENT, None)
        st.rerun()

counts_box, map_box = st.empty(), st.empty()
if step_once:
    bar = common.ProgressBar("Stepping")
    result = wander.run(rt, session.id, 1, progress=bar)
    projection.place_new(rt)
    bar.done(
        f"{counted(result.steps_completed, 'step')} taken, {counted(result.crystals_formed, 'crystal')} formed"
        + (f"; stopped: {untrusted.md(result.stopped_reason)}" if result.stopped_reason else "")
    )
    session = wander.get_session(rt, session.id)
    common.checkpoint_banner(session)
    if said := consolidate_after(session.status):
        st.info(said, icon=":material/hub:")
if run_n:  # many steps are a job: the walk goes on if this page is left or reloaded
    common.start_job(rt, "wander.run", {"session_id": session.id, "steps": int(steps)}, WALK)
walked = common.follow_job(
    rt, WALK, "Wandering", while_running=lambda job: draw(wander.session_view(rt, session.id), st.empty(), st.empty())
)
if walked is not None:
    projection.place_new(rt)
    result = walked.result or {}
    common.job_outcome(
        walked,
        f"{counted(result.get('steps_completed', 0), 'step')} taken, "
        f"{counted(result.get('crystals_formed', 0), 'crystal')} formed"
        + (f"; stopped: {untrusted.md(result['stopped_reason'])}" if result.get("stopped_reason") else ""),
    )
    session = wander.get_session(rt, session.id)
    common.checkpoint_banner(session)
    if said := consolidated_line(result.get("consolidation")):
        st.info(said, icon=":material/hub:")
if WALK not in st.session_state:  # else the job's live view draws the session as it grows
    draw(wander.session_view(rt, session.id), counts_box, map_box)
event_feed.show(rt, session)

with st.expander("Steer the walk", icon=":material/tune:", key="steer"):
    s1, s2, s3 = st.columns(3)
    with s1.form("inject", clear_on_submit=True):
        concept = st.text_input("Inject a concept", help="A new locus; the next step goes there.")
        if st.form_submit_button("Inject") and concept.strip():
            locus = wander.inject(rt, session.id, concept)
            projection.place_new(rt)
            st.success(f"Next step goes to: {untrusted.md(shorten(locus.concept, chars=80))}")
    with s2.form("fence", clear_on_submit=True):
        concept = st.text_input(
            "Fence around a concept",
            help="Include widens the region the walk may roam; exclude cuts the region around the concept out.",
        )
        action = st.radio("Action", ["include", "exclude"], horizontal=True)
        if st.form_submit_button("Change the fence") and concept.strip():
            wander.fence(rt, session.id, concept, action)
            st.success(f"Fence: {action} “{untrusted.md(shorten(concept, chars=60))}”")
    with s3:
        st.caption("Force a crystallization attempt at the current locus with the resonance that bears on it most.")
        if st.button("Crystallize now", key="crystallize"):
            attempt = wander.crystallize(rt, session.id)
            projection.place_new(rt)
            if attempt.crystal is not None:
                st.success("A crystal formed; review it on the Crystals page.")
            else:
                st.info(f"No crystal: {untrusted.md(attempt.reason)}")

st.subheader("Archive")
st.caption("The map at 1024×1024 and 512×512, a compressed summary (≤ 2,000 tokens) and the full JSON of the session.")
d1, d2 = st.columns(2)
sid = session.id
d1.download_button(
    "Download session archive (.zip)",
    data=lambda: archive_zip(rt, sid),
    file_name=f"session-{sid[:8]}.zip",
    mime="application/zip",
    icon=":material/download:",
    on_click="ignore",
    key="download_zip",
)
d2.download_button(
    "Download map (PNG, 1024 px)",
    data=lambda: render_png(map_figure(rt, sid, 1024), 1024, 1024),
    file_name=f"session-{sid[:8]}-map-1024.png",
    mime="image/png",
    icon=":material/image:",
    on_click="ignore",
    key="download_png",
)
