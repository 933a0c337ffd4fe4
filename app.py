"""Dream Explorer's app: navigation, the shared sidebar and banner. Each page is a file in pages/.

streamlit run app.py        (or: explorer demo)
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # `streamlit run` adds it; AppTest and other runners may not
    sys.path.insert(0, str(ROOT))

from explorer.errors import ExplorerError  # noqa: E402
from explorer.wander import service as wander  # noqa: E402
from pages import common, signin  # noqa: E402
from pages.untrusted import md  # noqa: E402

log = logging.getLogger("explorer.app")

st.set_page_config(page_title="Dream Explorer", page_icon=":material/bubble_chart:", layout="wide")

PAGES = [
    st.Page("pages/corpus.py", title="Corpus", icon=":material/library_books:", default=True),
    st.Page("pages/sessions.py", title="Sessions", icon=":material/explore:"),
    st.Page("pages/map.py", title="Map", icon=":material/scatter_plot:"),
    st.Page("pages/crystals.py", title="Crystals", icon=":material/diamond:"),
    st.Page("pages/resonances.py", title="Resonances", icon=":material/graphic_eq:"),
    st.Page("pages/trace.py", title="Trace", icon=":material/timeline:"),
    st.Page("pages/dreams.py", title="Dreams", icon=":material/bedtime:"),
    st.Page("pages/consolidation.py", title="Consolidation", icon=":material/neurology:"),
    st.Page("pages/settings.py", title="Settings", icon=":material/settings:"),
]
admitted = signin.admitted()  # a deployment that names its people shows nothing before its sign-in
page = st.navigation(PAGES, position="sidebar" if admitted else "hidden")


def sidebar() -> None:
    rt = common.runtime()
    with st.sidebar:
        signin.sidebar()
        st.caption(f"Database: {md(rt.db.location)}")  # a URL's password is never shown
        if rt.settings.offline:
            st.caption("Models: built-in offline provider (extractive, not a language model)")
        else:
            st.caption(f"Models: local `{rt.settings.local_model or '—'}`, cloud `{rt.settings.cloud_model or '—'}`")
        waiting = [s for s in wander.list_sessions(rt, status="paused", limit=200) if common.waiting_for_review(s)]
        for session in waiting[:5]:
            st.warning(
                f"**{md(session.name)}** waits for review at step {session.step_count}", icon=":material/front_hand:"
            )
        common.jobs_panel(rt)


try:
    if not admitted:
        signin.screen()  # stops the run
    sidebar()
    common.preparation_notice(common.runtime())
    page.run()
except ExplorerError as exc:  # a user-facing problem (a busy database, a bad input): one line, no traceback
    st.error(common.error_text(exc), icon=":material/error:")
except Exception:  # a bug: the viewer gets one line, the log the traceback (st.stop and st.rerun are not Exceptions)
    log.exception("page %s failed", page.title)
    st.error(common.UNEXPECTED, icon=":material/error:")
