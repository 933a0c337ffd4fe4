"""Turning files into source texts, with a clear error for each bad input.

Formats: ``.md``/``.markdown`` (YAML front matter may give title, year, domain,
source; a vault note's tags, aliases, ``created``/``date`` and wikilinks are read
by :mod:`explorer.reading.vault`); ``.rst``; ``.adoc``/``.asciidoc``;
``.html``/``.htm``; ``.pdf``; ``.txt`` (read as reStructuredText or AsciiDoc when
it is clearly written in one, else as plain text); ``.json`` (a ChatGPT or Claude
export: a document per conversation); ``.jsonl`` (one record per line: ``text``
and optional ``title``, ``year``, ``domain``, ``source``); directories,
recursively. Each format's reader (:mod:`explorer.reading.formats`) gives the
document's sections, markup read as structure, and the title, date and address
the file states. A bad file or line
becomes a :class:`LoadError` naming it, and the rest still loads.

Metadata is checked (:class:`DocumentMeta`): a year is a whole number in a sane
range (or a date, whose year is taken), never a boolean; a title, domain or
source is one short text (a number is written as one), never a list or a table.

A document is mended, not refused, for characters no store can hold
(:func:`explorer.inputs.storable`): a stray NUL byte in a file, or a ``\u0000``
or lone-surrogate escape in a JSON line or in front matter, is removed from its
text and metadata (a lone surrogate becomes U+FFFD, as does a byte of a file's
name that is not UTF-8). A file whose bytes are NUL more than one time in a
hundred is binary, not text, and is refused.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import frontmatter
import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from explorer.inputs import storable
from explorer.reading.formats import Reading, Section, joined
from explorer.reading.formats.asciidoc import read_asciidoc
from explorer.reading.formats.chat import read_chat_export
from explorer.reading.formats.html import read_html
from explorer.reading.formats.markdown import read_markdown
from explorer.reading.formats.pdf import read_pdf
from explorer.reading.formats.plain import read_plain
from explorer.reading.formats.rst import read_rst
from explorer.reading.formats.sniff import text_kind
from explorer.reading.vault import read_note
from explorer.records.notes import FRONT_MATTER_MAX_CHARS, MARK_FIELD, front_matter, is_exported

MARKDOWN_SUFFIXES = (".md", ".markdown")
# the readers of text formats by suffix (.md and .jsonl, .json and .pdf are read apart: front matter, records,
# conversations, bytes); a .txt is read as the markup it is written in
READERS: dict[str, Callable[[str], Reading]] = {
    ".rst": read_rst,
    ".adoc": read_asciidoc,
    ".asciidoc": read_asciidoc,
    ".html": read_html,
    ".htm": read_html,
}
TEXT_READERS: dict[str, Callable[[str], Reading]] = {"rst": read_rst, "asciidoc": read_asciidoc, "plain": read_plain}
SUFFIXES = (".txt", *MARKDOWN_SUFFIXES, *READERS, ".pdf", ".json", ".jsonl")
DEFAULT_MAX_MB = 20.0
FIRST_YEAR = 1
YEARS_AHEAD = 100  # a year this far past the present is a typo, not a forecast
TITLE_MAX_CHARS = 300
DOMAIN_MAX_CHARS = 80  # a domain is a name, as a theme is
SOURCE_MAX_CHARS = 500  # room for a URL
BINARY_NUL_SHARE = 0.01  # a file whose first 64 KiB are more NUL bytes than this is binary; fewer are strays


@dataclass(frozen=True)
class SourceText:
    """One document's text and what is known of it, before ingestion.

    ``sections`` is the text as its format structures it (empty: ``text`` is one untitled section); ``root`` is the
    folder the file was found under when a folder was named; ``tags``, ``aliases`` and ``links`` (the titles its
    wikilinks name) are what a vault note says of itself.
    """

    text: str
    title: str
    path: str
    line: int | None = None
    year: int | None = None
    domain: str | None = None
    source: str | None = None
    sections: tuple[Section, ...] = ()
    root: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoadError:
    """A file or line that could not be read, kept so ingestion can go on and report every problem at once."""

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


def _refuse(message: str) -> NoReturn:
    raise PydanticCustomError("metadata", "{message}", {"message": message})


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


# "2008", or a date written as text: "2008-05", "2008-05-01", "2008-05-01T12:00:00"
def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return "a list" if isinstance(value, list) else "a table" if isinstance(value, dict) else type(value).__name__


_YEAR_TEXT = re.compile(r"(?P<year>\d{1,4})|(?P<date>\d{4})-\d{1,2}(?:-\d{1,2}(?:[T ].*)?)?")


def _year(value: object) -> int | None:
    """A year from a whole number, a date or a "YYYY-MM-DD"-like string; None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        _refuse(f"year {value!r} is not a year (a boolean)")
    if isinstance(value, dt.date):  # YAML reads 2008-05-01 as a date (a datetime is a date too)
        year = value.year
    elif isinstance(value, int):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str) and (match := _YEAR_TEXT.fullmatch(value.strip())):
        year = int(match["year"] or match["date"])
    else:
        _refuse(f"year {_shown(value)} is not a year")
    last = dt.date.today().year + YEARS_AHEAD
    if not FIRST_YEAR <= year <= last:
        _refuse(f"year {_shown(value)} is not a year from {FIRST_YEAR} to {last}")
    return year


def _text(field: str, max_chars: int) -> Callable[[object], str | None]:
    """A validator for one short text of metadata; None when absent or blank."""

    def check(value: object) -> str | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, float, dt.date)):
            _refuse(f"{field} {_shown(value)} is {_kind(value)}; a {field} is one text")
        text = (value.isoformat() if isinstance(value, dt.date) else str(value)).strip()
        if len(text) > max_chars:
            _refuse(f"{field} of {len(text)} characters is over the {max_chars}-character limit")
        return text or None

    return check


class DocumentMeta(BaseModel):
    """A document's metadata as a file gives it, checked."""

    model_config = ConfigDict(frozen=True)

    title: Annotated[str | None, BeforeValidator(_text("title", TITLE_MAX_CHARS))] = None
    year: Annotated[int | None, BeforeValidator(_year)] = None
    domain: Annotated[str | None, BeforeValidator(_text("domain", DOMAIN_MAX_CHARS))] = None
    source: Annotated[str | None, BeforeValidator(_text("source", SOURCE_MAX_CHARS))] = None


def read_meta(given: dict[str, Any], defaults: dict[str, Any]) -> DocumentMeta:
    """The metadata a file or record gives (keys in any case), ``defaults`` filling in year and domain;
    a ``ValueError`` naming each bad field and its value.
    """
    given = {str(k).lower(): v for k, v in given.items()}
    fields = {name: given.get(name) for name in ("title", "source")}
    for name in ("year", "domain"):
        fields[name] = given[name] if given.get(name) not in (None, "") else defaults.get(name)
    try:
        return DocumentMeta.model_validate(fields)
    except ValidationError as exc:
        raise ValueError("; ".join(error["msg"] for error in exc.errors())) from None


def read_bytes(path: Path, max_mb: float) -> bytes:
    """A file's bytes, refused with a ``ValueError`` when it is over ``max_mb`` or empty."""
    size = path.stat().st_size
    if size > max_mb * 1024 * 1024:
        raise ValueError(f"file is {size / 1024 / 1024:.1f} MB, over the {max_mb:g} MB limit")
    if size == 0:
        raise ValueError("empty file")
    return path.read_bytes()


def read_text(path: Path, max_mb: float) -> str:
    """A file's text, refused with a ``ValueError`` that says why when it is too large, binary, not UTF-8 or
    empty (imports of other kinds of files check the same). A stray NUL byte is removed: no store can keep it,
    and one byte should not cost a person the whole file.
    """
    data = read_bytes(path, max_mb)
    head = data[:65536]
    if head.count(0) > BINARY_NUL_SHARE * len(head):
        raise ValueError("binary file (it contains NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); convert it to UTF-8"
        ) from None
    text = text.replace("\x00", "")
    if not text.strip():
        raise ValueError("empty file")
    return text


def _mended(source: SourceText) -> SourceText:
    """``source`` with every text of it as a store can hold it (the NUL or lone-surrogate escapes of a JSON line
    or front matter, a file name's bytes that are not UTF-8).
    """
    return dataclasses.replace(
        source,
        text=storable(source.text),
        title=storable(source.title),
        path=storable(source.path),
        domain=None if source.domain is None else storable(source.domain),
        source=None if source.source is None else storable(source.source),
        tags=tuple(map(storable, source.tags)),
        aliases=tuple(map(storable, source.aliases)),
        links=tuple(map(storable, source.links)),
        sections=tuple(
            Section(storable(s.text), None if s.title is None else storable(s.title), s.code) for s in source.sections
        ),
    )


def _markdown(path: Path, text: str, defaults: dict) -> SourceText:
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(post.metadata, dict):
        raise ValueError("front matter must be a table of fields (title: ..., year: ...)")
    note = read_note(post.metadata, post.content)  # a vault's tags, aliases, wikilinks and created/date
    meta = read_meta(post.metadata, {**defaults, "year": note.year or defaults.get("year")})
    if not note.text.strip():
        raise ValueError("no text after the front matter")
    sections = read_markdown(note.text).sections  # the vault's syntax already read as the words it shows
    return SourceText(
        text=joined(sections),
        title=meta.title or path.stem,  # a note is named by its file, as wikilinks name it
        path=str(path),
        year=meta.year,
        domain=meta.domain,
        source=meta.source,
        tags=note.tags,
        aliases=note.aliases,
        links=note.links,
        sections=sections,
    )


def _document(path: Path, reading: Reading, defaults: dict, line: int | None = None) -> SourceText:
    """A source text from what a format's reader found; what the file states of itself that does not pass the
    checks (a date that is no date, an overlong title) is left out rather than costing the file.
    """
    meta = _stated({"title": reading.title, "year": reading.year, "source": reading.source}, defaults)
    return SourceText(
        text=joined(reading.sections),
        title=meta.title or (path.stem if line is None else f"{path.stem} conversation {line}"),
        path=str(path),
        line=line,
        year=meta.year,
        domain=meta.domain,
        source=meta.source,
        sections=reading.sections,
    )


def _stated(given: dict[str, Any], defaults: dict[str, Any]) -> DocumentMeta:
    """The metadata a file states, its date left out when it is no date, everything it states when more is wrong."""
    for unchecked in ((), ("year",)):
        try:
            return read_meta({k: None if k in unchecked else v for k, v in given.items()}, defaults)
        except ValueError:
            continue
    return read_meta({}, defaults)


def _chats(path: Path, text: str, defaults: dict) -> Iterator[SourceText | LoadError]:
    for number, conversation in enumerate(read_chat_export(text), 1):
        if isinstance(conversation, ValueError):
            yield LoadError(str(path), str(conversation), number)
        else:
            yield _document(path, conversation, defaults, number)


def _jsonl(path: Path, text: str, defaults: dict) -> Iterator[SourceText | LoadError]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("a line must be a JSON object")
            body = record.get("text")
            if not isinstance(body, str) or not body.strip():
                raise ValueError('no "text" field with text in it')
            meta = read_meta(record, defaults)
            yield SourceText(
                text=body,
                title=meta.title or f"{path.stem} line {number}",
                path=str(path),
                line=number,
                year=meta.year,
                domain=meta.domain,
                source=meta.source,
            )
        except json.JSONDecodeError as exc:
            yield LoadError(str(path), f"malformed JSON ({exc.msg} at column {exc.colno})", number)
        except ValueError as exc:
            yield LoadError(str(path), str(exc), number)


def load_file(
    path: Path, *, year: int | None = None, domain: str | None = None, max_mb: float = DEFAULT_MAX_MB
) -> Iterator[SourceText | LoadError]:
    """The texts in one file (each format read by its reader, by suffix), and an error for each part that cannot be
    read; ``year`` and ``domain`` fill in what the file itself does not say. Each text is as a
    store can hold it (:func:`_mended`).
    """
    for loaded in _load(path, year, domain, max_mb):
        yield _mended(loaded) if isinstance(loaded, SourceText) else loaded


def _load(path: Path, year: int | None, domain: str | None, max_mb: float) -> Iterator[SourceText | LoadError]:
    defaults = {"year": year, "domain": domain}
    suffix = path.suffix.lower()
    try:
        if suffix == ".pdf":
            yield _document(path, read_pdf(read_bytes(path, max_mb)), defaults)
            return
        text = read_text(path, max_mb)
        if suffix == ".jsonl":
            yield from _jsonl(path, text, defaults)
        elif suffix == ".json":
            yield from _chats(path, text, defaults)
        elif suffix in MARKDOWN_SUFFIXES:
            yield _markdown(path, text, defaults)
        else:
            yield _document(path, READERS.get(suffix, TEXT_READERS[text_kind(text)])(text), defaults)
    except (OSError, ValueError) as exc:
        yield LoadError(str(path), str(exc) if isinstance(exc, ValueError) else exc.strerror or str(exc))


def exported_note(path: Path) -> bool:
    """Whether ``path`` is a note Dream Explorer exported (``explorer export --notes``): Markdown whose front matter
    says ``generated_by: dream-explorer``. Such a note is the engine's own finding, not a source: read back, it
    would become evidence for itself.
    """
    if path.suffix.lower() not in (".md", ".markdown"):
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            head = file.read(FRONT_MATTER_MAX_CHARS)
    except OSError:
        return False  # reading it will say what is wrong
    return MARK_FIELD in head and is_exported(front_matter(head))  # most notes are not parsed twice
