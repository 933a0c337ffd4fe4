"""How a page shows untrusted text: whatever a model wrote or a document said, and engine errors that quote them.

Streamlit reads Markdown almost everywhere: ``st.markdown``, headers, captions, ``st.info``/``warning``/``error``/
``success``, toasts, progress text, and the labels of expanders, widgets, radio options and pills. There a model's
``![x](http://…)`` fetches an image, ``[a](http://…)`` or a bare ``http://…`` becomes a live link, ``:red[…]``
colours and ``$…$`` typesets. So untrusted text goes

- as a block of its own through :func:`text` (``st.text``: no Markdown, no HTML);
- inside a Markdown string (a caption, a label, a message) through :func:`md`, which makes it literal.

Places that never read Markdown take it as it is: ``st.text``, dataframes, ``st.json``, selectbox and multiselect
options (``format_func``), and plotly hover text (escaped by ``explorer.figures.palette.hover_text``).
"""

from __future__ import annotations

import streamlit as st

from explorer.text import inert_markdown


def md(value: object) -> str:
    """``value`` as literal text inside Streamlit Markdown: on one line, every Markdown character escaped
    (:func:`explorer.text.inert_markdown`; Streamlit reads ``:`` as markup too, which a Markdown file does not).
    """
    return inert_markdown(" ".join(str(value).split()))


def text(label: str | None, value: str | None) -> None:
    """A model's (or a document's) text under a small caption, shown as plain text."""
    if label:
        st.caption(md(label))
    st.text(value if value else "—")
