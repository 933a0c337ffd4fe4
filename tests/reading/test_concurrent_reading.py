"""Reading through a real model server with calls in flight at once: the same knowledge as one call at a time,
every document's calls sharing the batch's flight, and a budget that stops the reading without exceeding it.
"""

from __future__ import annotations

from pathlib import Path

from explorer.providers.budget import Budget
from explorer.reading.ingest import ingest_paths
from explorer.store import corpus
from explorer.testing.model_server import SERVED_MODEL, Reply

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "python-whatsnew"
DOCS = ("whatsnew-2.2.md", "whatsnew-2.3.md")


def knowledge(runtime) -> tuple[list[tuple[str, str]], list[str]]:
    """Every node's type and text, and every relation's type, sorted: what reading left, whatever the ids."""
    with runtime.db.connect() as con:
        nodes = sorted((n.type, n.text) for n in corpus.list_nodes(con))
        relations = sorted(r.type for r in corpus.list_relations(con))
    return nodes, relations


def test_concurrent_reading_keeps_what_sequential_reading_keeps(make_runtime, model_server, tmp_path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCS:  # the first 600 words of each: two chunks a document
        (folder / name).write_text(" ".join((SAMPLE / name).read_text(encoding="utf-8").split(" ")[:600]))
    runs = {}
    for concurrency in (1, 8):
        # at 8, the first round's calls linger, so all of them are seen in flight even on a busy machine: seven,
        # as the first chunk read has nothing known to be implanted among (a call of the next round may join them)
        server = model_server(latency_s=0.02, script=[Reply(delay_s=0.5)] * 8 if concurrency > 1 else None)
        runtime = make_runtime(
            db=tmp_path / f"c{concurrency}.duckdb",
            local_model=SERVED_MODEL,
            api_base=server.url,
            concurrency=concurrency,
        )
        report = ingest_paths(runtime, [folder])
        assert report.documents_added == 2 and not report.errors, report.errors
        runs[concurrency] = (knowledge(runtime), server.peak_in_flight)
    (sequential, one_at_a_time), (concurrent, in_flight) = runs[1], runs[8]
    assert one_at_a_time == 1 and in_flight >= 7
    assert concurrent == sequential
    assert {kind for kind, _ in concurrent[0]} == {"raw_chunk", "synthesis", "entity_insight"}


def test_a_reading_budget_is_not_exceeded(make_runtime, model_server, tmp_path) -> None:
    server = model_server()
    runtime = make_runtime(
        local_model=SERVED_MODEL, api_base=server.url, prices={SERVED_MODEL: (100.0, 200.0)}, concurrency=8
    )
    budget = Budget(limit_cents=150.0)  # a call's worst case is 10-40 cents, its real cost a few
    report = ingest_paths(runtime, [SAMPLE / DOCS[0]], budget=budget)
    assert report.documents_added == 1 and report.budget_exhausted
    assert 0 < report.spent_cents <= 150.0
    assert any("budget exhausted" in e["message"] for e in report.errors)  # the calls not made, each named
