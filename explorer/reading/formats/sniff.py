"""Which markup a ``.txt`` file is written in: reStructuredText and AsciiDoc are both saved as ``.txt`` (Debian's
docutils and git documentation are), and each reads as noise when taken for plain text.
"""

from __future__ import annotations

import re
from typing import Literal

from explorer.reading.formats.asciidoc import asciidoc_marks

TextKind = Literal["rst", "asciidoc", "plain"]
SNIFFED_LINES = 400
# ".. note::", ".. _target:", ".. |name| image::", "`text`_", ":role:`text`": markup only rST has
_RST_MARK = re.compile(r"^\.\. (?:[\w:-]+::|_[^:\n]+:|\|[^|\n]+\|)|`[^`\n]+`__?(?!\w)|:[\w-]+:`[^`\n]+`", re.M)
_UNDERLINE = re.compile(r"([=\-~^+*#])\1{2,}[ \t]*")


def text_kind(text: str) -> TextKind:
    """``"asciidoc"`` when AsciiDoc's own markup outweighs rST's (once is enough when rST's is absent), ``"rst"``
    when rST's is there or titles are underlined (docutils reads those best), else ``"plain"``.
    """
    head = "\n".join(text.splitlines()[:SNIFFED_LINES])
    asciidoc = asciidoc_marks(head.splitlines())
    rst = len(_RST_MARK.findall(head))
    if asciidoc > rst:
        return "asciidoc"
    return "rst" if rst or _underlined_title(head.splitlines()) else "plain"


def _underlined_title(lines: list[str]) -> bool:
    """Whether a line of words is underlined as rST underlines a title: a rule at least as long as the line."""
    return any(
        title[:1].strip() and re.search(r"\w", title) and _UNDERLINE.fullmatch(below) and len(below) >= len(title)
        for title, below in zip(lines, lines[1:], strict=False)
    )
