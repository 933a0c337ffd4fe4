"""Format readers: each turns one kind of file into its sections and what the file says of itself.

One short module per format (:mod:`.markdown`, :mod:`.rst`, :mod:`.asciidoc`, :mod:`.html`, :mod:`.pdf`,
:mod:`.plain`, :mod:`.chat`), each a pure function of the file's text (or bytes) to a :class:`Reading`. Markup is
structure, not content: a heading titles the sections under it, rules and delimiter lines vanish, directives and
attribute lines are read for what they hold or dropped, and a code block stays code (``code=True``), shown as
written and never taken for a theme. :func:`explorer.reading.loaders.load_file` picks the reader by suffix.

A reader that finds nothing to read (a PDF with no text layer, an HTML page with no body) raises ``ValueError``
saying why; the loader turns it into a ``LoadError`` for that file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """A stretch of a document under one heading: its prose with the markup taken out, or a code block.

    ``title`` is the heading it stands under (None before the first heading); a code block is kept as code and
    marked, so it is read and shown but never taken for a theme.
    """

    text: str
    title: str | None = None
    code: bool = False


@dataclass(frozen=True)
class Reading:
    """What a reader found in a file (or, for a chat export, in one conversation): its sections, and the title,
    date and address the file gives itself (None when it gives none). ``year`` is as the file writes it, a year
    or a date; the loader checks it as it checks front matter.
    """

    sections: tuple[Section, ...]
    title: str | None = None
    year: int | str | None = None
    source: str | None = None


def joined(sections: Iterable[Section]) -> str:
    """The sections' text as one text, a blank line between them: what is hashed and counted."""
    return "\n\n".join(s.text for s in sections if s.text.strip())


def gathered(sections: Iterable[Section]) -> tuple[Section, ...]:
    """``sections`` with the blank ones left out and neighbours of one title and kind joined, so a heading's
    paragraphs make one section (readers emit a section per block).
    """
    kept: list[Section] = []
    for section in sections:
        text = section.text.strip("\n") if section.code else section.text.strip()
        if not text.strip():
            continue
        if kept and kept[-1].title == section.title and kept[-1].code == section.code:
            kept[-1] = Section(f"{kept[-1].text}\n\n{text}", section.title, section.code)
        else:
            kept.append(Section(text, section.title, section.code))
    return tuple(kept)


# A line of rule characters only: "=====", "-----", "* * *"; structure in every plain-text convention.
_RULE = re.compile(r"[ \t]*([=\-_*~^+#.`'\"])(?:[ \t]*\1){2,}[ \t]*")


def is_rule(line: str) -> bool:
    """Whether ``line`` is only a rule (three or more of one punctuation character, spaces between allowed)."""
    return bool(_RULE.fullmatch(line))


def readable(sections: tuple[Section, ...], what: str) -> tuple[Section, ...]:
    """``sections`` when any holds a word; else the ``ValueError`` saying ``what`` had nothing to read."""
    if not any(re.search(r"\w", s.text) for s in sections):
        raise ValueError(f"no text to read in {what}")
    return sections
