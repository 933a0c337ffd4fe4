"""A fast read, enriched later by the real local model (SmolLM2-135M on llama.cpp's server): every step left for
later is done or kept pending with the reason it failed, none lost, and the model is asked several steps at once.

llama-cpp-python's server computes one request at a time (a lock around its one model): the calls overlap in
flight, the server queues them. What is asserted is the product's side, that it sends a round's calls together.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.providers.embeddings import Embedder
from explorer.reading.cycle import DEFERRED
from explorer.reading.ingest import enrich_pending, ingest_paths
from explorer.records.calls import CallRecord
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.store import reading as reading_store
from explorer.testing.llama_server import SERVED_MODEL, LlamaServer

# about 30 s on a quiet machine, a minute or more on a loaded one
pytestmark = [pytest.mark.real_model, pytest.mark.timeout(600)]

NOTES = {
    "Bees.md": "Honey bees visit flowers to gather nectar and pollen, and carry pollen from flower to flower.",
    "Pollination.md": "Pollination moves pollen between flowers; bees, wind and birds pollinate most crops.",
    "Honey.md": "Bees make honey from the nectar of flowers and store it in the wax cells of their hive.",
}

Timed = tuple[float, float, CallRecord]  # when a call entered its slot and left it (monotonic seconds), and its record


@pytest.fixture
def runtime(llama_server: LlamaServer, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    """The real server as the model, four calls at a time and no retries (each attempt is one answer to judge)."""
    for name, value in llama_server.env().items():
        monkeypatch.setenv(name, value)
    settings = replace(
        Settings(),
        db_path=tmp_path / "explorer.duckdb",
        embedding_model=embedder.name,
        local_model=SERVED_MODEL,
        api_base=llama_server.url,
        concurrency=4,
        retries=0,
        timeout_s=120.0,
    )
    return open_runtime(settings, embedder=embedder)


def timed_calls(runtime: Runtime) -> list[Timed]:
    """The gateway's call log from now on, each call with the moments it was in flight (its latency before it was
    logged, at once on leaving its slot).
    """
    calls: list[Timed] = []
    log = runtime.gateway.log
    assert log is not None

    def keep(record: CallRecord) -> None:
        ended = time.monotonic()
        calls.append((ended - record.latency_ms / 1000, ended, record))
        log(record)

    runtime.gateway.log = keep
    return calls


def most_at_once(calls: list[Timed]) -> int:
    """The most calls in flight at one moment."""
    moments = sorted([(start, 1) for start, _, _ in calls] + [(end, -1) for _, end, _ in calls])
    most = now = 0
    for _, change in moments:  # at a tie an end sorts first: calls that only touch do not overlap
        now += change
        most = max(most, now)
    return most


def test_a_fast_read_is_enriched_later_with_none_lost(runtime: Runtime, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(f"# {name.removesuffix('.md')}\n\n{text}\n", encoding="utf-8")
    calls = timed_calls(runtime)

    read = ingest_paths(runtime, [vault], enrich="later")

    assert (read.documents_added, read.chunks_added, read.syntheses_added) == (3, 3, 0)
    assert calls == []  # placed and linked at the embedding model's speed: no model call
    with runtime.db.connect() as con:
        deferred = reading_store.list_pending(con)
    assert len(deferred) == read.items_deferred >= 4  # each chunk's entities, and the implants of those with neighbours
    assert {item.error for item in deferred} == {DEFERRED}

    enriched = enrich_pending(runtime)

    with runtime.db.connect() as con:
        left = {item.key: item for item in reading_store.list_pending(con)}
    keys = {item.key for item in deferred}
    done = keys - set(left)
    assert enriched.items_completed == len(done)
    for key in keys & set(left):  # refused by the model: kept with the reason, asked again by the next enrich
        assert left[key].attempts >= 1 and left[key].error not in ("", DEFERRED), left[key]
    assert enriched.syntheses_added <= sum(step == "implant" for _, step, _ in done)
    asked = [record for _, _, record in calls]
    assert {record.purpose for record in asked} >= {"implant", "entities"}
    assert all(record.tier == "local" for record in asked)
    assert most_at_once(calls) >= 2, [(round(start, 2), round(end, 2), r.purpose) for start, end, r in calls]
