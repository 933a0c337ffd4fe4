"""The run on a real store: read, think with the file free, write once; a failed run leaves nothing behind; the
product's activity is captured once; a bad model answer fails its item only; the knowledge can be queried.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from explorer.consolidation import service
from explorer.consolidation.service import ConsolidationError, import_log, query_knowledge, run_consolidation
from explorer.errors import Remedy
from explorer.prompts import Prompt
from explorer.providers.budget import Budget
from explorer.records import Node, Verdict
from explorer.store import consolidation as consolidation_store
from explorer.store import corpus
from explorer.store import dreaming as dreaming_store
from explorer.testing.model_server import SERVED_MODEL, Reply
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

from .conftest import SAMPLE_LOG

TABLES = ("consolidation_runs", "consolidation_patterns", "consolidation_ladder", "consolidation_checks")


def counts(runtime) -> dict[str, int]:
    with runtime.db.connect() as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("experiences", *TABLES)}


class HeldProbe:
    """Stands in front of the offline answerer and records whether the file was open at each model call."""

    def __init__(self, runtime) -> None:
        self.runtime, self.inner, self.held = runtime, runtime.gateway.offline, []

    def answer(self, prompt: Prompt[Any], fields: dict[str, Any]) -> str:
        self.held.append(self.runtime.db.held)
        return self.inner.answer(prompt, fields)

    def prepare(self, requests: list[tuple[Prompt[Any], dict[str, Any]]]) -> None:
        self.inner.prepare(requests)


def test_a_run_stores_its_knowledge_in_one_go_with_the_file_free_while_the_model_thinks(runtime) -> None:
    import_log(runtime, SAMPLE_LOG)
    probe = HeldProbe(runtime)
    runtime.gateway.offline = probe
    report = run_consolidation(runtime, "imported").to_json()
    assert probe.held and not any(probe.held), "a model call ran while this process held the database file"
    assert report["status"] == "verified" and report["experiences"] == 15
    assert report["dropped"]["low_importance"] >= 1  # the scans that repeat themselves
    assert len(report["patterns"]) == 3 and report["ladder_levels"] == 4
    assert report["pattern_quality"] == 0.875  # naked and hidden singles; backtracking recovers from errors
    stored = counts(runtime)
    assert stored["consolidation_runs"] == 1 and stored["consolidation_patterns"] == 3
    assert stored["consolidation_checks"] == 5 and stored["experiences"] == 15
    with runtime.db.connect() as con:
        levels = consolidation_store.run_ladder(con, report["run_id"])
        assert [len(level) for level in levels] == [r["items"] for r in report["ladder"]]
        assert consolidation_store.run_report(con, report["run_id"])["patterns"] == report["patterns"]


def test_a_failed_run_leaves_nothing_behind(runtime, monkeypatch) -> None:
    import_log(runtime, SAMPLE_LOG)
    before = counts(runtime)

    def fail(*args, **kwargs):
        raise RuntimeError("the disk filled up")

    monkeypatch.setattr(consolidation_store, "insert_knowledge", fail)
    with pytest.raises(RuntimeError, match="the disk filled up"):
        run_consolidation(runtime, "imported")
    assert counts(runtime) == before  # no run, no pattern, and the raw experiences as they were


def test_the_products_activity_is_captured_once(runtime) -> None:
    night = datetime(2026, 1, 4, 3, tzinfo=UTC)
    dreams = [Node(type="rem_dream", text=f"Dream {n} links memory and sleep.", created_at=night) for n in range(2)]
    for node in dreams:
        node.embedding = runtime.embedder.embed([node.text])[0]
    verdict = Verdict(dreams[0].id, dreams[1].id, 4, 4, 4, True, "a real link", connection="both are about sleep")
    with runtime.db.transaction() as con:
        corpus.insert_nodes(con, dreams)
        dreaming_store.insert_verdicts(con, [verdict])
    first = run_consolidation(runtime, "dreams").to_json()
    again = run_consolidation(runtime, "dreams").to_json()
    assert first["captured"] == 3 and again["captured"] == 0
    assert first["status"] == "raw" and "no pattern" in first["warnings"][-1]  # three are too few to cluster
    with runtime.db.connect() as con:
        assert consolidation_store.count_experiences(con, ["dreams"]) == 3


def test_nothing_to_consolidate_is_skipped_and_stores_nothing(runtime) -> None:
    report = run_consolidation(runtime, "wander").to_json()
    assert report["status"] == "skipped" and report["run_id"] is None
    assert counts(runtime)["consolidation_runs"] == 0


def test_a_bad_model_answer_fails_its_item_and_the_run_goes_on(make_runtime, model_server) -> None:
    def script(request):
        if request.kind == "consolidation_pattern" and "Guessed" in str(request.fields):
            return Reply(content="<html>no JSON here</html>")
        return None

    server = model_server(script=script)
    runtime = make_runtime(local_model=SERVED_MODEL, api_base=server.url, retries=1)
    import_log(runtime, SAMPLE_LOG)
    report = service.run_consolidation(runtime, "imported").to_json()
    assert report["failures"] == 1 and "refused" in report["errors"][0]
    assert len(report["patterns"]) == 2 and report["status"] in ("verified", "warnings")
    assert report["model_calls"] >= 2 + 2  # the failed cluster was asked twice (one retry)
    assert counts(runtime)["consolidation_patterns"] == 2


def test_the_knowledge_answers_a_situation(runtime) -> None:
    with pytest.raises(ConsolidationError, match="nothing has been consolidated") as refused:
        query_knowledge(runtime, "a cell has one candidate")
    assert refused.value.remedy == Remedy.CONSOLIDATE
    import_log(runtime, SAMPLE_LOG)
    run_consolidation(runtime, "imported")
    run_id, patterns, abstractions = query_knowledge(runtime, "a cell with a single candidate left")
    assert patterns[0].item.name == "Naked single" and patterns[0].pattern is not None
    assert patterns[0].score >= patterns[-1].score
    assert abstractions and all(a.item.level >= 2 for a in abstractions)
    with pytest.raises(ConsolidationError, match="empty"):
        query_knowledge(runtime, "  ")
    with runtime.db.transaction() as con:  # as a run stores a pattern a stronger one contradicted
        con.execute("UPDATE consolidation_patterns SET status = 'invalidated' WHERE name = 'Naked single'")
    _, after, _ = query_knowledge(runtime, "a cell with a single candidate left")
    assert after and "Naked single" not in {hit.item.name for hit in after}


def test_a_real_walk_is_captured_step_by_step(corpus_runtime) -> None:
    session = wander.create_session(
        corpus_runtime,
        SessionConfig(
            seed_concept="unicode strings", random_seed=1, human_checkpoint_frequency=0, max_drift_distance=1.5
        ),
    )
    wander.run(corpus_runtime, session.id, 4)
    report = run_consolidation(corpus_runtime, "wander").to_json()
    with corpus_runtime.db.connect() as con:
        captured = consolidation_store.list_experiences(con, ["wander"])
        steps = consolidation_store.wander_steps(con)
    assert len(steps) >= 4 and report["captured"] == len(captured) >= 4
    moves = [e for e in captured if e.kind == "move"]
    assert {e.session_id for e in moves} == {session.id}
    assert sorted(e.metadata["step"] for e in moves) == sorted(s.step_number for s in steps)
    assert all(e.strategy and e.description for e in moves)


def test_each_pattern_is_found_again_from_its_own_experiences(runtime) -> None:
    """Retrieval: what a pattern compressed can be found again through it."""
    import_log(runtime, SAMPLE_LOG)
    report = run_consolidation(runtime, "imported").to_json()
    with runtime.db.connect() as con:
        experiences = {e.id: e for e in consolidation_store.list_experiences(con, ["imported"])}
    assert report["patterns"] and all(p["examples"] for p in report["patterns"])  # else the loop checks nothing
    for pattern in report["patterns"]:
        for example in pattern["examples"]:
            _, hits, _ = query_knowledge(runtime, experiences[example].description, limit=1)
            assert hits[0].item.id == pattern["id"], (pattern["name"], experiences[example].description)


def test_a_budget_that_cannot_cover_a_call_fails_the_items_not_the_run(make_runtime, model_server) -> None:
    server = model_server()
    runtime = make_runtime(local_model=SERVED_MODEL, api_base=server.url, prices={SERVED_MODEL: (1000.0, 1000.0)})
    import_log(runtime, SAMPLE_LOG)
    report = run_consolidation(runtime, "imported", budget=Budget(0.01)).to_json()
    assert report["budget_exhausted"] and report["spent_cents"] == 0.0
    assert report["status"] == "raw" and report["failures"] == report["clusters"] == 3
    assert all("budget exhausted" in e for e in report["errors"]) and not server.requests
