"""Capture: imported logs are read line by line (a bad line reported, nothing else lost), and the product's own
activity becomes experiences whose ids do not change from one capture to the next.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from explorer.consolidation.experiences import from_dreams, from_wander, read_log
from explorer.consolidation.service import ConsolidationError, import_log
from explorer.records import Node, Verdict
from explorer.records.consolidation import WanderStep
from explorer.records.wander import Crystal
from explorer.store import consolidation as consolidation_store

from .conftest import SAMPLE_LOG


def test_the_sample_log_is_read_in_the_spec_shape() -> None:
    log = read_log(SAMPLE_LOG.read_text(encoding="utf-8"), "sample")
    assert not log.errors and len(log.experiences) == 15
    first = log.experiences[0]
    assert (first.kind, first.outcome, first.strategy, first.confidence) == ("move", "success", "naked single", 0.95)
    assert first.duration_s == 2.1 and first.session_id == "puzzle-12" and first.metadata == {"difficulty": "easy"}
    (insight,) = [e for e in log.experiences if e.kind == "insight"]
    assert insight.breakthrough and insight.outcome == "success" and insight.impact == "high"
    assert insight.trigger == "three easy puzzles solved without a guess"


def test_a_bad_line_is_reported_by_number_and_the_rest_kept() -> None:
    lines = [
        json.dumps({"kind": "move", "description": "placed a seven", "outcome": "success"}),
        "{oops",
        json.dumps(["not", "an", "object"]),
        json.dumps({"kind": "move", "description": "no outcome"}),
        json.dumps({"kind": "insight", "description": "no insight type"}),
        json.dumps({"kind": "leap", "description": "unknown kind", "outcome": "success"}),
        json.dumps({"kind": "move", "description": "too sure", "outcome": "success", "confidence": 3}),
        "",
        json.dumps({"kind": "strategy", "text": "hidden single in row four", "result": "progress", "session": "p9"}),
    ]
    log = read_log("\n".join(lines), "log")
    assert [e.description for e in log.experiences] == ["placed a seven", "hidden single in row four"]
    assert log.experiences[0].session_id == "log" and log.experiences[1].session_id == "p9"
    reasons = dict(log.errors)
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7]
    assert reasons[2].startswith("malformed JSON")
    assert reasons[3] == "a line must be a JSON object"
    assert reasons[4] == "a move needs an outcome (success, failure or progress)"
    assert "insight_type" in reasons[5]
    assert reasons[6].startswith("kind:") and reasons[7].startswith("confidence:")


def test_the_same_line_gives_the_same_experience_id() -> None:
    text = SAMPLE_LOG.read_text(encoding="utf-8")
    assert [e.id for e in read_log(text, "a").experiences] == [e.id for e in read_log(text, "a").experiences]


def test_importing_twice_adds_nothing_the_second_time(runtime) -> None:
    first = import_log(runtime, SAMPLE_LOG)
    again = import_log(runtime, SAMPLE_LOG)
    assert (first.experiences_added, first.experiences_known) == (15, 0)
    assert (again.experiences_added, again.experiences_known) == (0, 15)
    with runtime.db.connect() as con:
        assert consolidation_store.count_experiences(con, ["imported"]) == 15


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b"   \n\n", "empty file"),
        (b"\x00\x01binary", "binary file"),
        (b"\xff\xfe\xfa", "not UTF-8"),
    ],
)
def test_an_empty_or_binary_file_is_refused_clearly(runtime, tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(content)
    with pytest.raises(ConsolidationError, match=message):
        import_log(runtime, path)


def test_a_missing_file_is_refused_clearly(runtime, tmp_path: Path) -> None:
    with pytest.raises(ConsolidationError, match="No such file"):
        import_log(runtime, tmp_path / "nowhere.jsonl")


def test_wander_steps_and_crystals_become_moves_and_breakthroughs() -> None:
    start = datetime(2026, 1, 4, tzinfo=UTC)
    steps = [
        WanderStep("t1", "w1", 1, "unicode", "semantic", 0, "text is unicode", None, None, 0.8, ("text",), start),
        WanderStep(
            "t2",
            "w1",
            2,
            "bytes",
            "analogy",
            0,
            "bytes encode text",
            None,
            None,
            0.4,
            (),
            start + timedelta(seconds=30),
        ),
        WanderStep("t3", "w1", 3, "codecs", "semantic", 1, None, None, None, None, (), start + timedelta(seconds=90)),
    ]
    crystal = Crystal(
        insight="Text and bytes differ.",
        embedding=None,
        confidence=0.9,
        actionability=0.5,
        domains=["python"],
        session_id="w1",
    )
    found = from_wander(steps, [crystal])
    assert [e.outcome for e in found[:3]] == ["success", "progress", "failure"]
    assert [e.duration_s for e in found[:3]] == [None, 30.0, 60.0]
    assert found[0].description == "unicode: text is unicode" and found[0].strategy == "semantic"
    assert found[3].breakthrough and found[3].impact == "high" and found[3].session_id == "w1"
    assert [e.id for e in from_wander(steps, [crystal])] == [e.id for e in found]  # captured again: same ids


def test_dreams_and_verdicts_become_insights_and_moves() -> None:
    night = datetime(2026, 1, 4, 3, tzinfo=UTC)
    dream = Node(type="rem_dream", text="Sleep links distant memories.", created_at=night)
    kept = Verdict("a", "b", 4, 4, 4, True, "a real link", connection="both are about memory", created_at=night)
    refused = Verdict("a", "c", 1, 1, 1, False, "forced", created_at=night)
    found = from_dreams([dream], [kept, refused])
    assert [(e.kind, e.outcome) for e in found] == [("insight", "success"), ("move", "success"), ("move", "failure")]
    assert found[1].description == "both are about memory" and found[2].description == "forced"
    assert {e.session_id for e in found} == {"night of 2026-01-04"}
