"""PDF, read by pypdf (BSD-3-Clause): it took a quarter of pdfplumber's time for the same words on a 45-page
printed manual page (1.0 s against 4.4 s, 15,674 words each, line for line alike), and needs nothing beyond itself.

A PDF has no headings to read, only pages and, when its maker wrote one, an outline (bookmarks). Sections follow
the outline where there is one (each entry's heading line on its page starts its section), else each page is a
section titled "page N", so a chunk's provenance names where in the file it stands. The document's title and date
come from its metadata. A PDF without a text layer (a scan) or one pypdf cannot open is an error saying so.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from typing import Any

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from explorer.reading.formats import Reading, Section, gathered, is_rule

_NUMBER = re.compile(r"(?:\d+|[A-Z])(?:\.\d+)*\.?|Chapter \d+:?|Appendix [A-Z]:?")
logging.getLogger("pypdf").setLevel(logging.ERROR)  # a damaged file is reported as our error, not its warnings


def read_pdf(data: bytes) -> Reading:
    """The text of each page as sections, titled by the outline entry it falls under or by its page number."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ValueError("the PDF is encrypted with a password")
        pages = [_page_text(page) for page in reader.pages]
        outline = _outline(reader)
        meta: Any = reader.metadata or {}
    except (PdfReadError, OSError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a PDF that can be read ({exc})") from None
    if not any(page.strip() for page in pages):
        raise ValueError("the PDF has no text layer (a scan?): nothing to read without OCR")
    sections = gathered(_sections(pages, outline))
    date = meta.get("/CreationDate")
    return Reading(
        sections,
        title=str(meta.get("/Title") or "").strip() or None,
        year=str(date)[2:6] if isinstance(date, str) and str(date).startswith("D:") else None,
    )


def _page_text(page: Any) -> str:
    return "\n".join(line for line in (page.extract_text() or "").splitlines() if not is_rule(line))


def _outline(reader: PdfReader) -> dict[int, list[str]]:
    """The outline's entries by the page they start on (0-based), in order: empty when the PDF has none."""
    starts: dict[int, list[str]] = {}

    def walk(entries: list[Any]) -> None:
        for entry in entries:
            if isinstance(entry, list):
                walk(entry)
                continue
            number = reader.get_destination_page_number(entry)
            if number is not None and number >= 0 and str(entry.title or "").strip():
                starts.setdefault(number, []).append(" ".join(str(entry.title).split()))

    walk(reader.outline)
    return starts


def _heads(line: str, title: str) -> bool:
    """Whether ``line`` is the heading ``title`` names, maybe after its number ("2.2 Naming" for "Naming")."""
    words = " ".join(line.split())
    return words == title or (words.endswith(" " + title) and bool(_NUMBER.fullmatch(words[: -len(title) - 1])))


def _sections(pages: list[str], outline: dict[int, list[str]]) -> Iterator[Section]:
    """Each page's lines under the outline entry they follow: an entry's heading line (found on its page) starts
    its section; one not found as a line starts at the top of its page. Without an outline, "page N".
    """
    title: str | None = None
    for number, text in enumerate(pages):
        if not outline:
            yield Section(text, f"page {number + 1}")
            continue
        expected = list(outline.get(number, []))
        lines = text.splitlines()
        if expected and not any(_heads(line, expected[0]) for line in lines):
            title = expected.pop(0)
        held: list[str] = []
        for line in lines:
            if expected and _heads(line, expected[0]):
                yield Section("\n".join(held), title)
                title, held = expected.pop(0), []
            else:
                held.append(line)
        yield Section("\n".join(held), title)
        title = expected[-1] if expected else title
