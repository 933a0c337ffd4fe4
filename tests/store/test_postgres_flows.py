"""The flows that matter, on PostgreSQL as on the file: ingest, a walk, a night of dreaming, a consolidation and
reviews with their log, each through the engine's services on a real server, with what they stored read back.
Two walks of different sessions run at once; two steps of one session at once keep one step.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from explorer import event_stream
from explorer.consolidation import service as consolidation
from explorer.dreaming import service as dreaming
from explorer.reading.ingest import ingest_paths
from explorer.records.wander import Crystal, ReviewFilter
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.store import wander as wander_store
from explorer.views import store_counts
from explorer.wander import review
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig
from explorer.wander.errors import SessionStateError

SAMPLE_LOG = Path(__file__).resolve().parents[1] / "data" / "experiences_sample.jsonl"


def session_config(seed_concept: str, random_seed: int) -> SessionConfig:
    """A walk the hashing embedder can go far on: it knows only shared words, so the fence is drawn wide."""
    return SessionConfig(
        seed_concept=seed_concept, random_seed=random_seed, max_drift_distance=1.5, human_checkpoint_frequency=0
    )


@pytest.fixture
def pg_runtime(postgres_url: str, embedder, small_corpus: Path) -> Runtime:
    """A runtime on a fresh PostgreSQL database with the small corpus read into it (offline models)."""
    runtime = open_runtime(replace(Settings(), db_path=postgres_url, embedding_model=embedder.name), embedder=embedder)
    report = ingest_paths(runtime, [small_corpus])
    assert report.documents_added > 10 and not report.errors, report.errors
    yield runtime
    runtime.flush()  # what the runtime's buffers hold, written while the server is there
    runtime.db.close()


def test_a_walk_a_night_and_a_consolidation(pg_runtime: Runtime) -> None:
    session = wander.create_session(pg_runtime, session_config("memory and forgetting", 3))
    walked = wander.run(pg_runtime, session.id, 8)
    assert walked.steps_completed == 8
    view = wander.session_view(pg_runtime, session.id)
    assert len(view.trace) == 8 == wander.get_session(pg_runtime, session.id).step_count
    night = dreaming.run_cycle(pg_runtime, dreams=2, seed=7)
    assert night.rem.dreams_stored + night.rem.dreams_dropped == 2
    consolidation.import_log(pg_runtime, SAMPLE_LOG)
    run = consolidation.run_consolidation(pg_runtime, trigger="manual")
    assert run.brief()["patterns"] > 0
    counts = store_counts(pg_runtime)
    assert counts["sessions"] == 1 and counts["nodes_by_type"]["rem_dream"] >= night.rem.dreams_stored


def pending_crystal(runtime: Runtime) -> Crystal:
    """One crystal awaiting review, stored."""
    crystal = Crystal(
        insight="Caches forget what nothing refers to.",
        embedding=runtime.embedder.embed(["caches forget"])[0],
        confidence=0.7,
        actionability=0.5,
        domains=["python"],
        validated_by="offline/extractive",
    )
    with runtime.db.transaction() as con:
        wander_store.insert_crystal(con, crystal)
    return crystal


def test_reviews_go_through_the_state_machine_and_the_log(pg_runtime: Runtime) -> None:
    crystal = pending_crystal(pg_runtime)
    wander.review_crystal(pg_runtime, crystal.id, "approve", reviewer="ana")
    with pytest.raises(SessionStateError):
        wander.review_crystal(pg_runtime, crystal.id, "reject", reviewer="ben")  # overturning needs force
    wander.review_crystal(pg_runtime, crystal.id, "reject", reviewer="ben", force=True)
    history = review.review_history(pg_runtime, crystal.id)
    assert [(entry.reviewer, entry.decision) for entry in history] == [("ana", "approve"), ("ben", "reject")]
    review.revert_review(pg_runtime, history[-1].id, reviewer="ana")
    with pg_runtime.db.connect() as con:
        assert review.require_crystal(con, crystal.id).review_state == "approved"


def test_walks_of_two_sessions_at_once_and_two_steps_of_one(pg_runtime: Runtime) -> None:
    first, second = (
        wander.create_session(pg_runtime, session_config(concept, seed))
        for concept, seed in (("garbage collection", 1), ("unicode strings", 2))
    )
    failures: list[BaseException] = []

    def walk(session_id: str) -> None:
        try:
            wander.run(pg_runtime, session_id, 5)
        except BaseException as exc:  # noqa: BLE001 - the test says what it was
            failures.append(exc)

    threads = [threading.Thread(target=walk, args=(s.id,)) for s in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert failures == []
    assert [wander.get_session(pg_runtime, s.id).step_count for s in (first, second)] == [5, 5]

    kept: list[int] = []
    refused: list[BaseException] = []

    def step() -> None:
        try:
            kept.append(wander.step(pg_runtime, first.id).step_number)
        except SessionStateError as exc:
            refused.append(exc)

    racing = [threading.Thread(target=step) for _ in range(2)]
    for thread in racing:
        thread.start()
    for thread in racing:
        thread.join(300)
    assert len(kept) + len(refused) == 2 and 6 in kept
    session = wander.get_session(pg_runtime, first.id)
    assert session.step_count == 5 + len(kept) == len(wander.session_view(pg_runtime, first.id).trace)


def test_a_follower_hears_the_steps_another_runtime_walks(pg_runtime: Runtime, postgres_url: str, embedder) -> None:
    """As the Sessions page's live feed hears a worker on another machine: a second runtime (its own pool)
    follows the events a first one stores while it walks.
    """
    watcher = open_runtime(replace(Settings(), db_path=postgres_url, embedding_model=embedder.name), embedder=embedder)
    session = wander.create_session(pg_runtime, session_config("garbage collection", 4))
    heard: list[str] = []
    follower = threading.Thread(
        target=lambda: heard.extend(
            e.subject for e in event_stream.follow(watcher.db, session.id, poll_s=0.1, idle_s=5.0)
        )
    )
    follower.start()
    wander.run(pg_runtime, session.id, 3)
    follower.join(60)
    assert heard.count("wander.step.completed") == 3
    watcher.db.close()


def test_a_cache_sees_what_another_machine_wrote(pg_runtime: Runtime, postgres_url: str, embedder, tmp_path) -> None:
    """The corpus space a walk keeps in memory is rebuilt when another runtime (another machine: its own pool)
    has read a document into the same database; never silently stale.
    """
    from explorer.wander.caches import corpus_space

    with pg_runtime.db.connect() as con:
        before = corpus_space(pg_runtime, con)
    other = open_runtime(replace(Settings(), db_path=postgres_url, embedding_model=embedder.name), embedder=embedder)
    note = tmp_path / "bees.txt"
    note.write_text("Bees keep their hive warm in winter by clustering and shivering.", encoding="utf-8")
    assert ingest_paths(other, [note]).documents_added == 1
    other.db.close()
    with pg_runtime.db.connect() as con:
        after = corpus_space(pg_runtime, con)
    assert after is not before and len(after.texts) > len(before.texts)
    assert any("Bees keep their hive warm" in text for text in after.texts)


def test_two_reviewers_at_once_go_through_the_state_machine(pg_runtime: Runtime, postgres_url: str) -> None:
    """Ana approves and Ben rejects one pending crystal at the same moment: one decides, the other then meets the
    crystal as decided (overturning needs force) and is refused; the log holds the one decision. A third
    connection holds the crystal's row while both start, so both are surely under way together.
    """
    crystal = pending_crystal(pg_runtime)
    outcomes: dict[str, object] = {}

    def decide(reviewer: str, decision: str) -> None:
        try:
            outcomes[reviewer] = wander.review_crystal(pg_runtime, crystal.id, decision, reviewer=reviewer).review_state
        except SessionStateError as exc:
            outcomes[reviewer] = exc

    with psycopg.connect(postgres_url) as holder:  # a transaction holding the row until both reviewers wait
        holder.execute("SELECT id FROM wander_crystals WHERE id = %s FOR UPDATE", [crystal.id])
        reviewers = [threading.Thread(target=decide, args=args) for args in (("ana", "approve"), ("ben", "reject"))]
        for thread in reviewers:
            thread.start()
        time.sleep(1.0)  # both read the crystal now, or wait to
        holder.rollback()
    for thread in reviewers:
        thread.join(60)
    refused = [who for who, outcome in outcomes.items() if isinstance(outcome, SessionStateError)]
    assert len(refused) == 1, outcomes
    history = review.review_history(pg_runtime, crystal.id)
    assert [entry.reviewer for entry in history] == [who for who in ("ana", "ben") if who not in refused]


def test_two_bulk_reviews_at_once_go_through_the_state_machine(pg_runtime: Runtime, postgres_url: str) -> None:
    """Ana approves and Ben rejects every pending crystal at once: the second waits for the first, then leaves the
    crystals it decided alone (overturning needs force): each crystal is decided once, and logged once.
    """
    crystals = [
        Crystal(
            insight=f"Insight {i}: caches forget what nothing refers to.",
            embedding=pg_runtime.embedder.embed([f"insight {i}"])[0],
            confidence=0.7,
            actionability=0.5,
            domains=["python"],
            validated_by="offline/extractive",
        )
        for i in range(3)
    ]
    with pg_runtime.db.transaction() as con:
        for crystal in crystals:
            wander_store.insert_crystal(con, crystal)
    decided: dict[str, int] = {}

    def bulk(reviewer: str, decision: str) -> None:
        decided[reviewer] = review.bulk_review(pg_runtime, ReviewFilter(), decision, reviewer=reviewer).reviewed

    with psycopg.connect(postgres_url) as holder:  # holds every crystal's row until both reviews are under way
        holder.execute("SELECT id FROM wander_crystals FOR UPDATE")
        reviewers = [threading.Thread(target=bulk, args=args) for args in (("ana", "approve"), ("ben", "reject"))]
        for thread in reviewers:
            thread.start()
        time.sleep(1.0)
        holder.rollback()
    for thread in reviewers:
        thread.join(60)
    assert sorted(decided.values()) == [0, 3], decided
    assert all(len(review.review_history(pg_runtime, c.id)) == 1 for c in crystals)
