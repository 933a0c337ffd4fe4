"""A model outage during ingest loses nothing for good: every step the model could not do is kept pending, and the
next ingest of the same files (or ``retry_failed``) completes it, to the knowledge a reading without the outage
leaves; a step failing again keeps its row with one attempt more.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.reading.ingest import ingest_paths
from explorer.store import corpus
from explorer.store import reading as reading_store
from explorer.testing.model_server import SERVED_MODEL, Reply

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "python-whatsnew"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """Three notes of two chunks each (the first 500 words of three What's New documents)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("whatsnew-2.2.md", "whatsnew-2.3.md", "whatsnew-2.4.md"):
        words = (SAMPLE / name).read_text(encoding="utf-8").split(" ")
        (folder / name.replace(".md", ".txt")).write_text(" ".join(words[:500]), encoding="utf-8")
    return folder


class Outage:
    """A model server's script: the prompt kinds in ``failing`` answer 500 while ``down``."""

    def __init__(self, *failing: str) -> None:
        self.failing = set(failing)
        self.down = True

    def __call__(self, request) -> Reply | None:
        return Reply(status=500) if self.down and request.kind in self.failing else None


def knowledge(runtime) -> tuple[list[tuple[str, str, int]], list[tuple[str, int]]]:
    """Every node's type, text and generation, every relation's type and how many there are of it, sorted."""
    with runtime.db.connect() as con:
        nodes = sorted((n.type, n.text, n.generation) for n in corpus.list_nodes(con))
        relations = corpus.list_relations(con)
    kinds = sorted({r.type for r in relations})
    return nodes, [(kind, sum(r.type == kind for r in relations)) for kind in kinds]


def pending(runtime) -> list:
    with runtime.db.connect() as con:
        return reading_store.list_pending(con)


def reader(make_runtime, model_server, tmp_path: Path, name: str, script=None):
    server = model_server(script=script)
    return make_runtime(db=tmp_path / f"{name}.duckdb", local_model=SERVED_MODEL, api_base=server.url, retries=0)


def test_an_outage_is_completed_by_the_next_ingest_of_the_same_files(make_runtime, model_server, notes, tmp_path):
    whole = reader(make_runtime, model_server, tmp_path, "whole")
    assert not ingest_paths(whole, [notes]).errors

    outage = Outage("implant", "entities", "entity_synthesis")
    runtime = reader(make_runtime, model_server, tmp_path, "outage", outage)
    first = ingest_paths(runtime, [notes])
    assert (first.documents_added, first.syntheses_added, first.entity_insights_added) == (3, 0, 0)
    # an implant and entities a chunk, save the first ever read: with nothing known, it asks for no implant
    assert first.items_failed == 2 * first.chunks_added - 1 == len(pending(runtime))
    assert len(first.errors) == first.items_failed

    outage.down = False
    again = ingest_paths(runtime, [notes])
    assert (again.documents_added, again.documents_unchanged) == (0, 3)  # the files not opened, their steps asked
    assert (again.items_completed, again.items_failed, again.errors) == (first.items_failed, 0, [])
    assert again.syntheses_added and again.entity_insights_added
    assert pending(runtime) == []
    assert knowledge(runtime) == knowledge(whole)  # as if the model had never been away
    assert ingest_paths(runtime, [notes]).items_completed == 0  # nothing asked twice


def test_retry_failed_completes_every_document_and_a_step_failing_again_stays(
    make_runtime, model_server, notes, tmp_path
):
    whole = reader(make_runtime, model_server, tmp_path, "whole")
    ingest_paths(whole, [notes])

    outage = Outage("entity_synthesis")  # chunks and implants are kept; only the insights fail
    runtime = reader(make_runtime, model_server, tmp_path, "outage", outage)
    first = ingest_paths(runtime, [notes])
    assert first.syntheses_added and not first.entity_insights_added and first.items_failed
    assert {item.step for item in pending(runtime)} == {"insight"}

    failed_again = ingest_paths(runtime, [], retry_failed=True)
    assert (failed_again.items_completed, failed_again.items_failed) == (0, first.items_failed)
    assert {item.attempts for item in pending(runtime)} == {2}
    assert "500" in pending(runtime)[0].error

    outage.down = False
    done = ingest_paths(runtime, [], retry_failed=True)
    assert (done.items_completed, done.items_failed) == (first.items_failed, 0)
    assert done.entity_insights_added == first.items_failed  # one insight for each pending one
    assert pending(runtime) == []
    assert knowledge(runtime) == knowledge(whole)
