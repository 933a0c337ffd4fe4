"""``bench.prose`` reads every text of an answer as the engine parses it, and counts what the checker flags."""

from __future__ import annotations

import json

from bench.prose import Said, faults_of, report, texts_of
from explorer.prompts import load_prompts

FIELDS = {
    "current_concept": "Python changes over the years. Each release of Python keeps its character.",
    "current_domains": "python",
    "next_concept": "A queen lays eggs in the comb. The honey is clear.",
    "next_domains": "python",
}
DWELLING = {
    "connection": "Python and queen meet: “Python changes over the years”, and “A queen lays eggs in the comb”.",
    "tension": "They part ways where one says “Python changes over the years” and the other “The honey is clear”.",
    "bridge": "Within python, years carries over as long.",
    "surprise": "Unexpected beside Python: “The honey is clear”.",
    "possibility": "A lead to follow on queen: “A queen lays eggs in the comb”.",
    "themes": ["queen", "long", "Clear"],
    "interestingness": 0.5,
    "actionability": 0.0,
}


def test_each_field_is_checked_as_prose_or_as_a_label() -> None:
    load_prompts()
    texts = list(texts_of(Said("wander_dwell", FIELDS, json.dumps(DWELLING))))
    found = {(t.where, t.text): faults_of(t) for t in texts}
    assert found[("wander_dwell.bridge", DWELLING["bridge"])] == ["number", "case"]
    assert found[("wander_dwell.themes", "queen")] == []
    assert found[("wander_dwell.themes", "long")] and found[("wander_dwell.themes", "Clear")]
    assert found[("wander_dwell.connection", DWELLING["connection"])] == []
    assert not any(t.where.endswith(("interestingness", "domains")) for t in texts)


def test_the_report_gives_the_flagged_share_per_kind_and_counts_refusals() -> None:
    load_prompts()
    said = [Said("wander_dwell", FIELDS, json.dumps(DWELLING)), Said("wander_dwell", FIELDS, "<html>no</html>")]
    table = report({"run": said}, sample=3, seed=0)
    assert "| wander_dwell.themes | 3 | 2 (67%) |" in table
    assert "| wander_dwell | 1 | 1 (100%) | refused by its reader ×1 |" in table
    assert "A seeded sample of 3 of the" in table
