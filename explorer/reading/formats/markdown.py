"""Markdown, read with markdown-it-py (CommonMark and its tables): ATX and setext headings title the sections,
fenced and indented code stays code, rules vanish, and inline markup (emphasis, links, HTML tags) gives way to
the words it marks; inline code keeps its backticks, the one mark that tells code from prose. Front matter and a
vault's own syntax (wikilinks, callouts, tags) are the loader's, read before this (:mod:`explorer.reading.vault`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

from explorer.reading.formats import Reading, Section, gathered, readable

_PARSER = MarkdownIt("commonmark").enable("table")
_TAG = re.compile(r"<[^<>]*>")


def read_markdown(text: str) -> Reading:
    """The sections of a Markdown text (after its front matter), its first top heading as the title."""
    tokens = _PARSER.parse(text)
    sections = readable(gathered(_sections(tokens)), "the note")
    first = next((i for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h1"), None)
    return Reading(sections, title=None if first is None else _inline(tokens[first + 1]))


def _sections(tokens: Sequence[Token]) -> Iterator[Section]:
    title: str | None = None
    row: list[str] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            title = _inline(tokens[index + 1]) or title
        elif token.type in ("fence", "code_block"):
            yield Section(token.content, title, code=True)
        elif token.type == "html_block":
            yield Section(_TAG.sub(" ", token.content), title)
        elif token.type == "inline" and tokens[index - 1].type in ("th_open", "td_open"):
            row.append(_inline(token))
        elif token.type == "tr_close":
            yield Section("; ".join(cell for cell in row if cell), title)
            row = []
        elif token.type == "inline" and tokens[index - 1].type != "heading_open":
            yield Section(_inline(token), title)


def _inline(token: Token) -> str:
    """An inline token's words: text as written, inline code in backticks, images by their description, breaks
    as breaks, and every other mark (emphasis, link, HTML tag) gone.
    """
    words: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "image"):  # an image's content is its description
            words.append(child.content)
        elif child.type == "code_inline":  # inline code stays marked: code is never a theme
            words.append(f"`{child.content}`")
        elif child.type in ("softbreak", "hardbreak"):
            words.append("\n")
    return "".join(words).strip()
