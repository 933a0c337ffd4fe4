"""The consolidation run (docs/consolidation.md#the-run-and-its-degradation): triage, compression, the
abstraction ladder, integration and verification, in order, as one pure function of the experiences and the providers.

Graceful degradation: a phase that raises is tried again ``max_retries`` times
``retry_delay_s`` apart; then, unless its policy is ``abort``: failed triage keeps every experience
(skip-filtering), failed compression keeps the experiences as they are with no pattern (use-raw), a failed
ladder is the minimal one of instances and techniques (minimal-ladder), failed integration keeps the ladder
unpruned, and a failed verification leaves the patterns unverified with its warnings (warn-and-store). A model
answer that fails is not a phase failure: it fails its own item (a cluster, a group, a pair) and the run goes on.

No experiences: nothing to consolidate, and the result says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, TypeVar

import numpy as np

from explorer.consolidation.asking import Tally
from explorer.consolidation.compression import DEFAULT_COMPRESSION, CompressionConfig, compress, ratio_warning
from explorer.consolidation.integration import DEFAULT_INTEGRATION, IntegrationConfig, integrate, utility
from explorer.consolidation.ladder import DEFAULT_LADDER, Ladder, LadderConfig, base_ladder, build_ladder
from explorer.consolidation.triage import DEFAULT_TRIAGE, Scored, TriageConfig, TriageResult, triage
from explorer.consolidation.verification import DEFAULT_VERIFICATION, VerificationConfig, verify
from explorer.errors import ExplorerError
from explorer.providers.budget import Budget
from explorer.providers.embeddings import Embedder
from explorer.providers.gateway import Gateway
from explorer.records import Progress
from explorer.records.consolidation import Experience, LadderLink, Pattern, Verification

T = TypeVar("T")
PHASES = ("triage", "compression", "abstraction", "integration", "verification")


class ConsolidationFailed(ExplorerError):
    """A phase failed every attempt and its policy is to abort: nothing of the run is kept."""


@dataclass(frozen=True)
class DegradationConfig:
    """What to do when a phase fails every attempt, and how often to try."""

    on_triage_fail: Literal["skip-filtering", "abort"] = "skip-filtering"
    on_compression_fail: Literal["use-raw", "abort"] = "use-raw"
    on_abstraction_fail: Literal["minimal-ladder", "abort"] = "minimal-ladder"
    on_integration_fail: Literal["keep-unpruned", "abort"] = "keep-unpruned"
    on_verification_fail: Literal["warn-and-store", "abort"] = "warn-and-store"
    max_retries: int = 3
    retry_delay_s: float = 5.0


@dataclass(frozen=True)
class ConsolidationConfig:
    """Every phase's configuration, each with its defaults."""

    triage: TriageConfig = DEFAULT_TRIAGE
    compression: CompressionConfig = DEFAULT_COMPRESSION
    ladder: LadderConfig = DEFAULT_LADDER
    integration: IntegrationConfig = DEFAULT_INTEGRATION
    verification: VerificationConfig = DEFAULT_VERIFICATION
    degradation: DegradationConfig = field(default_factory=DegradationConfig)


DEFAULT_CONSOLIDATION = ConsolidationConfig()


@dataclass
class Consolidation(Tally):
    """What a run made from its experiences, with what was degraded, warned, failed and spent."""

    experiences: int = 0
    triaged: list[Scored] = field(default_factory=list)
    triage: TriageResult | None = None
    clustering: str = "none"
    clusters: int = 0
    noise: int = 0
    extracted: int = 0  # patterns compression made, before integration pruned any
    patterns: list[Pattern] = field(default_factory=list)
    ladder: Ladder = field(default_factory=Ladder)
    connections: list[LadderLink] = field(default_factory=list)
    pruned_redundant: int = 0
    pruned_low_utility: int = 0
    verification: Verification | None = None
    degraded: list[str] = field(default_factory=list)  # the policies applied: skip-filtering, use-raw, ...
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # each phase's wall time, model calls included

    @property
    def compression_ratio(self) -> float | None:
        """Experiences in per pattern out (the compression ratio), ``None`` when there is no pattern."""
        return round(self.experiences / self.extracted, 2) if self.extracted else None


def attempt(
    phase: str, work: Callable[[], T], config: DegradationConfig, run: Consolidation, sleep: Callable[[float], None]
) -> T | None:
    """``work()``, tried ``1 + max_retries`` times; ``None`` (the phase's policy noted as applied) when every
    try raised, or :class:`ConsolidationFailed` when the policy is ``abort``.
    """
    policy = getattr(config, f"on_{phase}_fail")
    started = time.perf_counter()
    problem: Exception | None = None
    try:
        for number in range(config.max_retries + 1):
            if number:
                sleep(config.retry_delay_s)
            try:
                return work()
            except Exception as exc:  # a phase's failure is the run's to degrade, whatever it was
                problem = exc
    finally:
        run.seconds[phase] = round(run.seconds.get(phase, 0.0) + time.perf_counter() - started, 4)
    message = f"{phase} failed after {config.max_retries + 1} attempts: {type(problem).__name__}: {problem}"
    if policy == "abort":
        raise ConsolidationFailed(message)
    run.errors.append(message)
    run.degraded.append(policy)
    run.warnings.append(f"{phase} failed: {policy}")
    return None


def _embedded(patterns: Sequence[Pattern], embedder: Embedder) -> list[Pattern]:
    if not patterns:
        return []
    vectors = embedder.embed([p.text for p in patterns])
    return [replace(p, embedding=vectors[k], utility=utility(p)) for k, p in enumerate(patterns)]


def invalidate_contradicted(patterns: list[Pattern], contradictions: Sequence[tuple[str, str]]) -> list[Pattern]:
    """Of two patterns that call for conflicting actions in like conditions, the one of lower utility is
    ``invalidated``: kept, with its evidence, for a person to read, but never offered as know-how (contradictions are
    flagged, and the aim is a contradiction rate under 5%; leaving both valid would answer a query both ways).
    """
    by_id = {p.id: p for p in patterns}
    losers = {
        min((by_id[a], by_id[b]), key=lambda p: (p.utility, p.id)).id
        for a, b in contradictions
        if a in by_id and b in by_id
    }
    return [replace(p, status="invalidated") if p.id in losers else p for p in patterns]


def consolidate(
    experiences: Sequence[Experience],
    embedder: Embedder,
    gateway: Gateway,
    config: ConsolidationConfig = DEFAULT_CONSOLIDATION,
    budget: Budget | None = None,
    progress: Progress | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Consolidation:
    """Consolidate ``experiences`` into verified patterns and a ladder (see the module's docstring)."""
    run = Consolidation(experiences=len(experiences))
    policies = config.degradation
    if not experiences:
        run.warnings.append("no experiences: nothing to consolidate")
        return run

    def phase(name: str, work: Callable[[], T]) -> T | None:
        if progress:
            progress(PHASES.index(name), len(PHASES), name)
        return attempt(name, work, policies, run, sleep)

    def done() -> Consolidation:
        if progress:
            progress(len(PHASES), len(PHASES), "done")
        return run

    vectors = embedder.embed([e.text for e in experiences])
    triaged = phase("triage", lambda: triage(experiences, vectors, config.triage))
    run.triage = triaged
    run.triaged = triaged.kept if triaged else [Scored(e, 0.0, row, (e.id,)) for row, e in enumerate(experiences)]
    kept_vectors = vectors[[s.row for s in run.triaged]] if run.triaged else np.zeros((0, vectors.shape[1]))
    compressed = phase("compression", lambda: compress(run.triaged, kept_vectors, gateway, config.compression, budget))
    if compressed is not None:
        run.count(compressed)
        run.clustering, run.clusters, run.noise = compressed.method, compressed.clusters, compressed.noise
        run.patterns = _embedded(compressed.patterns, embedder)
        run.extracted = len(run.patterns)
        warning = ratio_warning(run.experiences, run.extracted, config.compression)
        if warning:
            run.warnings.append(warning)
    if not run.patterns:
        if compressed is not None:
            run.warnings.append("no pattern: the experiences are kept as they are")
        return done()
    by_id = {s.experience.id: s.experience for s in run.triaged}
    built = phase("abstraction", lambda: build_ladder(run.patterns, by_id, gateway, embedder, config.ladder, budget))
    if built is not None:
        run.count(built)
        run.warnings += built.warnings
        run.ladder = built.ladder
        if "minimal ladder" in " ".join(built.warnings):
            run.degraded.append("minimal-ladder")
    else:
        run.ladder = base_ladder(run.patterns, by_id)
    integrated = phase("integration", lambda: integrate(run.ladder, run.patterns, gateway, config.integration, budget))
    if integrated is not None:
        run.count(integrated)
        run.ladder, run.patterns, run.connections = integrated.ladder, integrated.patterns, integrated.connections
        run.pruned_redundant, run.pruned_low_utility = integrated.pruned_redundant, integrated.pruned_low_utility
    checked = phase(
        "verification", lambda: verify(run.ladder, run.patterns, embedder, gateway, config.verification, budget)
    )
    if checked is not None:
        run.count(checked)
        run.verification = checked.verification
        if checked.verification.status == "verified":
            run.patterns = [replace(p, status="verified") for p in run.patterns]
        elif checked.verification.status == "failed":
            if policies.on_verification_fail == "abort":
                raise ConsolidationFailed("verification failed: " + "; ".join(checked.verification.errors))
            run.degraded.append("warn-and-store")
            run.warnings += [f"verification: {e}" for e in checked.verification.errors]
        run.warnings += [f"verification: {w}" for w in checked.verification.warnings]
        run.patterns = invalidate_contradicted(run.patterns, checked.contradictions)
    return done()
