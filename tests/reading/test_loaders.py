"""Document metadata is checked as it is loaded: a bad field is a LoadError naming it and its value, and the rest
of the file still loads.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from explorer.reading.loaders import LoadError, SourceText, load_file

NEXT_CENTURY = dt.date.today().year + 100


def markdown(tmp_path: Path, front: str, name: str = "doc.md") -> Path:
    path = tmp_path / name
    path.write_text(f"---\n{front}\n---\nSome text about Python.\n", encoding="utf-8")
    return path


def one(path: Path, **defaults) -> SourceText | LoadError:
    (loaded,) = load_file(path, **defaults)
    return loaded


@pytest.mark.parametrize(
    "front,year",
    [
        ("year: 2008", 2008),
        ("year: '2008'", 2008),
        ("year: 2008-05-01", 2008),  # YAML reads a date
        ("year: '2008-05-01'", 2008),
        ("year: '2008-05'", 2008),
        ("year: 2008-05-01T10:00:00", 2008),
        ("year: 2008.0", 2008),
        ("year: 1", 1),
        (f"year: {NEXT_CENTURY}", NEXT_CENTURY),
        ("title: x", None),
        ("year: ''", None),
        ("Year: 1999", 1999),  # keys in any case
    ],
)
def test_years_read_from_front_matter(tmp_path, front, year) -> None:
    loaded = one(markdown(tmp_path, front))
    assert isinstance(loaded, SourceText) and loaded.year == year


@pytest.mark.parametrize(
    "front,message",
    [
        ("year: true", "year True is not a year (a boolean)"),
        ("year: yes", "year True is not a year (a boolean)"),  # YAML 1.1 reads yes as true
        ("year: 0", "year 0 is not a year from 1 to"),
        (f"year: {NEXT_CENTURY + 1}", f"year {NEXT_CENTURY + 1} is not a year from 1 to {NEXT_CENTURY}"),
        ("year: 99999", "year 99999 is not a year"),
        ("year: -500", "year -500 is not a year from 1"),
        ("year: 2008.5", "year 2008.5 is not a year"),
        ("year: soon", "year 'soon' is not a year"),
        ("year: '2008 edition'", "year '2008 edition' is not a year"),
        ("year: [2008, 2009]", "year [2008, 2009] is not a year"),
        ("domain: [python, history]", "domain ['python', 'history'] is a list; a domain is one text"),
        ("domain: {name: python}", "domain {'name': 'python'} is a table; a domain is one text"),
        ("domain: true", "domain True is a boolean; a domain is one text"),
        ("title: [a, b]", "title ['a', 'b'] is a list; a title is one text"),
        ("source: {url: x}", "source {'url': 'x'} is a table"),
        ("domain: " + "d" * 81, "domain of 81 characters is over the 80-character limit"),
        ("title: " + "t" * 301, "title of 301 characters is over the 300-character limit"),
        ("year: true\ndomain: [a]", "year True is not a year (a boolean); domain ['a'] is a list"),  # every problem
    ],
)
def test_bad_front_matter_is_a_load_error_naming_the_field(tmp_path, front, message) -> None:
    loaded = one(markdown(tmp_path, front))
    assert isinstance(loaded, LoadError) and message in loaded.message
    assert loaded.path.endswith("doc.md")


def test_numbers_and_dates_become_text_where_text_is_asked(tmp_path) -> None:
    loaded = one(markdown(tmp_path, "title: 1984\ndomain: 42\nsource: 2008-05-01"))
    assert isinstance(loaded, SourceText)
    assert (loaded.title, loaded.domain, loaded.source) == ("1984", "42", "2008-05-01")


def test_defaults_fill_in_and_are_checked_too(tmp_path) -> None:
    loaded = one(markdown(tmp_path, "title: Notes"), year=1999, domain="python")
    assert isinstance(loaded, SourceText) and (loaded.year, loaded.domain) == (1999, "python")
    given = one(markdown(tmp_path, "year: 2008\ndomain: history"), year=1999, domain="python")
    assert isinstance(given, SourceText) and (given.year, given.domain) == (2008, "history")
    plain = tmp_path / "plain.txt"
    plain.write_text("Plain text.", encoding="utf-8")
    assert one(plain, year=1999, domain="python").year == 1999


def test_a_bad_json_line_fails_alone(tmp_path) -> None:
    path = tmp_path / "records.jsonl"
    records = [
        {"text": "Good.", "year": 2001, "domain": "python"},
        {"text": "Boolean year.", "year": True},
        {"text": "List domain.", "domain": ["python", "history"]},
        {"text": "Dict title.", "title": {"en": "x"}},
        {"text": "Float year.", "year": 1999.5},
        {"text": "Huge source.", "source": "s" * 600},
        {"text": "String year.", "year": "1999-12-31", "Domain": 7},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    loaded = list(load_file(path))
    good = [x for x in loaded if isinstance(x, SourceText)]
    errors = {x.line: x.message for x in loaded if isinstance(x, LoadError)}
    assert [(x.line, x.year, x.domain) for x in good] == [(1, 2001, "python"), (7, 1999, "7")]
    assert errors == {
        2: "year True is not a year (a boolean)",
        3: "domain ['python', 'history'] is a list; a domain is one text",
        4: "title {'en': 'x'} is a table; a title is one text",
        5: "year 1999.5 is not a year",
        6: "source of 600 characters is over the 500-character limit",
    }
