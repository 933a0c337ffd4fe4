"""AsciiDoc, read by a light reader of its structure (no well-kept, permissively licensed Python library parses
AsciiDoc: the reference implementation is Ruby's Asciidoctor, and Python's ``asciidoc`` is a GPL tool that
renders, rather than parses, a document).

What it reads: ``= Title`` and ``== Section`` headings and two-line titles underlined to their length (``NAME``
over ``----``), and in a man page its section names (NAME, SYNOPSIS, ...) standing alone; delimited blocks, whose
delimiter lines vanish (listing ``----`` and literal ``....`` blocks, and a ``[verse]``/``[source]``/``[listing]``
paragraph, are code: a man page's synopsis is command syntax laid out by lines); block attribute lines
(``[verse]``, ``[[anchor]]``), attribute entries (``:attr: value``), comments and block macros (``include::x[]``)
are dropped; inline, ``linkgit:git-commit[1]`` reads "git-commit", ``<<id,text>>`` "text", and 'emphasis' and
*strong* marks go, as do list markers, ``term::`` colons and ``+`` continuations; inline code keeps its backticks,
the one mark that tells code from prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from explorer.reading.formats import Reading, Section, gathered, is_rule, readable

MAN_SECTIONS = frozenset(
    {
        "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ARGUMENTS", "COMMANDS", "CONFIGURATION", "ENVIRONMENT",
        "FILES", "EXAMPLES", "EXAMPLE", "DISCUSSION", "NOTES", "BUGS", "AUTHOR", "AUTHORS", "HISTORY", "SEE ALSO",
        "GIT", "OUTPUT", "RETURN VALUES", "EXIT STATUS",
    }
)  # fmt: skip
_HEADING = re.compile(r"(=+)[ \t]+(\S.*?)(?:[ \t]+=+)?[ \t]*")
_UNDERLINE = re.compile(r"([=\-~^+])\1+[ \t]*")
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|={4,}|_{4,}|\*{4,}|\+{4,}|/{4,})[ \t]*")
_CODE_DELIMITERS = ("-", ".")
_QUIET_DELIMITERS = ("/", "+")  # a comment, a passthrough of raw HTML
_ATTRIBUTE_LINE = re.compile(r"\[[^\[\]]*\]|\[\[[^\[\]]*\]\]")
_CROSS_REFERENCE = re.compile(r"<<[\w-]+(?:,[^<>]*)?>>")
_LITERAL_STYLE = re.compile(r"\[(verse|source|listing|literal)\b[^\]]*\]")
_ATTRIBUTE_ENTRY = re.compile(r":!?[\w-]+!?:(?:[ \t].*)?")
_BLOCK_MACRO = re.compile(r"[a-z]+::\S*\[[^\]]*\]")
_LABEL = re.compile(r"(.*?)(?::{2,4}|;;)[ \t]*$")
_LIST_MARKER = re.compile(r"[ \t]*(?:[*.-]{1,5}|\d+\.)[ \t]+")
_INLINE = [
    (re.compile(r"linkgit:([\w.-]+)\[\d*\]"), r"\1"),
    (re.compile(r"<<[^,<>]*,\s*([^<>]*)>>"), r"\1"),
    (re.compile(r"<<([^<>]*)>>"), r"\1"),
    # an address is bounded: tried from each "link:" of a run of them, an unbounded one rescanned the run
    (re.compile(r"(?:link:|https?://|mailto:)[^\s\[\]]{0,500}\[([^\[\]]+)\]"), r"\1"),
    (re.compile(r"(?<!\w)'([^'\n]+)'(?!\w)"), r"\1"),
    (re.compile(r"(?<!\w)\*([^*\n]+)\*(?!\w)"), r"\1"),
]


def read_asciidoc(text: str) -> Reading:
    """The sections of an AsciiDoc text; its level-0 title (``= Title``, or a first title underlined with ``=``)
    as the document's title.
    """
    lines = text.splitlines()
    title = _document_title(lines)
    return Reading(readable(gathered(_sections(lines)), "the document"), title=title)


def asciidoc_marks(lines: Sequence[str]) -> int:
    """How many of ``lines`` use markup only AsciiDoc has: ``== Heading``, ``[verse]``-like attribute lines,
    ``linkgit:``, ``<<id>>`` and ``[[id]]``, ``include::x[]``, a listing delimiter after a blank line, a
    ``term::`` with its definition indented on the next line (rST's ``::`` is followed by a blank line).
    """
    marks = 0
    for before, line, after in zip(["", *lines[:-1]], lines, [*lines[1:], ""], strict=True):
        marks += bool(_HEADING.fullmatch(line) or _LITERAL_STYLE.fullmatch(line) or _BLOCK_MACRO.fullmatch(line))
        marks += "linkgit:" in line or bool(_CROSS_REFERENCE.search(line)) or line.startswith("[[")
        marks += line.rstrip() in ("----", "....") and not before.strip()
        marks += line.rstrip().endswith("::") and not line[:1].isspace() and after[:1] in (" ", "\t")
    return marks


def _document_title(lines: Sequence[str]) -> str | None:
    for index, line in enumerate(lines):
        if not line.strip() or _ATTRIBUTE_ENTRY.fullmatch(line) or line.startswith("//"):
            continue
        heading = _HEADING.fullmatch(line)
        if heading and len(heading[1]) == 1:
            return _inline(heading[2])
        below = lines[index + 1] if index + 1 < len(lines) else ""
        return _inline(line) if below.startswith("=") and _underlines(line, below) else None
    return None


def _underlines(line: str, below: str) -> bool:
    """Whether ``below`` underlines ``line`` as a two-line title: one character repeated to its length (±2)."""
    return (
        bool(_UNDERLINE.fullmatch(below))
        and abs(len(below.rstrip()) - len(line.rstrip())) <= 2
        and not _DELIMITER.fullmatch(line)
        and bool(re.search(r"\w", line))
    )


def _sections(lines: Sequence[str]) -> Iterator[Section]:
    title: str | None = None
    block: str | None = None  # the delimiter of the code or quiet block we are in
    literal = False  # a [verse]/[source] paragraph: code until a blank line
    held: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index].rstrip()
        below = lines[index + 1].rstrip() if index + 1 < len(lines) else ""
        index += 1
        if block is not None:
            if line == block:
                if block[0] in _CODE_DELIMITERS:
                    yield Section("\n".join(held), title, code=True)
                block, held = None, []
            elif block[0] in _CODE_DELIMITERS:
                held.append(line)
            continue
        if literal and line.strip() and not _DELIMITER.fullmatch(line):
            held.append(line)
            continue
        if literal:
            yield Section("\n".join(held), title, code=True)
            literal, held = False, []
        heading = _HEADING.fullmatch(line)
        if heading or (below and _underlines(line, below)):
            yield Section("\n".join(held), title)
            title, held = _inline(heading[2] if heading else line), []
            index += 0 if heading else 1
        elif line.strip() in MAN_SECTIONS and not below.strip() and (not held or not held[-1].strip()):
            yield Section("\n".join(held), title)
            title, held = line.strip(), []
        elif _DELIMITER.fullmatch(line):
            yield Section("\n".join(held), title)
            held = []
            if line[0] in _CODE_DELIMITERS + _QUIET_DELIMITERS:
                block = line
        elif _LITERAL_STYLE.fullmatch(line) and not _DELIMITER.fullmatch(below):
            yield Section("\n".join(held), title)
            literal, held = True, []
        elif (
            _ATTRIBUTE_LINE.fullmatch(line)
            or _ATTRIBUTE_ENTRY.fullmatch(line)
            or _BLOCK_MACRO.fullmatch(line)
            or line.startswith("//")
            or is_rule(line)
        ):
            continue
        else:
            held.append("" if line.strip() == "+" else _inline(line))
    yield Section("\n".join(held), title, code=literal or (block is not None and block[0] in _CODE_DELIMITERS))


def _inline(line: str) -> str:
    """A line's words without AsciiDoc's inline marks, list markers and ``term::`` colons."""
    label = _LABEL.fullmatch(line)
    if label and label[1].strip():
        line = label[1]
    line = _LIST_MARKER.sub("", line, count=1) if _LIST_MARKER.match(line) else line
    for pattern, replacement in _INLINE:
        line = pattern.sub(replacement, line)
    return line.strip()
