"""The app's pages (``app.py`` lists them with ``st.navigation``) and the modules they share.

Streamlit takes a folder named ``pages/`` beside the main script for an old-style multipage app until the
main script has called ``st.navigation`` once in the server's life. So when the first request after a start
is a page's own URL (a bookmark, a refresh after a restart), Streamlit runs that file alone under a
navigation made from file names, ``common`` and ``untrusted`` among them. Every page imports this package
first, and the first import in a process turns that mode off and reruns: the rerun goes through ``app.py``,
whose navigation opens the same URL with the app's own sidebar.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:
    PagesManager.uses_pages_directory = False
    st.rerun()
