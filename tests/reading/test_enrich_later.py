"""A large read at the embedding model's speed: ``enrich="later"`` places and links every chunk and leaves the
model's steps pending, never asked, for :func:`enrich_pending`; reading the same files again does not ask them
(only what failed), and ``auto`` enriches at once only a read of at most ``ENRICH_AT_ONCE`` new chunks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from explorer.affinity import titled_texts
from explorer.cli import app
from explorer.providers.embeddings import text_hash
from explorer.reading import ingest
from explorer.reading.chunker import is_code
from explorer.reading.ingest import enrich_pending, ingest_paths
from explorer.store import corpus
from explorer.store import reading as reading_store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "python-whatsnew"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """Four What's New documents, several chunks each."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("whatsnew-2.2.md", "whatsnew-2.3.md", "whatsnew-2.4.md", "whatsnew-2.5.md"):
        (folder / name).write_text((SAMPLE / name).read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def kinds(runtime) -> dict[str, int]:
    """How many nodes of each type, and how many relations (as "relations")."""
    with runtime.db.connect() as con:
        nodes = corpus.list_nodes(con)
        relations = corpus.list_relations(con)
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.type] = counts.get(node.type, 0) + 1
    return {**counts, "relations": len(relations)}


def test_a_later_read_is_placed_and_linked_and_enriched_by_enrich_pending(runtime, notes: Path) -> None:
    read = ingest_paths(runtime, [notes], enrich="later")
    assert read.documents_added == 4 and read.chunks_added > 8
    assert read.syntheses_added == read.entity_insights_added == read.items_failed == 0
    placed = kinds(runtime)
    assert set(placed) == {"raw_chunk", "relations"} and placed["relations"] > 0  # EXTENDS, MENTIONS: linked now
    with runtime.db.connect() as con:
        left = reading_store.list_pending(con)
    assert len(left) == read.items_deferred and {item.attempts for item in left} == {0}
    assert {item.step for item in left} == {"implant", "entities"}  # insights follow from the entities found
    with runtime.db.connect() as con:
        prose = [n for n in corpus.list_nodes(con) if not is_code(n.text)]  # code names no entity
    assert sum(item.step == "entities" for item in left) == len(prose) < read.chunks_added

    again = ingest_paths(runtime, [notes])  # met again: what was left for later waits for enrich_pending
    assert again.documents_unchanged == 4 and again.items_completed == 0 and kinds(runtime) == placed

    done = enrich_pending(runtime)
    assert done.syntheses_added > 0 and done.entity_insights_added > 0
    assert done.items_completed + done.items_failed == read.items_deferred
    with runtime.db.connect() as con:
        assert reading_store.count_pending(con) == done.items_failed
        assert reading_store.count_deferred(con) == 0  # a step that failed when asked counts one attempt
        titles = {d.id: d.title for d in corpus.list_documents(con)}
        titled = titled_texts([n for n in corpus.list_nodes(con, types=["raw_chunk"]) if not is_code(n.text)], titles)
        cached = corpus.cached_hashes(con, runtime.embedder.name)
    assert titled and all(text_hash(text) in cached for text in titled)  # what dreaming weighs, embedded now


def test_auto_enriches_a_small_read_at_once_and_leaves_a_large_one_for_later(
    make_runtime, notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = ingest_paths(make_runtime(db=tmp_path / "small.duckdb"), [notes])
    assert small.items_deferred == 0 and small.syntheses_added > 0
    monkeypatch.setattr(ingest, "ENRICH_AT_ONCE", small.chunks_added - 1)
    large = ingest_paths(make_runtime(db=tmp_path / "large.duckdb"), [notes])
    assert large.chunks_added == small.chunks_added
    assert large.syntheses_added == 0 and large.items_deferred > 0


def test_the_cli_reads_later_and_enrich_completes(notes: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "cli.duckdb")
    runner = CliRunner()
    read = runner.invoke(app, ["ingest", str(notes), "--enrich", "later", "--db", db])
    assert read.exit_code == 0, read.output
    assert "of enrichment (syntheses, entities) left for later: `explorer enrich` asks them" in read.stdout
    done = runner.invoke(app, ["enrich", "--json", "--db", db])
    assert done.exit_code in (0, 3), done.output  # 3: a step the offline provider refused stays pending
    report = json.loads(done.stdout)
    assert report["syntheses_added"] > 0 and report["items_deferred"] == 0
    stats = json.loads(runner.invoke(app, ["stats", "--json", "--db", db]).stdout)
    assert stats["nodes_by_type"]["synthesis"] == report["syntheses_added"]
