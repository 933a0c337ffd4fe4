"""The Consolidation page: the newest run's numbers as stored, its ladder opening level by level down to the
experiences, its patterns with their examples, the five checks, the clusters on the map, a run from the page,
and what it says before anything was consolidated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.consolidation.service import import_log, run_consolidation
from explorer.runtime import Runtime
from explorer.views import latest_consolidation

NOTHING_YET = "Nothing consolidated yet. Consolidation turns experiences into a few verified patterns"
SAMPLE_LOG = Path(__file__).resolve().parents[1] / "data" / "experiences_sample.jsonl"


@pytest.fixture
def consolidated(app_runtime: Runtime) -> dict:
    """The sample experience log imported into the app's database and consolidated offline; the run's report."""
    import_log(app_runtime, SAMPLE_LOG)
    return run_consolidation(app_runtime, "imported").to_json()


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_before_any_run_the_page_says_what_to_do(open_app, page_text) -> None:
    at = open_app("consolidation")
    assert NOTHING_YET in page_text(at)
    assert not at.tabs and not at.metric and at.button  # the form's button is there to run one


def test_an_empty_database_shows_the_same_hint(open_app, page_text, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_DB", str(tmp_path / "empty.duckdb"))
    at = open_app("consolidation")
    assert NOTHING_YET in page_text(at) and not at.get("plotly_chart")


def test_the_summary_is_the_stored_report(open_app, consolidated, page_text) -> None:
    at = open_app("consolidation")
    shown = metrics(at)
    check = consolidated["verification"]
    assert shown == {
        "experiences": str(consolidated["experiences"]),
        "kept by triage": str(consolidated["triaged"]),
        "patterns": str(len(consolidated["patterns"])),
        "compression": f"{consolidated['compression_ratio']:g}:1",
        "ladder levels": str(consolidated["ladder_levels"]),
        "connections": str(consolidated["connections"]),
        "pruned as redundant": str(consolidated["pruned_redundant"]),
        "pruned for low utility": str(consolidated["pruned_low_utility"]),
        "verification": check["status"],
        "verification score": f"{check['score']:.2f}",
    }
    assert f"pattern quality {consolidated['pattern_quality']:.2f} (aim 0.70)" in page_text(at)
    assert all(warning in page_text(at) for warning in consolidated["warnings"])
    assert [t.label for t in at.tabs] == ["Ladder", "Patterns", "Verification", "Cluster map"]


def test_the_ladder_opens_level_by_level_down_to_the_experiences(open_app, app_runtime, consolidated, shown) -> None:
    view = latest_consolidation(app_runtime)
    assert view is not None and len(view.ladder) == consolidated["ladder_levels"] == 4
    at = open_app("consolidation")
    ladder = at.tabs[0]
    tops = [e for e in ladder.expander if e.label.startswith("General principle:")]
    assert len(tops) == len(view.ladder[-1])
    # every item above the instances is one expander, nested under what subsumes it
    labels = [shown(e.label) for e in ladder.expander]
    assert len(labels) == sum(len(level) for level in view.ladder[1:])
    top = view.ladder[-1][0]
    opened = tops[0]
    categories = [e for e in opened.expander if e.label.startswith("Strategy category:")]
    assert [shown(c.label.replace("**", "")).split(" · ")[0] for c in categories] == [
        f"Strategy category: {i.name}" for i in view.below(top)
    ]
    techniques = [e for e in categories[0].expander if e.label.startswith("Technique:")]
    assert len(techniques) == len(view.below(view.below(top)[0]))
    pattern = view.below(view.below(top)[0])[0]
    instances = [t.value for t in techniques[0].text]
    assert instances[1:] == [view.experiences[i.id].text for i in view.below(pattern)]  # first: the statement
    assert instances[0] == pattern.statement


def test_each_pattern_shows_its_conditions_actions_and_example_experiences(open_app, app_runtime, consolidated) -> None:
    view = latest_consolidation(app_runtime)
    assert view is not None
    at = open_app("consolidation")
    cards = at.tabs[1].expander
    assert len(cards) == len(consolidated["patterns"])
    pattern = view.patterns[0]
    texts = [t.value for t in cards[0].text]
    assert pattern.description in texts
    assert "\n".join(f"• {c}" for c in pattern.conditions) in texts
    assert "\n".join(f"• {a}" for a in pattern.actions) in texts
    examples = [e.text for e in view.examples(pattern)]
    assert len(examples) >= 3 and all(example in texts for example in examples)


def test_the_verification_report_lists_the_five_checks(open_app, consolidated) -> None:
    at = open_app("consolidation")
    (table,) = at.tabs[2].dataframe
    checks = consolidated["verification"]["checks"]
    assert len(checks) == 5
    assert table.value["check"].tolist() == [c["name"] for c in checks]
    assert table.value["score"].tolist() == [round(c["score"], 3) for c in checks]
    assert table.value["message"].tolist() == [c["message"] for c in checks]
    assert table.value["passed"].tolist() == [c["passed"] for c in checks]


def test_the_cluster_map_outlines_each_pattern_and_switches_off(open_app, consolidated) -> None:
    at = open_app("consolidation")
    (chart,) = at.get("plotly_chart")
    names = [t.get("name") for t in json.loads(chart.proto.spec)["data"]]
    assert consolidated["patterns"]  # else the loop below checks nothing
    for pattern in consolidated["patterns"]:
        assert f"members: {pattern['name']}" in names
    assert sum(n.startswith("pattern: ") for n in names if n) >= 1
    at.pills(key="consolidation_layers").set_value(["corpus"]).run()
    (chart,) = at.get("plotly_chart")
    names = [t.get("name") or "" for t in json.loads(chart.proto.spec)["data"]]
    assert not any(n.startswith(("members: ", "pattern: ")) or n == "pattern cluster" for n in names)


def test_consolidating_from_the_page_runs_the_engine_and_shows_the_run(
    open_app, app_runtime, page_text, after_jobs
) -> None:
    import_log(app_runtime, SAMPLE_LOG)
    at = open_app("consolidation")
    at.radio(key="consolidation_source").set_value("imported")
    at.form_submit_button[0].click().run()
    after_jobs(at)  # consolidating is a background job, which the page follows
    assert not at.exception, [e.value for e in at.exception]
    view = latest_consolidation(app_runtime)
    assert view is not None and view.report["source"] == "imported"
    assert metrics(at)["patterns"] == str(len(view.patterns))
    assert metrics(at)["experiences"] == str(view.report["experiences"]) == "15"


def test_consolidating_a_source_without_experiences_says_so(open_app, page_text, after_jobs) -> None:
    at = open_app("consolidation")
    at.radio(key="consolidation_source").set_value("dreams")
    at.form_submit_button[0].click().run()
    after_jobs(at)
    assert not at.exception, [e.value for e in at.exception]
    assert "Nothing to consolidate from dreams: no experiences yet" in page_text(at)
    assert NOTHING_YET in page_text(at)
