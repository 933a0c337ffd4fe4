"""A dream binds only memories that bear on each other, and is as sure of it as was measured.

Notes on bees and notes on git have no pair across the subjects above the knowledge base's relation floor, and
dreams cross categories: so there is no dream to dream between them, rather than a git note bound to two hives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.dreaming.service import recent_dreams, run_rem
from explorer.reading.ingest import ingest_paths

NOTES = Path(__file__).parents[1] / "data" / "notes"


@pytest.mark.minilm
def test_no_dream_binds_notes_of_two_unrelated_subjects(make_runtime):
    runtime = make_runtime()
    ingest_paths(runtime, [NOTES / "bees"])
    ingest_paths(runtime, [NOTES / "git"])

    report = run_rem(runtime, dreams=6, seed=0)

    bound = [{source.domain for source in view.sources} for view in recent_dreams(runtime)]
    assert [domains for domains in bound if len(domains) > 1] == []
    # none dreamt, and nothing failed: the run says there was nothing to dream over
    assert (report.dreams_stored, report.failures, report.model_calls) == (0, 0, 0)
    assert "no further set of distant memories was found for 6 dreams" in report.explain()[0]


def test_a_dream_is_as_sure_as_its_weakest_binding_never_certain(corpus_runtime):
    run_rem(corpus_runtime, dreams=4, seed=0)

    dreams = recent_dreams(corpus_runtime)
    assert dreams
    assert all(0 <= view.dream.confidence <= 0.99 for view in dreams)  # never shown as 1.00
    assert len({view.dream.confidence for view in dreams}) > 1  # measured for each, not one figure for all
