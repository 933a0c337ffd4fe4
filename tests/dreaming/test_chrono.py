"""The chronological loop: periods in date order, reading then dreaming at each boundary."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from explorer.dreaming.chrono import month_from, plan_periods, source_month
from explorer.dreaming.service import DreamingError, run_chrono
from explorer.reading.loaders import SourceText
from explorer.store import corpus


def source(title: str, year: int | None, month: int | None = None) -> tuple[SourceText, int | None]:
    return SourceText(text=title, title=title, path=f"/{title}", year=year), month


def test_periods_run_in_date_order_with_undated_first() -> None:
    items = [source("c", 2003, 5), source("a", 2001, 9), source("u", None), source("b", 2003, 1), source("d", 2003)]
    months = {s.title: m for s, m in items}
    sources = [s for s, _ in items]
    by_year = plan_periods(sources, "year", months.get)
    assert [(p.key, [s.title for s in p.sources]) for p in by_year] == [
        ("undated", ["u"]),
        ("2001", ["a"]),
        ("2003", ["b", "c", "d"]),
    ]
    assert [p.dated for p in by_year] == [False, True, True]
    by_month = plan_periods(sources, "month", lambda s: months[s.title])
    assert [(p.key, p.year) for p in by_month] == [
        ("undated", None),
        ("2001-09", 2001),
        ("2003-01", 2003),
        ("2003-05", 2003),
        ("2003", 2003),
    ]
    with pytest.raises(ValueError):
        plan_periods(sources, "week")


@pytest.mark.parametrize(
    "value,month",
    [
        (dt.date(2008, 3, 14), 3),
        ("2008-11-02", 11),
        ("2008-07", 7),
        (4, 4),
        ("12", 12),
        (13, None),
        ("March", None),
        (True, None),
        (None, None),
    ],
)
def test_month_from(value, month) -> None:
    assert month_from(value) == month


def test_months_are_read_from_front_matter_and_records(tmp_path: Path) -> None:
    md = tmp_path / "note.md"
    md.write_text("---\ntitle: Note\nyear: 2008\ndate: 2008-03-14\n---\nBody.\n", encoding="utf-8")
    jsonl = tmp_path / "items.jsonl"
    jsonl.write_text(
        json.dumps({"text": "a", "year": 2009, "month": 6}) + "\n" + json.dumps({"text": "b", "year": 2009}) + "\n",
        encoding="utf-8",
    )
    assert source_month(SourceText("Body.", "Note", str(md), year=2008)) == 3
    assert source_month(SourceText("a", "a", str(jsonl), line=1, year=2009)) == 6
    assert source_month(SourceText("b", "b", str(jsonl), line=2, year=2009)) is None


DOCS = {
    "whatsnew-a.md": (
        2001,
        "Nested scopes arrive in Python 2.1. A function defined inside another function can read "
        "the names of the enclosing function, which makes lambda far more useful.",
    ),
    "whatsnew-b.md": (
        2003,
        "Python 2.3 adds the sets module and the bool type. True and False become constants, "
        "and the enumerate built-in function pairs each item with its index.",
    ),
    "whatsnew-c.md": (
        2003,
        "Generators become a standard feature in Python 2.3: the yield keyword no longer needs a "
        "future import, and iterators now power for loops throughout the standard library.",
    ),
}


def write_docs(folder: Path) -> Path:
    folder.mkdir()
    for name, (year, text) in DOCS.items():
        (folder / name).write_text(f"---\nyear: {year}\ndomain: python\n---\n{text}\n", encoding="utf-8")
    return folder


def test_chrono_reads_each_year_then_dreams_about_it(runtime, tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs")
    # two dreams a period: with these texts and this seed each period keeps at least one
    report = run_chrono(runtime, [folder], every="year", dreams=2, seed=3)
    assert [(p.period, p.documents_added, p.dreamt) for p in report.periods] == [("2001", 1, True), ("2003", 2, True)]
    assert report.documents_added == 3 and report.chunks_added == 3 and report.errors == []
    assert [p.dreams_stored + p.dreams_dropped for p in report.periods] == [2, 2] and report.failures == 0
    assert all(p.dreams_stored >= 1 for p in report.periods), report.to_json()
    with runtime.db.connect() as con:
        nodes = corpus.list_nodes(con)  # in creation order
    position = {n.id: i for i, n in enumerate(nodes)}
    years = {n.id: n.year for n in nodes}
    dreams = {year: [n for n in nodes if n.type == "rem_dream" and n.year == year] for year in (2001, 2003)}
    assert [len(dreams[2001]), len(dreams[2003])] == [p.dreams_stored for p in report.periods]
    assert report.dreams_stored == len([n for n in nodes if n.type == "rem_dream"])
    chunks_2003 = [position[n.id] for n in nodes if n.type == "raw_chunk" and n.year == 2003]
    for dream in dreams[2001]:  # dreamt at the 2001 boundary, from 2001 alone, before 2003 was read
        assert {years[p] for p in dream.parent_ids} == {2001}
        assert position[dream.id] < min(chunks_2003)
    for dream in dreams[2003]:  # dreamt after all of 2003 was read, about 2003
        assert years[dream.parent_ids[0]] == 2003
        assert position[dream.id] > max(chunks_2003)
    again = run_chrono(runtime, [folder], every="year", dreams=2, seed=3)
    assert again.documents_skipped == 3 and not any(p.dreamt for p in again.periods)  # nothing new, no dreams


def test_chrono_needs_dated_documents(runtime, tmp_path: Path) -> None:
    (tmp_path / "undated.txt").write_text("A note with no date.", encoding="utf-8")
    with pytest.raises(DreamingError, match="needs dated documents"):
        run_chrono(runtime, [tmp_path / "undated.txt"])
    with pytest.raises(DreamingError, match="year or month"):
        run_chrono(runtime, [tmp_path / "undated.txt"], every="week")
