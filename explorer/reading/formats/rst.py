"""reStructuredText, parsed by docutils into a doctree whose sections give the titles.

Safety first: no file is included and no raw HTML passed on (``file_insertion_enabled``, ``raw_enabled`` off),
no configuration file is read, and no problem raises or prints (``report_level``/``halt_level`` 5). Admonitions
(``.. note::``) read as prose and inline literals keep their backticks; literal and code blocks (``::``,
``.. code-block::``, doctests) are code. What docutils does not know, Sphinx's roles and directives mostly, is not
lost: an unknown role reads as its text (``:ref:`Sorting <x>``` as "Sorting"; one that names code, ``:func:`len```,
as inline code), an unknown directive (``.. versionadded:: 3.2``) as its argument and body, read again as rST
(``.. doctest::``-like ones as code).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator

from docutils import nodes
from docutils.core import publish_doctree

from explorer.reading.formats import Reading, Section, gathered, readable

_SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
}
_SKIPPED = (nodes.comment, nodes.substitution_definition, nodes.target, nodes.raw, nodes.title, nodes.docinfo)
_CODE = (nodes.literal_block, nodes.doctest_block)
_CODE_DIRECTIVES = frozenset({"sourcecode", "doctest", "testcode", "testoutput", "productionlist"})
# Sphinx's directives that say where a text stands or is indexed, not what it says
_QUIET_DIRECTIVES = frozenset(
    {"index", "toctree", "module", "currentmodule", "highlight", "sectionauthor", "moduleauthor", "literalinclude"}
)
# :role:`text` or :role:`text <target>`: the text; no backtick inside, so each opener is tried once.
_ROLE = re.compile(r":([\w.+-]+):`([^`]*?)(?:\s*<[^<>`]*>)?`")
# Sphinx's roles that name code: their text stays marked as inline code
_CODE_ROLES = frozenset(
    {"func", "meth", "class", "attr", "mod", "data", "const", "exc", "obj", "option", "envvar", "program", "file"}
    | {"command", "samp", "kbd", "code"}
)
_DIRECTIVE = re.compile(r"\.\.\s+([\w.+-]+)::[ \t]*(.*)")


def read_rst(text: str) -> Reading:
    """The sections of a reStructuredText document, its title and date (docinfo ``:Date:``) as it gives them."""
    document = _doctree(text)
    dates = list(document.findall(nodes.date))
    return Reading(
        readable(gathered(_sections(document, None)), "the document"),
        title=document.get("title") or None,
        year=dates[0].astext().strip() if dates else None,
    )


def _doctree(text: str) -> nodes.document:
    try:
        return publish_doctree(text, settings_overrides=_SETTINGS)
    except Exception as exc:  # docutils has failed on odd input before; one file must not stop an ingest
        raise ValueError(f"not reStructuredText docutils can read ({type(exc).__name__}: {exc})") from None


def _sections(node: nodes.Element, title: str | None) -> Iterator[Section]:
    for child in node.children:
        if isinstance(child, nodes.section):
            yield from _sections(child, child[0].astext() if child.children else title)
        elif isinstance(child, _CODE):
            yield Section(child.astext(), title, code=True)
        elif isinstance(child, nodes.system_message):
            yield from _unknown_directive(child, title)
        elif isinstance(child, _SKIPPED) or not isinstance(child, nodes.Element) or _is_contents(child):
            continue
        elif isinstance(child, nodes.TextElement):
            yield Section(_inline(child), title)
        else:
            yield from _sections(child, title)


def _inline(node: nodes.Element) -> str:
    """An element's words: inline literals kept in backticks (code is never a theme), unknown roles as their text."""
    parts = []
    for child in node.children:
        if isinstance(child, nodes.literal):
            parts.append(f"`{child.astext()}`")
        elif isinstance(child, nodes.problematic):
            parts.append(_ROLE.sub(_role, child.astext()))
        elif isinstance(child, nodes.Element):
            parts.append(_inline(child))
        else:
            parts.append(child.astext())
    return "".join(parts)


def _role(match: re.Match[str]) -> str:
    text = match[2].lstrip("~!")
    return f"`{text}`" if match[1].split(":")[-1] in _CODE_ROLES else text


def _is_contents(node: nodes.Element) -> bool:
    """Whether ``node`` is a table of contents (``.. contents::``): the titles again, not text."""
    return isinstance(node, nodes.topic) and "contents" in node["classes"]


def _unknown_directive(message: nodes.system_message, title: str | None) -> Iterator[Section]:
    """What an unknown directive holds (docutils keeps its source in the error it reports): its argument and
    body as prose, or as code for a directive of code; nothing for any other problem.
    """
    blocks = list(message.findall(nodes.literal_block))
    if "Unknown directive type" not in message.astext() or not blocks:
        return
    first, _, body = blocks[0].astext().partition("\n")
    match = _DIRECTIVE.match(first)
    if not match or match[1] in _QUIET_DIRECTIVES:
        return
    body = textwrap.dedent(body)
    if match[1] in _CODE_DIRECTIVES:
        yield Section(body, title, code=True)
        return
    if match[2].strip():
        yield Section(match[2].strip(), title)
    if body.strip():
        yield from _sections(_doctree(body), title)
