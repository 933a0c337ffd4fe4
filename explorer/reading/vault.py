"""What an Obsidian or Logseq note says of itself: its tags, aliases, date and wikilinks, and its body as prose.

A vault's notes carry their own structure, written by the person: ``[[Target]]`` links another note (also
``[[Target|shown]]``, ``[[Target#Heading]]``, ``[[Target#^block]]``), ``![[Target]]`` embeds one (and
``![[image.png]]`` an attachment, which is no link), ``#tag`` and ``#nested/tag`` tag it, as do ``tags:`` in the
front matter, ``aliases:`` name it, ``created:`` or ``date:`` date it, ``> [!note] Title`` opens a callout and a
Logseq ``key:: value`` line is a property. :func:`read_note` gives all of it from the front matter and the body,
with no store and no model: the loader fills the source text with it.

Tags are kept as the vault's tag pane shows them: without the ``#``, lowercased (Obsidian counts ``#Idea`` and
``#idea`` as one tag), nested tags with their ``/``; a filter on ``project`` also finds ``project/alpha``
(:func:`tag_matches`). A tag in code is no tag, nor is a ``#`` inside a word or a URL (``page#part``), nor a
number (``#1``). Code blocks are found by markdown-it (fences, indented code, inside lists and quotes too), so a
wikilink or a tag in code is left as written; inline code spans by CommonMark's backtick rule.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from markdown_it import MarkdownIt

NOTE_SUFFIXES = ("", ".md", ".markdown")  # a wikilink with another suffix names an attachment, not a note
HEADING_MARK = " › "  # [[Target#Heading]] reads "Target › Heading"

# [[target#part|shown]] and ![[...]]: the target holds no [ ] | # ; the shown text no [ ]. No bracket inside, so
# each "[[" is tried once: with "[" allowed, a run of unclosed "[[a|" was scanned to its end from every one of them.
_WIKILINK = re.compile(
    r"(?P<embed>!?)\[\[(?P<target>[^\[\]|#]*)(?:#(?P<part>[^\[\]|]*))?(?:\|(?P<shown>[^\[\]]*))?\]\]"
)
# A tag starts a word (line start, space or an opening mark before it) and is not only digits.
_TAG = re.compile(r"(?:^|(?<=[\s(,;]))#(?P<tag>[\w/-]*[^\W\d_][\w/-]*)")
_CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`)")
_CALLOUT = re.compile(r"^(?P<quote>\s*(?:>\s*)+)\[!(?P<kind>[\w-]+)\][+-]?[ \t]*(?P<title>.*)$")
_PROPERTY = re.compile(r"^\s*(?:[-*]\s+)?[\w-]+::(?:\s.*)?$")
_SPLIT = re.compile(r"[,\s]+")
_YEAR_START = re.compile(r"\s*(\d{4})(?:\D|$)")

_PARSER = MarkdownIt("commonmark")


@dataclass(frozen=True)
class VaultNote:
    """What a note says of itself (:func:`read_note`): ``text`` is its body with the vault's syntax read as prose;
    ``links`` the notes its wikilinks and note embeds name, as written (in order, once each); ``year`` that of
    its ``created`` or ``date`` field (None when it has none or it says no year).
    """

    text: str
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    year: int | None = None


def read_note(metadata: dict, body: str) -> VaultNote:
    """A note's tags, aliases, wikilinks and date, and its body as prose, from its front matter and its body.

    Example::

        note = read_note({"tags": "gc, Memory"}, "See [[Garbage collection|the collector]]. #python/internals")
        note.tags   # ('gc', 'memory', 'python/internals')
        note.links  # ('Garbage collection',)
        note.text   # 'See the collector. #python/internals'
    """
    fields = {str(key).lower(): value for key, value in metadata.items()}
    prose = _prose_lines(body)
    tags = [
        *_listed(fields.get("tags", fields.get("tag"))),
        *_inline_tags(line for line, is_prose in prose if is_prose),
    ]
    return VaultNote(
        text="\n".join(_rendered(line) if is_prose else line for line, is_prose in _kept(prose)),
        tags=_unique(normal_tag(tag) for tag in tags if normal_tag(tag)),
        aliases=_unique(_listed(fields.get("aliases", fields.get("alias")), split_spaces=False)),
        links=_unique(link for line, is_prose in prose if is_prose for link in _links(line)),
        year=_year(fields.get("created", fields.get("date"))),
    )


def normal_tag(tag: str) -> str:
    """A tag as it is kept and filtered on: no leading ``#``, lowercased, no slash at either end."""
    return tag.strip().lstrip("#").strip("/").lower()


def tag_matches(tag: str, wanted: str) -> bool:
    """Whether ``tag`` is ``wanted`` or nested under it (``project/alpha`` under ``project``), as a vault's tag
    search finds them; the store's filter says the same in SQL.
    """
    wanted = normal_tag(wanted)
    return tag == wanted or tag.startswith(wanted + "/")


def link_key(name: str) -> str:
    """What a wikilink target and a note's name are matched on, as Obsidian resolves links: the last part of a
    path, without a Markdown suffix, in any case and spacing (``[[notes/Garbage Collection.md]]`` finds the note
    titled "garbage collection").
    """
    last = posixpath.basename(name.strip().rstrip("/"))  # as PurePosixPath's name, at a tenth of the cost
    stem = last.rsplit(".", 1)[0] if last.lower().endswith((".md", ".markdown")) else last
    return " ".join(stem.casefold().split())


def wikilink_names(names: Iterable[str], path: str | None) -> tuple[str, ...]:
    """Every name a wikilink may call a note by: its title and aliases (``names``), and its file's name."""
    return (*names, posixpath.basename(path.replace("\\", "/"))) if path else tuple(names)


def is_attachment(target: str) -> bool:
    """Whether a wikilink names a file that is not a note (``image.png``, ``paper.pdf``)."""
    suffix = PurePosixPath(target.strip()).suffix.lower()
    return bool(re.fullmatch(r"\.[a-z0-9]{1,5}", suffix)) and suffix not in NOTE_SUFFIXES


def _prose_lines(body: str) -> list[tuple[str, bool]]:
    """Each line of ``body``, and whether it is prose (False: inside a code block, as markdown-it reads it)."""
    lines = body.splitlines()
    code: set[int] = set()
    for token in _PARSER.parse(body):
        if token.type in ("fence", "code_block") and token.map:
            code.update(range(*token.map))
    return [(line, number not in code) for number, line in enumerate(lines)]


def _kept(lines: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The lines the prose keeps: a Logseq property line (``key:: value``) says nothing to read."""
    return [(line, is_prose) for line, is_prose in lines if not (is_prose and _PROPERTY.match(line))]


def _outside_code(line: str) -> str:
    """``line`` with its inline code spans blanked (same length, so positions hold)."""
    return _CODE_SPAN.sub(lambda match: " " * len(match.group()), line)


def _inline_tags(lines: Iterable[str]) -> list[str]:
    return [match["tag"] for line in lines for match in _TAG.finditer(_outside_code(line))]


def _links(line: str) -> list[str]:
    """The notes a prose line's wikilinks name (not attachments, not a heading of the note itself)."""
    found = []
    for match in _WIKILINK.finditer(_outside_code(line)):
        target = match["target"].strip()
        if target and not is_attachment(target):
            found.append(target)
    return found


def _rendered(line: str) -> str:
    """A prose line with its callout marker dropped and each wikilink (outside inline code) read as its words."""
    callout = _CALLOUT.match(line)
    if callout:
        line = callout["quote"] + callout["title"]
    masked = _outside_code(line)
    pieces, last = [], 0
    for match in _WIKILINK.finditer(masked):
        pieces += [line[last : match.start()], _shown(match)]
        last = match.end()
    return "".join([*pieces, line[last:]]).rstrip() if pieces else line


def _shown(link: re.Match[str]) -> str:
    """The words a wikilink stands for in the prose: its shown text, or its target (and heading); nothing for an
    embedded attachment.
    """
    target, part = link["target"].strip(), (link["part"] or "").strip()
    if link["shown"] is not None and link["shown"].strip():
        return link["shown"].strip()
    if is_attachment(target):
        return "" if link["embed"] else PurePosixPath(target).name
    if part.startswith("^") or not part:
        return target
    return f"{target}{HEADING_MARK}{part}" if target else part


def _listed(value: object, *, split_spaces: bool = True) -> list[str]:
    """The texts a front-matter field lists: a YAML list, or one text of items split by commas (and spaces,
    for tags, which hold none).
    """
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, (list, tuple)):
        return [str(item).strip() for item in value if item is not None and str(item).strip()]
    text = str(value)
    parts = _SPLIT.split(text) if split_spaces else text.split(",")
    return [part.strip() for part in parts if part.strip()]


def _year(value: object) -> int | None:
    """The year a ``created``/``date`` field says (a date, or text starting with one); None when it says none
    (``date: someday``): such a field is a help, never a reason to refuse a note. The loader checks the year's range.
    """
    if isinstance(value, dt.date):
        return value.year
    match = _YEAR_START.match(str(value)) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    return int(match[1]) if match else None


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
