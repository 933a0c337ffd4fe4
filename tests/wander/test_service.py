"""The engine API over a real store: the whole step, replay, the status machine, guard rails and interventions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.errors import Remedy
from explorer.prompts.wander import DWELLING
from explorer.records.wander import ReviewState
from explorer.store import events as events_store
from explorer.store import wander as wander_store
from explorer.wander import service, stepping
from explorer.wander.config import SessionConfig, WanderTuning
from explorer.wander.errors import InvalidRequest, NotFound, SessionNotFound, SessionStateError, WanderError

from .conftest import SEED, mock_json, new_session

TUNING = WanderTuning()
# Crystals sooner than a reviewer would get them (every step, any bridge, within a domain too), for tests about
# what happens to them.
CRYSTALS_SOON = replace(TUNING, crystal_every=1, strong_bridges_per_note=1e9, crystal_across_domains=False)


def subjects(runtime, session_id: str) -> list[str]:
    with runtime.db.connect() as con:
        return [e.subject for e in events_store.list_events(con, session_id=session_id)]


def counts(runtime, session_id: str) -> dict[str, int]:
    with runtime.db.connect() as con:
        return {
            table: con.execute(f"SELECT count(*) FROM {table} WHERE session_id = ?", [session_id]).fetchone()[0]
            for table in ("wander_loci", "wander_traces", "wander_residues", "wander_resonances", "events")
        }


@pytest.mark.minilm
def test_create_session_stands_at_its_seed(corpus_runtime) -> None:
    session = new_session(corpus_runtime, random_seed=None, attractor="jokes about programmers")
    assert session.status == "active" and session.step_count == 0 and session.random_seed >= 0
    assert (
        session.seed_embedding.shape == (corpus_runtime.db.embedding_dim,) and session.attractor_embedding is not None
    )
    view = service.session_view(corpus_runtime, session.id)
    (seed,) = view.loci
    assert seed.id == session.current_locus_id and seed.source_type == "SEED" and seed.domains == ["python"]
    assert subjects(corpus_runtime, session.id) == ["wander.session.created"]
    defaults = SessionConfig(seed_concept="x")
    assert (
        defaults.max_drift_distance,
        defaults.max_steps,
        defaults.cloud_budget_cents,
        defaults.temperature,
        defaults.human_checkpoint_frequency,
    ) == (0.8, 1000, 500, 0.7, 50)
    with pytest.raises(InvalidRequest, match="seed concept"):
        service.create_session(corpus_runtime, SessionConfig(seed_concept="  "))
    with pytest.raises(InvalidRequest, match="max drift distance"):
        service.create_session(corpus_runtime, SessionConfig(seed_concept="x", max_drift_distance=3))
    with pytest.raises(SessionNotFound, match="no wander session") as raised:
        service.get_session(corpus_runtime, "not-a-session")
    assert raised.value.remedy is Remedy.LIST_SESSIONS and "explorer" not in str(raised.value)


@pytest.mark.minilm
def test_one_step_writes_every_stage_offline(corpus_runtime) -> None:
    session = new_session(corpus_runtime)
    result = service.step(corpus_runtime, session.id)
    assert result.step_number == 1 and result.from_locus.id == session.current_locus_id and not result.failures
    after = service.get_session(corpus_runtime, session.id)
    assert after.step_count == 1 and after.current_locus_id == result.to_locus.id and after.offline_calls == 2
    view = service.session_view(corpus_runtime, session.id)
    (trace,) = view.trace
    assert trace.to_locus_id == result.to_locus.id and trace.adjacencies_considered > 0
    assert set(trace.selection_scores) >= {"interestingness", "novelty", "bridge_potential", "uncertainty", "score"}
    assert trace.model_used == "offline/extractive" and trace.cost_cents == 0
    (residue,) = view.residues
    assert residue.trace_id == trace.id and residue.themes and residue.model_used == "offline/extractive"
    visited = {locus.id: locus for locus in view.loci}[result.to_locus.id]
    assert visited.visit_count == 1 and visited.interestingness == residue.interestingness
    assert len(view.loci) > 2  # the best other candidates are remembered, unvisited
    with corpus_runtime.db.connect() as con:
        nodes = wander_store.node_summaries(con, [locus.node_id for locus in view.loci if locus.node_id])
    assert nodes and all(nodes[locus.node_id]["domain"] in locus.domains for locus in view.loci if locus.node_id)
    seed = {locus.id: locus for locus in view.loci}[session.current_locus_id]
    assert {a["locus_id"] for a in seed.adjacent_to} >= {result.to_locus.id}
    assert view.resonances[0].supporting_residue_ids == [residue.id]
    assert {locus.id for locus in service.list_loci(corpus_runtime, session.id, visited=True)} == {seed.id, visited.id}
    assert len(service.list_loci(corpus_runtime, session.id, visited=False)) == len(view.loci) - 2
    assert service.get_locus(corpus_runtime, seed.id).adjacent_to == seed.adjacent_to
    with pytest.raises(NotFound):
        service.get_locus(corpus_runtime, "nope")
    # (a step may also warn that the fence is near; this one is about the stages)
    assert [x for x in subjects(corpus_runtime, session.id)[1:] if x != "wander.fence.approached"] == [
        "wander.step.started",
        "wander.adjacencies.found",
        "wander.locus.visited",
        "wander.resonance.detected",
        "wander.step.completed",
    ]


def test_a_step_is_all_or_nothing(corpus_runtime, monkeypatch) -> None:
    session = new_session(corpus_runtime)
    before = counts(corpus_runtime, session.id)

    def broken(con, residue):
        raise RuntimeError("disk full")

    monkeypatch.setattr(wander_store, "insert_residue", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        service.step(corpus_runtime, session.id)
    # nothing of the step was written but the event that it started (logged before it thought)
    assert counts(corpus_runtime, session.id) == {**before, "events": before["events"] + 1}
    assert subjects(corpus_runtime, session.id)[-1] == "wander.step.started"
    assert service.get_session(corpus_runtime, session.id).step_count == 0
    monkeypatch.undo()
    assert service.step(corpus_runtime, session.id).step_number == 1


def walk(runtime, session_id: str, steps: int) -> list[tuple]:
    out = []
    for _ in range(steps):
        r = service.step(runtime, session_id)
        out.append(
            (r.to_locus.node_id or r.to_locus.concept, r.trace.strategy, r.residue.themes if r.residue else None)
        )
    return out


@pytest.mark.minilm
def test_the_same_seed_replays_the_same_trace(corpus_runtime) -> None:
    first = walk(corpus_runtime, new_session(corpus_runtime, random_seed=11).id, 4)
    again = walk(corpus_runtime, new_session(corpus_runtime, random_seed=11).id, 4)
    other = walk(corpus_runtime, new_session(corpus_runtime, random_seed=12).id, 4)
    assert first == again
    assert [x[0] for x in other] != [x[0] for x in first]


def test_status_machine_through_the_api(mock_runtime) -> None:
    rt = mock_runtime
    s = new_session(rt)
    with pytest.raises(SessionStateError, match="already running"):
        service.resume(rt, s.id)
    paused = service.pause(rt, s.id, "lunch")
    assert (paused.status, paused.status_reason, paused.pause_kind) == ("paused", "lunch", "person")
    with pytest.raises(SessionStateError, match="is paused \\(lunch\\)$") as raised:
        service.step(rt, s.id)
    assert (raised.value.remedy, raised.value.subject) == (Remedy.RESUME_SESSION, s.id)
    with pytest.raises(SessionStateError):
        service.pause(rt, s.id)
    resumed = service.resume(rt, s.id)
    assert (resumed.status, resumed.pause_kind) == ("active", None)
    assert service.update_session(rt, s.id, status="paused").status == "paused"
    assert service.stop(rt, s.id).status == "completed"
    for action in (service.resume, service.pause, service.stop, service.abandon):
        with pytest.raises(SessionStateError, match="it has ended"):
            action(rt, s.id)
    with pytest.raises(SessionStateError):
        service.inject(rt, s.id, "anything")
    gone = new_session(rt)
    assert service.abandon(rt, gone.id).status == "abandoned"
    assert [x.status for x in service.list_sessions(rt, status="abandoned")] == ["abandoned"]
    with pytest.raises(InvalidRequest):
        service.update_session(rt, gone.id, seed_concept="x")
    assert subjects(rt, s.id) == [
        "wander.session.created",
        "wander.session.paused",
        "wander.session.resumed",
        "wander.session.paused",
        "wander.session.completed",
    ]


def test_max_steps_completes_the_session(mock_runtime) -> None:
    s = new_session(mock_runtime, max_steps=2)
    result = service.run(mock_runtime, s.id, 5)
    assert result.steps_completed == 2 and result.stopped_reason == "completed: reached max steps (2)"
    done = service.get_session(mock_runtime, s.id)
    assert done.status == "completed" and done.completed_at is not None
    with pytest.raises(SessionStateError, match="completed"):
        service.step(mock_runtime, s.id)


def test_checkpoint_pauses_for_review_and_resume_continues(mock_runtime) -> None:
    s = new_session(mock_runtime, human_checkpoint_frequency=2)
    seen = []
    result = service.run(mock_runtime, s.id, 5, progress=lambda done, total, note: seen.append((done, total)))
    assert result.steps_completed == 2 and result.stopped_reason.startswith("paused: checkpoint: 2 steps taken")
    assert seen == [(1, 5), (2, 5)]
    assert service.get_session(mock_runtime, s.id).pause_kind == "checkpoint"
    with pytest.raises(SessionStateError, match="checkpoint"):
        service.run(mock_runtime, s.id, 1)
    service.resume(mock_runtime, s.id)
    resumed = service.run(mock_runtime, s.id, 1)
    assert (resumed.steps_completed, resumed.stopped_reason) == (1, None)
    assert service.get_session(mock_runtime, s.id).step_count == 3


def test_broken_model_output_is_counted_and_trips_the_breaker(corpus_copy, make_runtime) -> None:
    rt = make_runtime(
        db=corpus_copy, completion_kwargs={"mock_response": "not json"}, local_model="ollama/llama3", retries=0
    )
    s = new_session(rt)
    result = service.run(rt, s.id, 10)
    assert result.steps_completed == TUNING.failure_trip
    assert result.stopped_reason.startswith("paused: circuit breaker: 3 steps in a row failed to dwell")
    view = service.session_view(rt, s.id)
    assert view.session.pause_kind == "circuit_breaker"
    assert len(view.trace) == 3 and view.residues == [] and all(t.failures >= 2 for t in view.trace)
    assert "wander.circuit.tripped" in subjects(rt, s.id)
    resumed = service.resume(rt, s.id)
    assert resumed.failure_streak == 0 and resumed.circuit_reset_step == 3


@pytest.mark.minilm
def test_a_loop_trips_the_breaker(mock_runtime) -> None:
    tuning = TUNING  # a ping-pong trips it at once, not only a long window of few loci
    s = new_session(mock_runtime)
    steps = []
    for concept in ("tail call elimination", "the walrus operator") * 2:
        service.inject(mock_runtime, s.id, concept)
        steps.append(service.step(mock_runtime, s.id, tuning))
    assert [r.trace.strategy for r in steps] == ["injected"] * 4
    assert steps[-1].status == "paused" and "loop" in steps[-1].status_reason
    assert steps[0].to_locus.id == steps[2].to_locus.id  # injecting a known concept reuses its locus


def test_drift_past_the_fence_warns_then_trips(mock_runtime) -> None:
    s = new_session(mock_runtime, seed_concept="the migration of arctic terns", max_drift_distance=0.3)
    result = service.run(mock_runtime, s.id, 10)
    assert result.steps_completed == TUNING.fence_trip and "drift past the fence" in result.stopped_reason
    seen = subjects(mock_runtime, s.id)
    assert seen.index("wander.fence.approached") < seen.index("wander.circuit.tripped")
    view = service.session_view(mock_runtime, s.id)
    assert all(t.selection_reason.startswith("no adjacency inside the fence") for t in view.trace)


@pytest.mark.minilm
def test_cloud_budget_is_never_exceeded(corpus_copy, make_runtime) -> None:
    # The cloud costs 0.1 cent a token: a mock answer (~20 tokens) about 2 cents, a dwelling's worst case (its whole
    # max_tokens answer) DWELLING.max_tokens / 10 cents. Every dwelling asks for the cloud, which is reserved at its
    # worst case each time; the budget holds that and 15 cents more.
    worst = DWELLING.max_tokens // 10
    budget = worst + 15
    rt = make_runtime(
        db=corpus_copy,
        local_model="ollama/llama3",
        cloud_model="gpt-4o-mini",
        prices={"gpt-4o-mini": (0.0, 1000.0)},
        completion_kwargs={"mock_response": mock_json()},
    )
    tuning = replace(TUNING, cloud_min_score=0.0, cloud_share=1.0)
    s = new_session(rt, cloud_budget_cents=budget)
    result = service.run(rt, s.id, 14, tuning=tuning)
    after = service.get_session(rt, s.id)
    assert result.steps_completed == 14 and 0 < after.cloud_spent_cents <= budget
    assert after.cloud_calls >= 5 and after.local_calls > 0
    view = service.session_view(rt, s.id)
    assert sum(t.cost_cents for t in view.trace) == pytest.approx(after.cloud_spent_cents)
    assert {t.model_used for t in view.trace} == {"gpt-4o-mini", "ollama/llama3"}
    with rt.db.connect() as con:
        warnings = [
            e.payload for e in events_store.list_events(con, session_id=s.id, subject_prefix="wander.budget.low")
        ]
    assert sum(w["exhausted"] for w in warnings) == 1
    # what is left cannot cover a dwelling's worst case: the next one goes to the local model
    assert budget - after.cloud_spent_cents < worst
    assert service.step(rt, s.id).trace.model_used == "ollama/llama3"


def test_inject_and_fence(mock_runtime) -> None:
    rt = mock_runtime
    s = new_session(rt)
    locus = service.inject(rt, s.id, "tail call elimination")
    assert locus.source_type == "SERENDIPITOUS" and locus.strategy == "injected"
    result = service.step(rt, s.id)
    assert result.to_locus.id == locus.id and result.trace.selection_reason.startswith("injected by a person")
    quiet = service.inject(rt, s.id, "decorators", force_visit=False)
    assert service.get_session(rt, s.id).pending_locus_id is None
    assert quiet.visit_count == 0
    fenced = service.fence(rt, s.id, "jokes and humour", "exclude")
    assert [(a.concept, a.action) for a in fenced.fence] == [("jokes and humour", "exclude")]
    widened = service.fence(rt, s.id, "the history of Unix", "include")
    assert [a.action for a in widened.fence] == ["exclude", "include"]
    with pytest.raises(InvalidRequest, match="include' or 'exclude"):
        service.fence(rt, s.id, "x", "expand")
    with pytest.raises(InvalidRequest):
        service.inject(rt, s.id, "  ")
    anchor = fenced.fence[0].embedding
    for _ in range(4):
        service.step(rt, s.id)
    view = service.session_view(rt, s.id)
    visited = [locus for locus in view.loci if locus.visit_count and locus.strategy != "injected"]
    assert all(1 - float(locus.embedding @ anchor) >= TUNING.exclude_radius for locus in visited)


@pytest.mark.minilm
def test_offline_walk_crystallizes_with_evidence_back_to_chunks(corpus_runtime) -> None:
    rt = corpus_runtime
    # When a walk's first crystal forms moves with every change to the themes: 6 of seeds 1-8 formed one after
    # 5-31 steps. Walks from three seeds, 30 steps each, until one does.
    crystal = None
    for seed in (1, 5, 8):
        s = new_session(rt, random_seed=seed)
        results = (service.step(rt, s.id, CRYSTALS_SOON) for _ in range(30))
        crystal = next((r.crystal for r in results if r.crystal), None)
        if crystal:
            break
    assert crystal is not None, "three walks of 30 offline steps formed no crystal"
    assert crystal.validated_by == "offline/extractive" and crystal.validation_notes.startswith("Supported")
    assert crystal.source_resonance_id and crystal.session_id == s.id and 0 <= crystal.confidence <= 1
    resonance = {r.id: r for r in service.list_resonances(rt, session_id=s.id)}[crystal.source_resonance_id]
    assert resonance.status == "confirmed" and resonance.occurrences >= TUNING.confirm_occurrences
    evidence = service.crystal_evidence(rt, crystal.id)
    assert evidence.residues and evidence.loci and evidence.chunks
    assert all(c.type == "raw_chunk" and c.document_id for c in evidence.chunks)
    kinds = {e["type"] for e in crystal.supporting_evidence}
    assert kinds == {"residue", "locus", "node"}
    assert subjects(rt, s.id).count("wander.crystal.formed") == 1
    # a person reviews it
    approved = service.review_crystal(rt, crystal.id, "approve", notes="checked the sources", reviewer="ann")
    assert approved.human_approved and approved.human_approved_by == "ann" and approved.human_approved_at
    assert approved.validation_notes == "checked the sources" and approved.review_state is ReviewState.APPROVED
    with pytest.raises(SessionStateError, match="already approved") as refused:
        service.review_crystal(rt, crystal.id, "reject")
    assert refused.value.remedy is Remedy.FORCE_REVIEW
    assert service.crystal_evidence(rt, crystal.id).crystal.review_state is ReviewState.APPROVED  # nothing changed
    rejected = service.review_crystal(rt, crystal.id, "reject", force=True)
    assert rejected.status == "invalidated" and rejected.review_state is ReviewState.REJECTED
    assert service.list_crystals(rt, status="invalidated") and not service.list_crystals(rt, status="active")
    with pytest.raises(SessionStateError, match="already rejected"):
        service.review_crystal(rt, crystal.id, "archive")
    assert service.review_crystal(rt, crystal.id, "archive", force=True).review_state is ReviewState.ARCHIVED
    with rt.db.connect() as con:
        validated = events_store.list_events(con, subject_prefix="wander.crystal.validated")
    reviews = [e.payload for e in validated if e.payload["validated_by"] == "human"]
    assert [(r["before"], r["after"], r["forced"]) for r in reviews] == [
        ("pending", "approved", False),
        ("approved", "rejected", True),
        ("rejected", "archived", True),
    ]
    with pytest.raises(InvalidRequest):
        service.review_crystal(rt, crystal.id, "maybe")
    with pytest.raises(NotFound):
        service.review_crystal(rt, "no-such-crystal", "approve")
    hits = service.search(rt, crystal.insight, limit=3)
    assert hits[0].type == "crystal" and hits[0].id == crystal.id
    assert {h.type for h in service.search(rt, SEED, types=("locus",))} == {"locus"}
    assert service.invalidate_resonance(rt, resonance.id).status == "invalidated"


def test_forced_crystallization_and_duplicates(mock_runtime) -> None:
    rt = mock_runtime
    s = new_session(rt)
    with pytest.raises(WanderError, match="no resonance"):
        service.crystallize(rt, s.id)
    for _ in range(2):
        service.step(rt, s.id, replace(TUNING, confirm_occurrences=10))  # resonances, but none confirmed
    first = service.crystallize(rt, s.id, CRYSTALS_SOON)
    assert first.crystal is not None and first.crystal.insight == MOCK_INSIGHT
    second = service.crystallize(rt, s.id, CRYSTALS_SOON)
    assert second.crystal is None and second.reason.startswith("near-duplicate")
    assert subjects(rt, s.id).count("wander.crystal.rejected") == 1


MOCK_INSIGHT = "Knowledge, like memory, needs a collector: what nothing refers to any more should be reclaimed."


@pytest.mark.minilm
def test_validation_can_refuse_a_crystal(corpus_copy, make_runtime) -> None:
    rt = make_runtime(
        db=corpus_copy,
        local_model="ollama/llama3",
        completion_kwargs={"mock_response": mock_json(valid=False, notes="the evidence says otherwise")},
    )
    s = new_session(rt)
    results = [service.step(rt, s.id, CRYSTALS_SOON) for _ in range(6)]
    assert any("rejected by validation: the evidence says otherwise" in f for r in results for f in r.failures)
    assert service.list_crystals(rt, session_id=s.id) == []


def test_delete_cascades_but_crystals_stay(mock_runtime) -> None:
    rt = mock_runtime
    s = new_session(rt)
    keep = new_session(rt)
    service.run(rt, keep.id, 2)
    service.run(rt, s.id, 8, tuning=CRYSTALS_SOON)
    crystals = service.list_crystals(rt, session_id=s.id)
    assert crystals
    service.delete_session(rt, s.id)
    with pytest.raises(SessionNotFound):
        service.session_view(rt, s.id)
    assert set(counts(rt, s.id).values()) == {0}
    kept = {c.id: c for c in service.list_crystals(rt)}[crystals[0].id]
    assert kept.session_id is None and kept.source_locus_id is None
    assert service.get_session(rt, keep.id).step_count == 2 and service.session_view(rt, keep.id).trace


@pytest.mark.minilm
def test_hot_memory_is_compressed_during_a_walk(mock_runtime) -> None:
    tuning = replace(TUNING, hot_memory_limit=3, hot_memory_keep=1)
    s = new_session(mock_runtime)
    for _ in range(4):
        service.step(mock_runtime, s.id, tuning)
    warm = service.session_view(mock_runtime, s.id).warm_memory
    assert [w.cluster_type for w in warm if w.cluster_type == "summary"] == ["summary"]
    assert {w.cluster_type for w in warm} >= {"summary", "theme_cluster"}
    (summary,) = [w for w in warm if w.cluster_type == "summary"]
    assert summary.content["through_step"] == 3


def test_resonances_carry_across_sessions(mock_runtime) -> None:
    rt = mock_runtime
    first = new_session(rt)
    service.run(rt, first.id, 3)
    (confirmed,) = [r for r in service.list_resonances(rt, session_id=first.id) if r.status == "confirmed"]
    second = new_session(rt, seed_concept="the walrus operator")
    service.step(rt, second.id)
    shared = {r.id: r for r in service.list_resonances(rt)}[confirmed.id]
    assert shared.session_id is None and shared.occurrences == confirmed.occurrences + 1
    assert confirmed.id in {r.id for r in service.list_resonances(rt, session_id=second.id)}
    assert shared.current_strength() == pytest.approx(shared.strength, rel=1e-3)


def test_a_step_meanwhile_in_another_process_is_refused_at_once(mock_runtime, make_runtime, monkeypatch) -> None:
    other = make_runtime(
        db=mock_runtime.settings.db_path, completion_kwargs={"mock_response": mock_json()}, local_model="ollama/llama3"
    )
    s = new_session(mock_runtime)
    commit = stepping._commit

    def racing(runtime, plan, read, holder):
        monkeypatch.setattr(stepping, "_commit", commit)
        with pytest.raises(SessionStateError, match="is taking a step in another process"):
            service.step(other, s.id)  # the other one is refused: this step holds the session until its write
        commit(runtime, plan, read, holder)

    monkeypatch.setattr(stepping, "_commit", racing)
    assert service.step(mock_runtime, s.id).step_number == 1
    assert service.get_session(mock_runtime, s.id).step_count == 1
    assert service.step(other, s.id).step_number == 2
