"""One long "word" is read in time linear in its length (a pattern that backtracked took 23 s on an 80 KB one, over
300 s on 1 MB).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime

WORD_UNIT = "a1b2.c3+d4-e5f6"  # letters, digits, dots, plus and minus signs: what an address or a version is made of


@pytest.mark.timeout(300)
def test_a_file_holding_one_megabyte_word_is_ingested(runtime: Runtime, tmp_path: Path) -> None:
    path = tmp_path / "word.txt"
    path.write_text((WORD_UNIT * (1_000_000 // len(WORD_UNIT) + 1))[:1_000_000], encoding="utf-8")
    start = time.perf_counter()
    report = ingest_paths(runtime, [path])
    elapsed = time.perf_counter() - start
    assert (report.documents_added, report.errors) == (1, [])
    assert elapsed < 120, f"1 MB word ingested in {elapsed:.0f} s"
