"""HTML: saved web pages and web clips, read by trafilatura (Apache-2.0), which keeps a page's main text and drops
its navigation, headers, footers and other boilerplate. Its Markdown rendering is read as Markdown
(:mod:`.markdown`), so headings title the sections and ``<pre>``/``<code>`` blocks stay code; the page's title,
its address (canonical link or ``og:url``) and a date its metadata states (only what the page declares: guessing a
date from its text found wrong ones) are what it says of itself. Sphinx's heading permalinks (``¶``) are dropped.
"""

from __future__ import annotations

import dataclasses

import lxml.html
import trafilatura
from trafilatura.utils import load_html

from explorer.reading.formats import Reading, Section, gathered
from explorer.reading.formats.markdown import read_markdown

_PERMALINKS = "¶#§ "


def read_html(html: str) -> Reading:
    """The main text of a page as sections, with its title, address and declared date; a ``ValueError`` when it
    has no main text.
    """
    tree = _headings_unlinked(html)
    body = trafilatura.extract(
        tree,
        output_format="markdown",
        include_formatting=True,
        include_tables=True,
        include_comments=False,
        include_links=False,
        favor_recall=True,
    )
    if not body or not body.strip():
        raise ValueError("no main text found in the page")
    meta = trafilatura.extract_metadata(tree, extensive=False)
    reading = read_markdown(body)
    sections = gathered(
        Section(s.text, s.title.rstrip(_PERMALINKS) if s.title else None, s.code) for s in reading.sections
    )
    title = (meta.title if meta and meta.title else reading.title) or None
    return dataclasses.replace(
        reading,
        sections=sections,
        title=title.rstrip(_PERMALINKS) if title else None,
        source=meta.url if meta else None,
        year=meta.date if meta else None,
    )


def _headings_unlinked(html: str) -> lxml.html.HtmlElement:
    """The page parsed, each heading's links reduced to their text, and its body an ``<article>`` when it has
    neither that nor ``<main>``: trafilatura drops a heading that is a link (docutils links every heading back to
    the table of contents), and in a page of plain ``<div>`` s every heading of a section holding a list
    (docutils' and Asciidoctor's pages), and with them the sections' titles.
    """
    if not html.strip():
        raise ValueError("empty page")
    tree = load_html(html)
    if tree is None:
        raise ValueError("not an HTML page that can be parsed")
    for link in tree.xpath("//h1//a | //h2//a | //h3//a | //h4//a | //h5//a | //h6//a"):
        link.drop_tag()
    body = tree.find("body")
    if body is not None and not tree.xpath("//main | //article"):  # a <div> page: see the docstring
        article = lxml.html.Element("article")
        article.extend(list(body))
        body.append(article)
    return tree
