"""A record's JSON form is its contract with the CLI's --json, the API and the MCP tools: the keys in order, the
values as they were (datetimes and enums for each surface to write), and a published shape that accepts them.
"""

from __future__ import annotations

import dataclasses
import inspect
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, NotRequired

import numpy as np
import pytest
from pydantic import TypeAdapter

from explorer.records import dreaming, jobs, json_form, wander
from explorer.records.dreaming import CycleJson, CycleReport, ExplorationReport, FusionReport, RemReport
from explorer.records.jobs import Job, JobJson, JobStatus
from explorer.records.json_form import JsonRecord, published
from explorer.records.wander import (
    CrystalJson,
    FenceAnchor,
    LocusJson,
    ResonanceJson,
    ReviewState,
    SearchHitJson,
    SessionJson,
    StepJson,
)

VECTOR = np.ones(4, dtype=np.float32) / 2
AT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)


def records_with_forms() -> list[type[JsonRecord]]:
    """Every record class of the records package that declares a JSON form."""
    return [
        cls
        for module in (wander, dreaming, jobs)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, JsonRecord) and cls is not JsonRecord
    ]


def session() -> wander.Session:
    fence = [FenceAnchor("baking", "exclude", VECTOR)]
    return wander.Session(name="s", seed_concept="gc", seed_embedding=VECTOR, fence=fence, created_at=AT, id="s1")


def locus() -> wander.Locus:
    return wander.Locus(
        "s1", "weak references", VECTOR, "ADJACENT", "distance_band", node_id="n1", domains=["python"], id="l1",
        adjacent_to=[{"locus_id": "l2", "distance": 0.4, "strength": 0.6}],
    )  # fmt: skip


def test_every_key_of_every_form_is_something_its_record_has() -> None:
    forms = records_with_forms()
    assert {wander.Session, wander.Locus, wander.StepResult, CycleReport, Job} <= set(forms)
    for cls in forms:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        for key in cls.json_form.keys:
            assert isinstance(key, json_form.Computed) or key in names or isinstance(getattr(cls, key), property), (
                cls.__name__,
                key,
            )
        assert cls.json_form.record is cls and cls.json_form.typed_dict.__name__ == cls.json_form.title


def test_a_session_shows_its_settings_in_order_without_vectors_and_keeps_dates_as_dates() -> None:
    shown = session().to_json()
    assert list(shown)[:4] == ["id", "name", "status", "status_reason"]
    assert list(shown)[-3:] == ["created_at", "last_step_at", "completed_at"]
    assert "seed_embedding" not in shown and "budget_remaining_cents" not in shown and "failure_streak" not in shown
    assert shown["fence"] == [{"concept": "baking", "action": "exclude"}]
    assert shown["created_at"] is AT


def test_a_fence_anchor_shows_no_vector_but_stores_it_and_comes_back_from_its_stored_form() -> None:
    anchor = FenceAnchor("baking", "include", np.array([0.1234567, 0.5], dtype=np.float32))
    assert anchor.to_json() == {"concept": "baking", "action": "include"}
    stored = anchor.to_stored()
    assert stored["embedding"] == [0.123457, 0.5]
    assert FenceAnchor.from_stored(stored).concept == "baking"


def test_a_locus_shows_its_connections_only_in_its_detail() -> None:
    brief, detail = locus().to_json(), locus().to_json(connections=True)
    assert list(brief) == [
        "id", "concept", "source_type", "strategy", "node_id", "domains", "visit_count", "interestingness",
        "novelty_score", "actionability", "uncertainty",
    ]  # fmt: skip
    assert list(detail) == [*brief, "adjacent_to", "bridges_to", "contradicts"]
    assert detail["adjacent_to"] == [{"locus_id": "l2", "distance": 0.4, "strength": 0.6}]


def test_a_resonance_shows_its_strength_decayed_to_now_and_rounded_beside_the_stored_one() -> None:
    ten_days_ago = datetime.now(UTC) - timedelta(days=10)
    resonance = wander.Resonance(["gc"], None, strength=0.8, decay_rate=0.1, last_reinforced_at=ten_days_ago)
    shown = resonance.to_json()
    assert shown["stored_strength"] == 0.8
    assert shown["strength"] == pytest.approx(0.8 * 0.9**10, abs=1e-4) and shown["strength"] == round(
        shown["strength"], 4
    )
    assert list(shown).index("strength") + 1 == list(shown).index("stored_strength")


def test_a_crystal_and_a_review_show_what_they_derive_where_the_contract_has_it() -> None:
    crystal = wander.Crystal("insight", VECTOR, 0.7, 0.5, ["python"], human_approved=True, human_approved_at=AT)
    shown = crystal.to_json()
    assert shown["review_state"] is ReviewState.APPROVED
    assert list(shown)[13:16] == ["review_state", "human_approved", "human_approved_at"]
    review = wander.Review(crystal.id, "approve", "me", ReviewState.PENDING, ReviewState.APPROVED, None, None)
    assert review.to_json()["revertible"] is False
    assert list(review.to_json())[10] == "revertible"


def test_a_step_shows_each_record_in_it_by_that_records_own_form() -> None:
    here = locus()
    trace = wander.Trace("s1", 3, here.id, strategy="distance_band")
    resonance = wander.Resonance(["gc"], None, id="r1")
    step = wander.StepResult(3, None, here, trace, None, resonances=[resonance], failures=["dwell: timeout"])
    shown = step.to_json()
    assert list(shown) == [
        "step_number", "from_locus", "to_locus", "trace", "residue", "resonances_detected", "crystal", "failures",
        "status", "status_reason",
    ]  # fmt: skip
    assert shown["to_locus"] == here.to_json() and "adjacent_to" not in shown["to_locus"]
    assert shown["trace"] == trace.to_json() and shown["from_locus"] is None
    assert [r["id"] for r in shown["resonances_detected"]] == ["r1"]


def test_a_search_hit_rounds_its_score() -> None:
    assert wander.SearchHit("locus", "l1", "weak references", 0.123456789).to_json()["score"] == 0.1235


def test_a_night_shows_each_report_then_its_totals() -> None:
    night = CycleReport(
        ExplorationReport(seed=1, model_calls=2, failures=1, spent_cents=0.1),
        FusionReport(model_calls=3, spent_cents=0.2),
        RemReport(model_calls=4, spent_cents=0.0000004, budget_exhausted=True),
    )
    shown = night.to_json()
    assert list(shown) == ["exploration", "fusion", "rem", "model_calls", "failures", "spent_cents", "budget_exhausted"]
    assert shown["exploration"] == dataclasses.asdict(night.exploration)
    assert (shown["model_calls"], shown["failures"], shown["spent_cents"], shown["budget_exhausted"]) == (
        9,
        1,
        0.3,
        True,
    )


@pytest.mark.parametrize(
    ("shape", "value"),
    [
        (SessionJson, lambda: session().to_json()),
        (LocusJson, lambda: locus().to_json(connections=True)),
        (CrystalJson, lambda: wander.Crystal("insight", None, 0.7, 0.5, [], created_at=AT).to_json()),
        (ResonanceJson, lambda: wander.Resonance(["gc"], None, last_reinforced_at=AT).to_json()),
        (SearchHitJson, lambda: wander.SearchHit("crystal", "c1", "text", 0.5, "s1").to_json()),
        (CycleJson, lambda: CycleReport(ExplorationReport(), FusionReport(), RemReport()).to_json()),
    ],
)
def test_the_published_shape_takes_what_is_printed_and_writes_it_as_the_api_does(shape: Any, value: Any) -> None:
    shown = value()
    written = TypeAdapter(shape).dump_python(TypeAdapter(shape).validate_python(shown), mode="json")
    assert list(written) == list(shown)
    if "created_at" in shown and shown["created_at"] is not None:
        assert written["created_at"] == "2026-03-01T12:30:00Z"


def test_a_step_shape_names_the_shapes_of_the_records_in_it() -> None:
    schema = TypeAdapter(StepJson).json_schema()
    assert schema["title"] == "StepJson"
    assert schema["properties"]["to_locus"] == {"$ref": "#/$defs/LocusJson"}
    assert schema["properties"]["resonances_detected"]["items"] == {"$ref": "#/$defs/ResonanceJson"}
    assert set(schema["required"]) == set(StepJson.__metadata__[0].typed_dict.__required_keys__)
    locus_shape = schema["$defs"]["LocusJson"]
    assert "adjacent_to" in locus_shape["properties"] and "adjacent_to" not in locus_shape["required"]
    assert "shown only in a locus's detail" in locus_shape["description"]


def test_what_a_surface_adds_to_a_shape_comes_after_the_records_keys() -> None:
    extended = wander.Session.json_form.extended("SessionAfter", "A session, and what followed.", more=NotRequired[int])
    after = published(Annotated[dict[str, Any], extended])
    assert list(after.__annotations__) == [*wander.Session.json_form.typed_dict.__annotations__, "more"]
    assert "more" not in after.__required_keys__ and "id" in after.__required_keys__
    assert after.__doc__ == "A session, and what followed."
    assert published(dict[str, Any]) == dict[str, Any]


def test_a_job_shows_its_id_as_job_id_its_progress_together_and_its_times_as_iso_text() -> None:
    job = Job(
        id="j1", kind="dream.rem", params={"dreams": 2}, status=JobStatus.RUNNING, done=1, total=2, current="dream 2",
        result=None, error=None, cancel_requested=False, worker="host:12:0", created_at=AT, started_at=AT,
        finished_at=None, heartbeat_at=AT,
    )  # fmt: skip
    shown = job.to_json()
    assert list(shown) == [
        "job_id", "kind", "params", "status", "progress", "cancel_requested", "result", "error", "worker",
        "created_at", "started_at", "finished_at",
    ]  # fmt: skip
    assert shown["job_id"] == "j1" and shown["status"] is JobStatus.RUNNING
    assert shown["progress"] == {"phase": "", "done": 1, "total": 2, "current": "dream 2"}
    assert (shown["created_at"], shown["started_at"], shown["finished_at"]) == (AT.isoformat(), AT.isoformat(), None)
    assert TypeAdapter(JobJson).validate_python(shown) == shown
