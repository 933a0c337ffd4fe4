"""Who is using the app, when the deployment names its people (``EXPLORER_TOKENS``).

With named tokens set, ``app.py`` shows only a sign-in screen until this browser session gives one of them, and
every review made afterwards is logged under that token's name: the Crystals page shows the name where the
reviewer field was. The check is the API's (:class:`explorer.people.Tokens`, every token compared in constant
time), made again at each run, so a token taken out of the settings ends its holder's sign-in at the next click.

Without named tokens nothing changes: the app, on this machine unless ``--host`` says otherwise, names nobody, and a
reviewer types a name as before. The API's single token (``--token``, ``EXPLORER_API_TOKEN``) names nobody either,
so it opens only the API: signing in here with it would put a typed name back in the log.
"""

from __future__ import annotations

import streamlit as st

from explorer.errors import ExplorerError
from explorer.people import Tokens
from explorer.settings import SettingsError, load_settings
from pages.untrusted import md

SIGNED_IN = "signed_in_token"  # this browser session's token; session state stays on the server
REFUSED = "That token is not one of this app's. Check it and try again."


class SignedOut(ExplorerError):
    """A review asked for by a browser session whose token no longer signs anyone in (taken out of the settings)."""


def _tokens() -> Tokens:
    return Tokens(named=load_settings().tokens)


def person() -> str | None:
    """The name this browser session signed in as; ``None`` when it has not (or the deployment names nobody)."""
    presented = st.session_state.get(SIGNED_IN)
    return _tokens().holder(presented.encode())[1] if presented else None


def admitted() -> bool:
    """Whether this browser session may see the pages: the deployment names nobody, or the session signed in.

    Settings that cannot be read admit nobody; the sign-in screen then says what is wrong with them.
    """
    try:
        return not load_settings().tokens or person() is not None
    except SettingsError:
        return False


def reviewer(typed: str | None) -> str | None:
    """Who a review made in this browser session is logged under: the signed-in name when the deployment names
    its people (whatever was typed), else what the person typed (``None``: the engine's default).
    """
    if not load_settings().tokens:
        return typed
    name = person()
    if name is None:  # a click's callback runs before app.py could show the sign-in screen again
        raise SignedOut("this browser is no longer signed in: reload the page and sign in again")
    return name


def screen() -> None:
    """The sign-in screen alone, then stop the run: one password field; a wrong token is told so, nothing more."""
    tokens = _tokens()
    st.title("Dream Explorer")
    st.caption("Sign in with your token: the reviews you make here are logged under its name.")
    with st.form("sign_in_form", clear_on_submit=True):
        typed = st.text_input("Token", type="password", key="sign_in_token")
        submitted = st.form_submit_button("Sign in", key="sign_in", type="primary", icon=":material/login:")
    if submitted:
        token = (typed or "").strip()
        if tokens.holder(token.encode())[1] is not None:  # the unnamed API token, if set, is not among these
            st.session_state[SIGNED_IN] = token
            st.rerun()
        st.error(REFUSED, icon=":material/error:")
    st.stop()


def _sign_out() -> None:
    # Everything this browser session kept goes with it: the next person at this browser must not undo the
    # previous one's decisions from the review queue's stack under their own name.
    st.session_state.clear()


def sidebar() -> None:
    """Who is signed in, and a way out (nothing when the deployment names nobody)."""
    name = person()
    if name is None:
        return
    st.caption(f"Signed in as {md(name)}")
    st.button("Sign out", key="sign_out", icon=":material/logout:", on_click=_sign_out)
