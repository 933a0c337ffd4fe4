"""A session's live event feed: its steps, crystals and warnings as they happen, whichever process walks it (a
background job, the command line, the API), read from the store every few seconds without reloading the page.
"""

from __future__ import annotations

import streamlit as st

from explorer.records.wander import Session
from explorer.runtime import Runtime
from explorer.views import session_feed
from pages import untrusted

EVERY_S = 2.0  # a short read of the store each time; the walk's writes barely wait for it


def show(rt: Runtime, session: Session) -> None:
    """The feed, newest first, polling while the session can still take steps."""
    st.subheader("Live events")

    @st.fragment(run_every=EVERY_S if session.status in ("active", "paused") else None)
    def feed() -> None:
        entries = session_feed(rt, session.id)
        with st.container(height=320, key="event_feed"):
            for entry in entries:
                label = f"{entry.at:%H:%M:%S} · {entry.headline}"
                if entry.text:
                    untrusted.text(label, entry.text)
                else:
                    st.caption(untrusted.md(label))

    feed()
