"""What every page shares: the runtime, the offline notice, the session picker, progress bars, background
jobs (started, followed live, cancelled), and how errors are said. Model and document text is shown through
``pages/untrusted.py``.

Not a page: ``app.py`` lists the pages explicitly with ``st.navigation``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import streamlit as st

from explorer import demo, jobs
from explorer.errors import ExplorerError, Remedy
from explorer.jobs.kinds import label_of
from explorer.providers.embeddings import EmbeddingRuntime, make_embedder
from explorer.providers.gateway import OFFLINE_MODEL
from explorer.records import SHORT_ID_DIGITS
from explorer.records.jobs import Job
from explorer.records.wander import Session
from explorer.runtime import Runtime, open_runtime
from explorer.settings import load_settings, without_password
from explorer.wander import service as wander
from pages.untrusted import md

OFFLINE_NOTICE = (
    "**Offline provider.** No language model is configured, so every text the engine writes here comes from "
    f"`{OFFLINE_MODEL}`: keyphrases and sentences of its input chosen by embedding similarity. It is extractive, "
    "not a language model. Configure `EXPLORER_LOCAL_MODEL` or `EXPLORER_CLOUD_MODEL` for real reflection"
)
CURRENT = "current_session"
SESSION_PARAM = "session"  # the URL query parameter naming the chosen session on every page
T = TypeVar("T")
# The map's layers as its switches name them (explorer.figures.map.LAYERS).
LAYER_LABELS = {
    "corpus": "Corpus",
    "dreams": "Dreams",
    "links": "Discovered links",
    "clusters": "Pattern clusters",
    "halos": "Resonance halos",
    "path": "Path",
    "loci": "Loci",
    "crystals": "Crystals",
}
# What a viewer sees of an error nobody foresaw; its details go to the app's log.
UNEXPECTED = "This page hit an unexpected error. The details are in the app's log."

# How the app says what would fix an engine error (the CLI phrases the same remedies as commands).
HINTS: dict[Remedy, str] = {
    Remedy.INGEST: "Add documents on the Corpus page first.",
    Remedy.LIST_SESSIONS: "Pick a session from the list on the Sessions page.",
    Remedy.LIST_CRYSTALS: "Pick a crystal from the Crystals page.",
    Remedy.RESUME_SESSION: "Resume it on the Sessions page.",
    Remedy.NEW_SESSION: "Start a new session on the Sessions page.",
    Remedy.OTHER_DATABASE: "Open another database (EXPLORER_DB) or set EXPLORER_EMBEDDING_MODEL to its model.",
    Remedy.FORCE_REVIEW: "The earlier decision stands; change it from the command line with --force.",
    Remedy.CONSOLIDATE: "Run a consolidation on the Consolidation page first.",
    Remedy.LIST_JOBS: "The jobs panel in the sidebar lists the jobs there are.",
    Remedy.LIST_DREAMS: "The Dreams page lists the dreams there are.",
    Remedy.CHECK_DATABASE: "Check EXPLORER_DB names the database you meant.",
}


def error_text(exc: ExplorerError) -> str:
    """An engine error as the app shows it (Markdown): the engine's words, made literal since they may quote a
    document or a model, then what to do here.
    """
    hint = HINTS.get(exc.remedy) if exc.remedy else None
    said = md(masked(str(exc)))
    return f"{said}. {hint}" if hint else said


def masked(text: str) -> str:
    """An engine error or a job's reason as the app may show it: the database URL's password masked wherever it
    appears, since a driver's message may quote what it could not read of the URL.
    """
    return without_password(text, load_settings().db_path)


@st.cache_resource(show_spinner=False)
def _embedder(name: str, api_base: str | None, timeout_s: float, retries: int, runtime: EmbeddingRuntime):
    """The embedding model, once per process (loading it takes seconds); it loads on first use."""
    return make_embedder(name, api_base, timeout_s, retries=retries, runtime=runtime)


@st.cache_resource(show_spinner=False)
def _runtime(key: str) -> Runtime:
    settings = load_settings()
    return open_runtime(
        settings,
        embedder=_embedder(
            settings.embedding_model,
            settings.api_base,
            settings.timeout_s,
            settings.retries,
            settings.embedding_runtime,
        ),
    )


def runtime() -> Runtime:
    """The runtime for the current settings (EXPLORER_DB and friends), shared by every page and visitor."""
    return _runtime(repr(load_settings()))


def offline_notice(rt: Runtime) -> None:
    """Said plainly on every page that shows model output."""
    if rt.settings.offline:
        st.info(OFFLINE_NOTICE + " (see Settings).", icon=":material/info:")


def session_label(session: Session) -> str:
    """A session as a selectbox option (plain text, never Markdown)."""
    return f"{session.name} · {session.status} · {session.step_count} steps · {session.id[:8]}"


def linked_option(wanted: str, options: Sequence[T]) -> T | None:
    """The option a link names: its id exactly, or (for ids) a prefix only one of them has, as pages show ids
    by their first characters.
    """
    exact = [option for option in options if option is not None and str(option) == wanted]
    if exact:
        return exact[0]
    if len(wanted) < SHORT_ID_DIGITS:  # the engine's rule for a short id, as the CLI and the API take them
        return None
    starting = [option for option in options if isinstance(option, str) and option.startswith(wanted)]
    return starting[0] if len(starting) == 1 else None


def linked_selectbox(
    label: str,
    options: Sequence[T],
    *,
    key: str,
    param: str,
    format_func: Callable[[T], str] = str,
    on_change: Callable[[], None] | None = None,
    clicked: T | None = None,
    default: T | None = None,
    what: str = "item",
) -> T:
    """A selectbox whose choice is also in the URL (``?param=value``), so a link or a refresh opens the page on it.

    What it shows, first rule that applies: ``clicked`` when it is new (a table row picked this run), what the
    URL names when the widget holds something else (a link was followed, a URL edited), the widget's own choice,
    ``default`` (else the first option). A choice a person makes (in the widget or by clicking) is written to the
    URL; what the page chose by itself is not, since every change of the URL is a step for the back button, and
    going back to the URL without a choice shows ``default`` again. A link to something this database does not
    hold says so, and shows ``default``.
    """
    seen, in_url, labels = f"{key}__clicked", f"{key}__url", f"{key}__labels"

    def unlabel() -> bool:
        """Streamlit's browser side keeps the label of its choice, and when that label has changed since (a
        session's step count after a walk), Streamlit hands the old label over as a new value: put back the option
        it labelled (True), which nobody chose.
        """
        value = st.session_state.get(key)
        if value not in options and isinstance(value, str) and value in st.session_state.get(labels, {}):
            st.session_state[key] = st.session_state[labels][value]
            return True
        return False

    def follow() -> None:
        if unlabel():
            return
        set_url_param(param, st.session_state[key])
        if on_change is not None:
            on_change()

    if not unlabel() and key in st.session_state and st.session_state[key] in options:
        st.session_state[key] = st.session_state[key]  # sent back to the browser, with its label as it is now
    wanted = st.query_params.get(param)
    if clicked is not None and clicked != st.session_state.get(seen) and clicked in options:
        st.session_state[key] = clicked
        set_url_param(param, clicked)
    elif wanted is not None and wanted != str(st.session_state.get(key)):
        match = linked_option(wanted, options)
        if match is None:
            shown = "the first" if default is None else str(format_func(default))
            st.warning(
                f"The link names {what} {md(wanted)}, which is not here; showing {md(shown)}.",
                icon=":material/link_off:",
            )
            if default in options:
                st.session_state[key] = default
        else:
            st.session_state[key] = match
    elif wanted is None and st.session_state.get(in_url) is not None and default in options:
        st.session_state[key] = default  # back to the entry before any choice (the back button): it showed this
    elif key not in st.session_state and default in options:
        st.session_state[key] = default
    st.session_state[seen], st.session_state[in_url] = clicked, wanted
    # every label shown so far: the browser may hold one from several runs back (it keeps its choice's label)
    st.session_state[labels] = st.session_state.get(labels, {}) | {format_func(o): o for o in options}
    return st.selectbox(label, options, key=key, format_func=format_func, on_change=follow)


def set_url_param(param: str, value: object) -> None:
    """Name ``value`` in the URL (``?param=value``), or drop the parameter for ``None``."""
    if value is None:
        st.query_params.pop(param, None)
    elif st.query_params.get(param) != str(value):
        st.query_params[param] = str(value)


def pick_session(rt: Runtime, key: str, *, allow_none: str | None = None, label: str = "Session") -> Session | None:
    """A session selectbox that remembers the choice across pages (``st.session_state[CURRENT]``) and in the
    URL (``?session=ID``); with nothing chosen yet, the most recent session.
    """
    sessions = wander.list_sessions(rt, limit=500)
    if not sessions:
        st.info("No wander session yet: create one on the Sessions page.", icon=":material/explore:")
        return None
    options: list[str | None] = ([None] if allow_none else []) + [s.id for s in sessions]
    by_id = {s.id: s for s in sessions}
    current = st.session_state.get(CURRENT)
    if current is None or current not in options:
        current = sessions[0].id  # sessions come newest first
    if (
        key not in st.session_state
        or st.session_state[key] not in options
        or (st.session_state[key] is not None and st.session_state[key] != current)
    ):
        st.session_state[key] = current  # another page (or a new session) changed the choice

    def remember() -> None:
        st.session_state[CURRENT] = st.session_state[key]

    chosen = linked_selectbox(
        label,
        options,
        key=key,
        param=SESSION_PARAM,
        what="session",
        on_change=remember,
        format_func=lambda sid: (allow_none or "") if sid is None else session_label(by_id[sid]),
    )
    if chosen is not None:
        st.session_state[CURRENT] = chosen
    return by_id.get(chosen) if chosen else None


def layer_switches(layers: Sequence[str], key: str) -> set[str]:
    """The map's layers as switches, every one on at first; the ones on."""
    chosen = st.pills(
        "Layers", list(layers), default=list(layers), selection_mode="multi", format_func=LAYER_LABELS.get, key=key
    )
    return set(chosen or [])


def waiting_for_review(session: Session) -> bool:
    """Paused by the engine for a person: a human checkpoint or the circuit breaker."""
    return session.status == "paused" and session.pause_kind in ("checkpoint", "circuit_breaker")


def checkpoint_banner(session: Session) -> None:
    if not waiting_for_review(session):
        return
    if session.pause_kind == "checkpoint":
        st.warning(
            f"**{md(session.name)} waits at a human checkpoint** after step {session.step_count}: review its "
            "trace and crystals, then resume it on the Sessions page.",
            icon=":material/front_hand:",
        )
    else:
        st.warning(
            f"**{md(session.name)} stopped: {md(session.status_reason)}** (after step {session.step_count}). Review "
            "its trace, steer it if needed, then resume it on the Sessions page.",
            icon=":material/front_hand:",
        )


class ProgressBar:
    """A ``(done, total, note)`` callback drawing a Streamlit progress bar, plus an optional
    ``every`` callback throttled to once per ``interval_s`` (live map and counts).
    """

    def __init__(self, label: str, every: Callable[[int, int], None] | None = None, interval_s: float = 2.0):
        self.label = label
        self.bar = st.progress(0.0, text=f"{label}…")
        self.every = every
        self.interval_s = interval_s
        self._last = time.monotonic()

    def __call__(self, done: int, total: int, note: str, phase: str = "") -> None:
        fraction = 0.0 if total <= 0 else min(1.0, done / total)
        count = f"{done}/{total}" if total else ""
        where = " · ".join(part for part in (phase, count, note) if part)
        self.bar.progress(fraction, text=md(f"{self.label}: {where or '…'}"[:200]))
        if self.every and (time.monotonic() - self._last >= self.interval_s or done >= total):
            self._last = time.monotonic()
            self.every(done, total)

    def done(self, text: str) -> None:
        """The bar full, with ``text`` (Markdown: untrusted parts through ``md``)."""
        self.bar.progress(1.0, text=text)


# -- background jobs ---------------------------------------------------------------------
# A long run is a job for the worker process, not part of the page's script: leaving or reloading the page does
# not stop it, and every page (and the command line) can follow it.

JOB_POLL_S = 1.0  # how often a page following a job looks at it


def start_job(rt: Runtime, kind: str, params: dict, key: str) -> Job:
    """Queue a job and remember it under ``key`` in this visitor's session, for :func:`follow_job`."""
    job = jobs.submit(rt, kind, params)
    st.session_state[key] = job.id
    return job


def job_progress(job: Job, label: str) -> None:
    """A job's progress bar: the phase its run is in, how far it got and the item it is on (plain text: the item
    may be a model's words).
    """
    fraction = 0.0 if job.total <= 0 else min(1.0, job.done / job.total)
    waiting = "waiting for a worker" if job.status == "queued" else "starting"
    count = f"{job.done}/{job.total}" if job.total else ""
    where = " · ".join(part for part in (job.phase, count, job.current) if part) or waiting
    st.progress(fraction, text=md(f"{label}: {where}"[:200]))


def cancel_button(rt: Runtime, job: Job, key: str) -> None:
    """Cancel a job (a running one stops after the item it is on; what it finished stands)."""
    label = "Cancelling…" if job.cancel_requested else "Cancel"
    if st.button(label, icon=":material/cancel:", key=key, disabled=job.cancel_requested):
        jobs.cancel(rt, job.id)


def follow_job(rt: Runtime, key: str, label: str, while_running: Callable[[Job], None] | None = None) -> Job | None:
    """The job remembered under ``key``: while it runs, its progress live (and ``while_running`` drawn with it,
    e.g. a growing map), refreshed every :data:`JOB_POLL_S` without reloading the page; once it has ended, the
    whole page reruns and this returns the job, once, for the page to say how it went.
    """
    job_id = st.session_state.get(key)
    if not job_id:
        return None
    job = jobs.get(rt, job_id)
    if job.status.ended:
        del st.session_state[key]
        return job

    @st.fragment(run_every=JOB_POLL_S)
    def live() -> None:
        current = jobs.get(rt, job_id)
        if current.status.ended:
            st.rerun()  # the whole page: it shows the outcome and what the job changed
        job_progress(current, label)
        cancel_button(rt, current, key=f"cancel_{key}")
        if while_running is not None:
            while_running(current)

    live()
    return None


def job_outcome(job: Job, succeeded: str) -> None:
    """How a followed job ended: ``succeeded`` (Markdown; untrusted parts through ``md``), or why it did not."""
    if job.status == "succeeded":
        st.progress(1.0, text=succeeded)
    elif job.status == "cancelled":
        st.warning(f"Cancelled: {md(masked(job.error or ''))}", icon=":material/cancel:")
    else:
        st.error(f"The job failed: {md(masked(job.error or 'no reason given'))}", icon=":material/error:")


def preparation_notice(rt: Runtime) -> None:
    """While ``explorer demo`` prepares the demo in the background: how far it got, live, above every page; the
    page reruns once it is done, so it shows what was made.
    """
    preparing = jobs.list_jobs(rt, status="active", kind=demo.JOB_KIND)
    if not preparing:
        return

    @st.fragment(run_every=JOB_POLL_S)
    def live() -> None:
        job = jobs.get(rt, preparing[0].id)
        if job.status.ended:
            st.rerun()
        with st.container(border=True):
            st.markdown(
                "**The demo is being prepared** in the background: the sample corpus is read, the map fitted, a "
                "session walked to a checkpoint, then a few dreams and a consolidation. Pages fill in as it goes."
            )
            job_progress(job, "demo")

    live()


@st.fragment(run_every=5.0)
def jobs_panel(rt: Runtime) -> None:
    """The sidebar's jobs: what runs or waits now, wherever it was started, with its progress and a cancel
    button, and the last few that ended.
    """
    found = jobs.list_jobs(rt, limit=8)
    active = [job for job in found if not job.status.ended]
    ended = [job for job in found if job.status.ended][:3]
    if not found:
        return
    st.caption("Jobs")
    for job in active:
        job_progress(job, label_of(job.kind))
        cancel_button(rt, job, key=f"panel_cancel_{job.id}")
    for job in ended:
        st.caption(md(f"{label_of(job.kind)}: {job.status.value}" + (f" ({masked(job.error)})" if job.error else "")))
