"""Turning files into source texts, with a clear error for each bad input.

Formats: ``.txt``; ``.md`` (YAML front matter may give title, year, domain,
source); ``.jsonl`` (one record per line: ``text`` and optional ``title``,
``year``, ``domain``, ``source``); directories, recursively. A bad file or line
becomes a :class:`LoadError` naming it, and the rest still loads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import frontmatter
import yaml

SUFFIXES = (".txt", ".md", ".markdown", ".jsonl")
DEFAULT_MAX_MB = 20.0


@dataclass(frozen=True)
class SourceText:
    """One document's text and what is known of it, before ingestion."""

    text: str
    title: str
    path: str
    line: int | None = None
    year: int | None = None
    domain: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class LoadError:
    """A file or line that could not be read, kept so ingestion can go on and report every problem at once."""

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


def _year(value: object, where: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        year = int(str(value)[:4]) if not isinstance(value, int) else value
    except ValueError:
        raise ValueError(f"year {value!r} is not a year") from None
    if not 0 < year < 3000:
        raise ValueError(f"year {value!r} is not a year")
    return year


def _label(value: object) -> str | None:
    """A front-matter or JSON value used as a label (domain, source): text, or None when absent or empty."""
    return None if value in (None, "") else str(value)


def _read_text(path: Path, max_mb: float) -> str:
    size = path.stat().st_size
    if size > max_mb * 1024 * 1024:
        raise ValueError(f"file is {size / 1024 / 1024:.1f} MB, over the {max_mb:g} MB limit")
    data = path.read_bytes()
    if b"\x00" in data[:65536]:
        raise ValueError("binary file (it contains NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); convert it to UTF-8"
        ) from None
    if not text.strip():
        raise ValueError("empty file")
    return text


def _markdown(path: Path, text: str, defaults: dict) -> SourceText:
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    meta = post.metadata
    if not post.content.strip():
        raise ValueError("no text after the front matter")
    return SourceText(
        text=post.content,
        title=str(meta.get("title") or path.stem),
        path=str(path),
        year=_year(meta.get("year", defaults.get("year")), str(path)),
        domain=_label(meta.get("domain") or defaults.get("domain")),
        source=_label(meta.get("source")),
    )


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
            yield SourceText(
                text=body,
                title=str(record.get("title") or f"{path.stem} line {number}"),
                path=str(path),
                line=number,
                year=_year(record.get("year", defaults.get("year")), str(path)),
                domain=_label(record.get("domain") or defaults.get("domain")),
                source=_label(record.get("source")),
            )
        except json.JSONDecodeError as exc:
            yield LoadError(str(path), f"malformed JSON ({exc.msg} at column {exc.colno})", number)
        except ValueError as exc:
            yield LoadError(str(path), str(exc), number)


def load_file(
    path: Path, *, year: int | None = None, domain: str | None = None, max_mb: float = DEFAULT_MAX_MB
) -> Iterator[SourceText | LoadError]:
    """The texts in one file (Markdown with front matter, JSON lines or plain text), and an error for each part
    that cannot be read; ``year`` and ``domain`` fill in what the file itself does not say.
    """
    defaults = {"year": year, "domain": domain}
    try:
        text = _read_text(path, max_mb)
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            yield from _jsonl(path, text, defaults)
        elif suffix in (".md", ".markdown"):
            yield _markdown(path, text, defaults)
        else:
            yield SourceText(text=text, title=path.stem, path=str(path), year=year, domain=domain)
    except (OSError, ValueError) as exc:
        yield LoadError(str(path), str(exc) if isinstance(exc, ValueError) else exc.strerror or str(exc))


def expand_paths(paths: Iterable[str | Path]) -> Iterator[Path | LoadError]:
    """Files to read: each file named, and the supported files under each directory."""
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
            if not files:
                yield LoadError(str(path), f"no {', '.join(SUFFIXES)} files in this folder")
            yield from files
        elif path.is_file():
            yield (
                path
                if path.suffix.lower() in SUFFIXES
                else LoadError(str(path), f"unsupported file type {path.suffix or '(none)'}; use {', '.join(SUFFIXES)}")
            )
        else:
            yield LoadError(str(path), "no such file or folder")
