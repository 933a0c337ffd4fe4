"""The whole run as a pure function: every phase in order, and the degradation when a phase fails
(docs/consolidation.md#the-run-and-its-degradation).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.consolidation import pipeline
from explorer.consolidation.pipeline import ConsolidationFailed, DegradationConfig, consolidate

from .conftest import grouped


def test_a_run_consolidates_experiences_into_a_verified_ladder(runtime, embedder) -> None:
    experiences = grouped(4, 4)
    run = consolidate(experiences, embedder, runtime.gateway)
    assert run.experiences == 16 and len(run.triaged) == 16
    assert run.extracted == 4 and run.compression_ratio == 4.0
    assert run.ladder.depth == 4 and run.verification is not None
    assert run.verification.status == "verified" and run.verification.score >= 0.8
    assert all(p.status == "verified" and p.utility > 0.2 for p in run.patterns)
    assert not run.degraded and not run.failures
    assert any("below the target" in w for w in run.warnings)  # 4:1 is off the 10:1 target: said, not fatal
    assert set(run.seconds) == set(pipeline.PHASES)


def test_no_experiences_is_a_warning_not_a_failure(runtime, embedder) -> None:
    run = consolidate([], embedder, runtime.gateway)
    assert run.warnings == ["no experiences: nothing to consolidate"] and run.verification is None


def broken(*args, **kwargs):
    raise RuntimeError("the phase broke")


def test_failed_triage_keeps_every_experience_after_its_retries(runtime, embedder, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "triage", broken)
    waits: list[float] = []
    run = consolidate(grouped(3, 4), embedder, runtime.gateway, sleep=waits.append)
    assert waits == [5.0, 5.0, 5.0]  # three retries, 5 s apart
    assert run.degraded == ["skip-filtering"] and len(run.triaged) == 12
    assert "triage failed after 4 attempts: RuntimeError: the phase broke" in run.errors[0]
    assert run.patterns and run.verification is not None  # the run went on without filtering


def test_failed_compression_keeps_the_experiences_as_they_are(runtime, embedder, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "compress", broken)
    run = consolidate(grouped(3, 4), embedder, runtime.gateway, sleep=lambda s: None)
    assert run.degraded == ["use-raw"] and not run.patterns and run.ladder.depth == 0
    assert len(run.triaged) == 12 and run.verification is None


def test_failed_abstraction_leaves_the_minimal_ladder(runtime, embedder, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "build_ladder", broken)
    run = consolidate(grouped(3, 4), embedder, runtime.gateway, sleep=lambda s: None)
    assert run.degraded == ["minimal-ladder"] and run.ladder.depth == 2
    assert run.verification is not None and run.verification.checks[0].passed


def test_failed_verification_stores_unverified_patterns_with_a_warning(runtime, embedder, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "verify", broken)
    run = consolidate(grouped(3, 4), embedder, runtime.gateway, sleep=lambda s: None)
    assert run.degraded == ["warn-and-store"] and run.verification is None
    assert run.patterns and all(p.status == "unverified" for p in run.patterns)
    assert "verification failed: warn-and-store" in run.warnings


def test_a_failed_phase_with_abort_ends_the_run(runtime, embedder, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "compress", broken)
    config = replace(pipeline.DEFAULT_CONSOLIDATION, degradation=DegradationConfig(on_compression_fail="abort"))
    with pytest.raises(ConsolidationFailed, match="compression failed"):
        consolidate(grouped(3, 4), embedder, runtime.gateway, config, sleep=lambda s: None)
