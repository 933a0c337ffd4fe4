"""Colours shared by every figure, so a domain has one colour in the app and in an archive."""

from __future__ import annotations

import html
from collections.abc import Iterable

# Plotly's D3 qualitative palette, then Alphabet for corpora with many domains.
_QUALITATIVE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#AA0DFE",
    "#3283FE",
    "#85660D",
    "#782AB6",
    "#565656",
    "#1C8356",
    "#16FF32",
    "#F7E1A0",
    "#E2E2E2",
    "#1CBE4F",
    "#C4451C",
    "#DEA0FD",
    "#FE00FA",
    "#325A9B",
    "#FEAF16",
    "#F8A19F",
    "#90AD1C",
    "#F6222E",
    "#1CFFCE",
    "#2ED9FF",
)
UNKNOWN_DOMAIN = "(no domain)"
UNKNOWN_COLOUR = "#9aa0a6"
PATH_COLOUR = "#1e293b"
SELECTED_COLOUR = "#e8590c"  # the ring around what a person selected: no domain, path or crystal uses it
CRYSTAL_FILL = "#ffd43b"
CRYSTAL_LINE = "#7a5800"
APPROVED_LINE = "#2b8a3e"
HALO_COLOUR = (245, 159, 0)  # amber, drawn with an alpha that fades with decay
DREAM_LINE = "#7048e8"
LINK_COLOUR = "#7048e8"
# A pattern's cluster: dark, saturated colours, apart from the corpus's domain palette they are drawn over.
CLUSTER_COLOURS = ((12, 133, 153), (201, 42, 42), (95, 61, 196), (43, 138, 62), (232, 89, 12), (134, 46, 156))


def domain_colours(domains: Iterable[str | None]) -> dict[str, str]:
    """One colour per domain, by sorted name (stable for a given set of domains)."""
    names = sorted({d or UNKNOWN_DOMAIN for d in domains} - {UNKNOWN_DOMAIN})
    colours = {name: _QUALITATIVE[i % len(_QUALITATIVE)] for i, name in enumerate(names)}
    colours[UNKNOWN_DOMAIN] = UNKNOWN_COLOUR
    return colours


def hover_text(text: str | None, limit: int = 160) -> str:
    """Model or corpus text for a hover label: shortened, on one line, and escaped, since
    Plotly reads tags in hover text and model output is shown as text, never as HTML.
    """
    text = " ".join((text or "").split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return html.escape(text, quote=False)
