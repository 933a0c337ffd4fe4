"""A document made of long runs that end no sentence and close no link is read in time linear in its length
(before the sentence splitter read long text in pieces and the link pattern stopped backtracking, 80 KB of
"e.g. " took 24 s to ingest, 160 KB 98 s; of "[a](" 8 s and 31 s).

Like ``tests/test_patterns_linear.py``, the check is the growth from n to 4n characters, not a time: about four
when linear, sixteen when quadratic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from explorer import text
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime

UNITS = ["[a](", "e.g. ", "Mr. A "]  # a link never closed; abbreviations with no sentence end after them
LINEAR_RATIO = 8
RuntimeFactory = Callable[..., Runtime]


def _seconds(make_runtime: RuntimeFactory, folder: Path, n: int) -> float:
    """How long ingesting one document of a paragraph of each run, ``n`` characters in all, into a new database
    takes.
    """
    folder = folder / f"{n}-{len(list(folder.iterdir()))}"
    folder.mkdir()
    path = folder / "runs.txt"
    path.write_text("\n\n".join((unit * (n // 3 // len(unit) + 1))[: n // 3] for unit in UNITS), encoding="utf-8")
    runtime = make_runtime(db=folder / "runs.duckdb")
    for remembered in (text._sentences, text.plain_text, text._ranked, text._keyphrases):
        remembered.cache_clear()  # each try reads the whole text again
    start = time.perf_counter()
    report = ingest_paths(runtime, [path])
    elapsed = time.perf_counter() - start
    assert (report.documents_added, report.errors) == (1, [])
    return elapsed


@pytest.mark.timeout(600)
def test_reading_time_grows_linearly(make_runtime: RuntimeFactory, tmp_path: Path) -> None:
    _seconds(make_runtime, tmp_path, 3_000)  # the first reading in a process imports and loads what it needs
    n = 60_000
    for _ in range(3):  # another process taking the core slows one size down at random; a square stays above
        small = _seconds(make_runtime, tmp_path, n)
        large = _seconds(make_runtime, tmp_path, 4 * n)
        if large < LINEAR_RATIO * small:
            return
    raise AssertionError(f"{n:,} characters: {small:.1f} s; {4 * n:,}: {large:.1f} s")
