"""The chronological loop's plan: a dated corpus cut into periods, read in order.

Documents are read in date order, with a dream at the end of each year or month
(docs/dreaming.md#chronological-loop). A document's year comes from its front
matter or JSONL record; its month from a ``date`` (``2008-03-14``) or ``month``
field there, when it has one. Undated documents come first, as background read
before the dated ones, and no dream follows them (there is no current year).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import frontmatter

from explorer.reading.loaders import SourceText
from explorer.records.dreaming import Every

UNDATED = "undated"


@dataclass(frozen=True)
class Period:
    """The documents read between two dreams: one year or month of the corpus, or its undated background."""

    key: str  # "2008", "2008-03", or "undated"
    year: int | None
    sources: tuple[SourceText, ...]

    @property
    def dated(self) -> bool:
        """Whether a dream follows this period (undated background has no current year to dream from)."""
        return self.year is not None


def month_from(value: object) -> int | None:
    """A month (1–12) from a date, a ``YYYY-MM[-DD]`` string or a month number."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.month
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1 <= value <= 12 else None
    if isinstance(value, str):
        match = re.match(r"^\s*\d{4}-(\d{1,2})\b", value) or re.fullmatch(r"\s*(\d{1,2})\s*", value)
        if match and 1 <= int(match[1]) <= 12:
            return int(match[1])
    return None


def _month_of_record(record: object) -> int | None:
    if not isinstance(record, dict):
        return None
    return month_from(record.get("month")) or month_from(record.get("date"))


@lru_cache(maxsize=256)
def _months_in_file(path: str, stamp: float) -> dict[int | None, int | None]:
    """Month by JSONL line number (``None`` key: the file's own front matter)."""
    file = Path(path)
    try:
        if file.suffix.lower() == ".jsonl":
            months: dict[int | None, int | None] = {}
            for number, line in enumerate(file.read_text(encoding="utf-8-sig").splitlines(), 1):
                try:
                    months[number] = _month_of_record(json.loads(line)) if line.strip() else None
                except json.JSONDecodeError:
                    continue
            return months
        if file.suffix.lower() in (".md", ".markdown"):
            return {None: _month_of_record(frontmatter.load(file).metadata)}
    except (OSError, ValueError):  # the loader has already reported a file it could not read
        pass
    return {}


def source_month(source: SourceText) -> int | None:
    """The month a source was written in, when its file says."""
    try:
        stamp = Path(source.path).stat().st_mtime
    except OSError:
        return None
    return _months_in_file(source.path, stamp).get(source.line)


def period_key(year: int | None, month: int | None, every: Every) -> str:
    """The period a document falls in, as reports name it: ``"2008"``, ``"2008-03"`` or ``"undated"``."""
    if year is None:
        return UNDATED
    return f"{year}-{month:02d}" if every == "month" and month is not None else str(year)


def plan_periods(
    sources: Sequence[SourceText], every: Every, month_of: Callable[[SourceText], int | None] = source_month
) -> list[Period]:
    """Sources grouped into periods in reading order: undated first, then by date, then by title.

    With ``every="month"``, a document with a year but no month falls in its
    year's own period, read after that year's dated months.
    """
    if every not in ("year", "month"):
        raise ValueError(f"every must be 'year' or 'month', not {every!r}")
    dated = []
    for source in sources:
        month = month_of(source) if every == "month" and source.year is not None else None
        order = (source.year is not None, source.year or 0, month or 13, source.title, source.path, source.line or 0)
        dated.append((order, period_key(source.year, month, every), source))
    dated.sort(key=lambda item: item[0])
    periods: list[Period] = []
    for _, key, source in dated:
        if periods and periods[-1].key == key:
            periods[-1] = Period(key, source.year, periods[-1].sources + (source,))
        else:
            periods.append(Period(key, source.year, (source,)))
    return periods
