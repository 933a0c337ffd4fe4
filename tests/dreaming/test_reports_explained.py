"""A run that did less than it could says why, in plain words, from its report alone."""

from __future__ import annotations

from explorer.records.dreaming import CycleReport, ExplorationReport, FusionReport, RemReport


def test_a_rem_cycle_says_what_became_of_the_dreams_it_did_not_store() -> None:
    assert RemReport(dreams_requested=3, dreams_stored=3).explain() == []
    (said,) = RemReport(dreams_requested=10, dreams_stored=1, dreams_dropped=7, duplicates=6, failures=1).explain()
    assert said.startswith("The REM cycle stored 1 of 10 dreams asked: 6 dreams repeated what the knowledge base")
    assert "1 dream added nothing to its sources" in said and "the model failed on 1 item" in said
    assert "no further set of distant memories was found for 1 dream" in said


def test_exploration_and_fusion_with_nothing_fading_say_so() -> None:
    night = CycleReport(ExplorationReport(), FusionReport(), RemReport(dreams_requested=2, dreams_stored=2))
    assert [s.split(":")[0] for s in night.explain()] == ["Exploration found no link", "Fusion merged nothing"]
    assert "no memory is fading yet" in night.explain()[0]
    judged = ExplorationReport(eligible_memories=9, candidates_judged=4, budget_exhausted=True).explain()
    assert judged == [
        "Exploration found 0 links: the judge kept none of the 4 candidates it weighed; "
        "the budget ran out before the rest could be asked."
    ]
