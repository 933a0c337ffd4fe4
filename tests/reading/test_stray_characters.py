r"""A document is mended, not refused, for characters no store can hold: a stray NUL byte in a file, the ``\u0000``
and lone-surrogate escapes of a JSON line or of front matter, and a file name that is not UTF-8 are read without
them (a lone surrogate becomes U+FFFD), on DuckDB and on PostgreSQL (whose text cannot hold a NUL at all). A file
that is mostly NUL bytes is binary and still refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from explorer.inputs import text_fault
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime
from explorer.store import corpus

RuntimeFactory = Callable[..., Runtime]
PARAGRAPH = (
    "The tides rise and fall twice a day as the moon pulls the oceans towards it. Sailors learned the rhythm "
    "of the water long before anyone could explain why the sea breathes."
)


def documents(folder: Path) -> None:
    (folder / "stray.txt").write_bytes(PARAGRAPH.replace("twice", "twi\x00ce").encode("utf-8"))
    line = {"text": f"Harbours \u0000flood {PARAGRAPH} \ud800", "title": "spring\u0000 tides", "domain": "sea\ud800"}
    (folder / "log.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    (folder / "front.md").write_text(f'---\ntitle: "neap\\0 tides"\n---\n{PARAGRAPH} Neap tides are weaker.\n')
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "wb") as file:  # a name that is not UTF-8
        file.write(f"A cafe by the harbour. {PARAGRAPH}".encode())
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02\x00" * 64)


@pytest.mark.parametrize("backend", ["duckdb", "postgres"])
def test_stray_characters_are_removed_and_the_documents_read(
    backend: str, make_runtime: RuntimeFactory, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    runtime: Runtime = make_runtime(db=request.getfixturevalue("postgres_url") if backend == "postgres" else None)
    folder = tmp_path / "docs"
    folder.mkdir()
    documents(folder)
    report = ingest_paths(runtime, [folder])
    assert report.documents_added == 4, report.errors
    assert [(Path(e["path"]).name, e["message"]) for e in report.errors] == [
        ("binary.txt", "binary file (it contains NUL bytes), not text")
    ]
    with runtime.db.connect() as con:
        stored = corpus.list_documents(con)
        chunks = corpus.list_nodes(con, types=["raw_chunk"])
    assert sorted(d.title for d in stored) == ["caf\ufffd", "neap tides", "spring tides", "stray"]
    assert {d.domain for d in stored if d.title == "spring tides"} == {"sea\ufffd"}
    assert all(text_fault(t) is None for d in stored for t in (d.title, d.path or "", d.domain or ""))
    assert all(text_fault(c.text) is None for c in chunks) and any("twice a day" in c.text for c in chunks)
