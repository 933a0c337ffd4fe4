"""A session's events, in order, with their payloads: each subject is logged at the moment it describes, and
an in-process subscriber hears exactly what was stored.
"""

from __future__ import annotations

import json
from dataclasses import replace

from explorer import event_stream
from explorer.prompts.wander import DWELLING
from explorer.records.wander import ReviewState
from explorer.store.events import Event
from explorer.wander import service
from explorer.wander.config import WanderTuning

from .conftest import new_session, stored

TUNING = WanderTuning()
# Crystals as soon as a resonance allows (every step, any bridge, within a domain too), from resonances that grow
# on the hashing embedder, whose themes share few words (random seed 3 forms one at step 14).
CRYSTALS_SOON = replace(
    TUNING, crystal_every=1, strong_bridges_per_note=1e9, crystal_across_domains=False, resonance_match=0.3
)
# Within a step, the stages' order: where to go, the fence, the visit, resonances, a crystal, the guard rails, the
# step's end, and the pause or completion the step brought.
STAGE = {
    "wander.step.started": 0,
    "wander.adjacencies.found": 1,
    "wander.fence.approached": 2,
    "wander.locus.visited": 3,
    "wander.resonance.detected": 4,
    "wander.resonance.strengthened": 4,
    "wander.resonance.confirmed": 4,
    "wander.crystal.formed": 5,
    "wander.crystal.validated": 5,
    "wander.crystal.rejected": 5,
    "wander.budget.low": 6,
    "wander.circuit.tripped": 7,
    "wander.step.completed": 8,
    "wander.session.paused": 9,
    "wander.session.completed": 9,
}


def steps_of(log: list[Event]) -> dict[int, list[Event]]:
    """Each step's events, from its start to the pause or completion it brought, checked to be in stage order
    and all about that step.
    """
    steps: dict[int, list[Event]] = {}
    current: list[Event] | None = None
    for event in log:
        if event.subject == "wander.step.started":
            current = steps.setdefault(event.payload["step_number"], [])
        elif current is None or current[-1].subject in ("wander.session.paused", "wander.session.completed"):
            current = None  # between steps: a person's pause, resume, review or stop
        elif current[-1].subject == "wander.step.completed" and STAGE[event.subject] < STAGE[current[-1].subject]:
            current = None
        if current is not None:
            current.append(event)
    for number, items in steps.items():
        assert [STAGE[e.subject] for e in items] == sorted(STAGE[e.subject] for e in items), items
        assert {e.payload["step_number"] for e in items} == {number}, items
        assert items[0].subject == "wander.step.started" and "wander.step.completed" in [e.subject for e in items]
    return steps


def test_a_full_session_logs_every_moment_in_order_and_subscribers_hear_it_all(corpus_runtime) -> None:
    rt = corpus_runtime
    heard: list[Event] = []
    subscription = event_stream.subscribe(rt.db, heard.append, subject_prefix="wander.")
    session = new_session(rt, random_seed=1)  # a walk that forms a crystal early (on this corpus 6 seeds in 7 do)
    crystal = None
    for _ in range(20):
        result = service.step(rt, session.id, CRYSTALS_SOON)
        if result.crystal is not None:
            crystal = result.crystal
            break
    assert crystal is not None, "20 offline steps formed no crystal"
    service.pause(rt, session.id, "a look at the crystal")
    service.resume(rt, session.id)
    service.run(rt, session.id, 2, tuning=CRYSTALS_SOON)
    service.review_crystal(rt, crystal.id, "approve", reviewer="ann")
    service.stop(rt, session.id)
    subscription.close()
    log = stored(rt, session.id)
    view = service.session_view(rt, session.id)

    # the subscriber heard every stored event, with its stored seq, in order, and nothing else
    assert heard == log
    assert [e.seq for e in log] == sorted({e.seq for e in log})
    assert all(a.created_at <= b.created_at for a, b in zip(log, log[1:], strict=False))

    # the session's life: created first, then steps, a person's pause and resume, a review, the stop last
    subjects = [e.subject for e in log]
    assert subjects[0] == "wander.session.created"
    created = log[0].payload
    assert created["random_seed"] == 1 and created["seed_locus_id"] == view.trace[0].from_locus_id
    person = [e for e in log if e.payload.get("reason") in ("a look at the crystal", "stopped by a person")]
    assert [e.subject for e in person] == ["wander.session.paused", "wander.session.completed"]
    paused_at = subjects.index("wander.session.paused")
    assert subjects[paused_at + 1] == "wander.session.resumed"
    assert log[-1].subject == "wander.session.completed" and log[-1].payload["status"] == "completed"
    assert log[-1].payload["step_number"] == view.session.step_count

    # every step: started from where the last one went, visited where it says it went, in stage order
    steps = steps_of(log)
    assert sorted(steps) == list(range(1, view.session.step_count + 1))
    for trace in view.trace:
        items = {e.subject: e.payload for e in steps[trace.step_number]}
        assert items["wander.step.started"]["from_locus_id"] == trace.from_locus_id
        assert items["wander.locus.visited"]["locus_id"] == trace.to_locus_id
        done = items["wander.step.completed"]
        assert (done["to_locus_id"], done["strategy"]) == (trace.to_locus_id, trace.strategy)
        assert "wander.adjacencies.found" in items and items["wander.adjacencies.found"]["count"] > 0

    # resonances: detected first, strengthened by later residues, confirmed right after the reinforcement
    resonances = {r.id: r for r in service.list_resonances(rt)}
    touched = [e for e in log if e.subject.startswith("wander.resonance.")]
    assert touched[0].subject == "wander.resonance.detected"
    assert all(e.payload["resonance_id"] in resonances for e in touched)
    confirmed = [i for i, e in enumerate(log) if e.subject == "wander.resonance.confirmed"]
    assert confirmed, "a crystal forms from a confirmed resonance"
    for i in confirmed:
        before = log[i - 1]
        assert before.subject == "wander.resonance.strengthened"
        assert before.payload["resonance_id"] == log[i].payload["resonance_id"]
        assert resonances[log[i].payload["resonance_id"]].status == "confirmed"

    # the crystal: formed and validated by the model in its step, validated again by the person who approved it
    formed = [e for e in log if e.subject == "wander.crystal.formed"]
    assert [e.payload["crystal_id"] for e in formed] == [crystal.id]
    step_done = {e.subject: e.payload for e in steps[formed[0].payload["step_number"]]}["wander.step.completed"]
    assert step_done["crystal_id"] == crystal.id and formed[0].payload["insight"] == crystal.insight
    validations = [e.payload for e in log if e.subject == "wander.crystal.validated"]
    assert [(v["crystal_id"], v["validated_by"], v["decision"]) for v in validations] == [
        (crystal.id, "offline/extractive", "valid"),
        (crystal.id, "human", "approve"),
    ]
    assert service.crystal_evidence(rt, crystal.id).crystal.review_state is ReviewState.APPROVED


ANSWER = {  # one answer every wander prompt parses (dwelling, analogy, crystallize, validate)
    "connection": "Both decide when something is no longer needed.",
    "tension": "One reclaims at once, the other waits.",
    "bridge": "Lifetimes of objects translate into lifetimes of ideas.",
    "surprise": "Forgetting turns out to be a feature.",
    "possibility": "Treat stale knowledge like unreachable objects.",
    "themes": ["memory", "garbage collection"],
    "interestingness": 0.8,
    "actionability": 0.6,
    "analogies": [],
    "insight": "Knowledge, like memory, needs a collector.",
    "confidence": 0.8,
    "domains": ["python"],
    "valid": True,
    "notes": "supported",
}


def test_the_fence_and_the_circuit_breaker_are_logged_in_the_step_that_met_them(corpus_copy, make_runtime) -> None:
    rt = make_runtime(
        db=corpus_copy, local_model="ollama/llama3", completion_kwargs={"mock_response": json.dumps(ANSWER)}
    )
    session = new_session(rt, seed_concept="the migration of arctic terns", max_drift_distance=0.3)
    result = service.run(rt, session.id, 10)
    assert result.steps_completed == TUNING.fence_trip
    steps = steps_of(stored(rt, session.id))
    for items in steps.values():
        subjects = [e.subject for e in items]
        fence = items[subjects.index("wander.fence.approached")].payload
        # every candidate lay outside the fence: the walk went back, and said why
        assert fence["out_of_scope"] > 0 and fence["max_drift_distance"] == 0.3
        assert fence["warning"].startswith("no adjacency inside the fence")
    last = {e.subject: e.payload for e in steps[TUNING.fence_trip]}
    assert "drift past the fence" in last["wander.circuit.tripped"]["reason"]
    assert last["wander.session.paused"]["reason"] == last["wander.circuit.tripped"]["reason"]
    assert [e.subject for e in steps[TUNING.fence_trip]][-3:] == [
        "wander.circuit.tripped",
        "wander.step.completed",
        "wander.session.paused",
    ]


def test_a_spent_budget_is_logged_in_the_step_that_found_it_spent(corpus_copy, make_runtime) -> None:
    # The cloud costs 0.1 cent a token: an answer about 2 cents, a dwelling's worst case (its whole max_tokens
    # answer) DWELLING.max_tokens / 10 cents, reserved before each call; so the cloud answers while that much of the
    # budget (15 cents more) is left, then the local model does.
    worst = DWELLING.max_tokens // 10
    budget = worst + 15
    rt = make_runtime(
        db=corpus_copy,
        local_model="ollama/llama3",
        cloud_model="gpt-4o-mini",
        prices={"gpt-4o-mini": (0.0, 1000.0)},
        completion_kwargs={"mock_response": json.dumps(ANSWER)},
    )
    session = new_session(rt, cloud_budget_cents=budget)
    service.run(rt, session.id, 14, tuning=replace(TUNING, cloud_min_score=0.0, cloud_share=1.0))
    log = stored(rt, session.id)
    steps = steps_of(log)
    (warning,) = [e.payload for e in log if e.subject == "wander.budget.low"]
    assert warning["exhausted"] and warning["budget_cents"] == budget
    assert 0 < warning["spent_cents"] == service.get_session(rt, session.id).cloud_spent_cents <= budget
    models = {
        n: {e.subject: e.payload for e in items}["wander.step.completed"]["model_used"] for n, items in steps.items()
    }
    found = warning["step_number"]
    assert {models[n] for n in range(1, found)} == {"gpt-4o-mini"}  # the cloud answered until then
    assert models[found] == "ollama/llama3"  # and this step's dwelling went local
    assert [e.subject for e in steps[found]][-2:] == ["wander.budget.low", "wander.step.completed"]
