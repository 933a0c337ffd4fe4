"""Phase 2, triage: keep the experiences worth consolidating (docs/consolidation.md#phase-2-triage).

Importance = 0.4 outcome + 0.3 novelty + 0.2 error + 0.1 efficiency, each in [0, 1]:

- outcome: a success 1, progress 0.5, a failure 0; an insight's stated impact (high 1, medium 0.6, low 0.3)
  stands in for it when given;
- novelty: 1 minus the closest similarity to any earlier experience, so the first of its kind scores high and
  its repetitions low;
- error: 1 for a failure (a chance to learn);
- efficiency: ``m / (m + d)`` for a duration ``d`` against the median ``m`` (0.5 at the median, toward 1 when
  quicker); 0.5 when there is no duration to compare.

A routine success scores at least 0.4, a repeated, slow progress move or failure as little as 0.2: the
threshold (0.3) really drops routine, repetitive work. Every breakthrough is kept whatever its score. Then
near-duplicates (similarity above 0.8) are reduced to the most important one, which counts the others in its
``represents``, and each session keeps at most its 100 most important.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median

import numpy as np

from explorer.records.consolidation import Experience

OUTCOME_SCORE = {"success": 1.0, "progress": 0.5, "failure": 0.0}
IMPACT_SCORE = {"high": 1.0, "medium": 0.6, "low": 0.3}
WEIGHTS = {"outcome": 0.4, "novelty": 0.3, "error": 0.2, "efficiency": 0.1}


@dataclass(frozen=True)
class TriageConfig:
    """Triage's defaults."""

    min_importance: float = 0.3
    include_successful: bool = True
    include_errors: bool = True  # learn from mistakes
    include_breakthroughs: bool = True  # always kept
    similarity_threshold: float = 0.8  # above it, two experiences are one
    max_per_session: int = 100


DEFAULT_TRIAGE = TriageConfig()


@dataclass(frozen=True)
class Scored:
    """A kept experience, its importance, its row in the embedding matrix, and the ids of the near-duplicates
    it stands for (itself included).
    """

    experience: Experience
    importance: float
    row: int
    represents: tuple[str, ...]


@dataclass
class TriageResult:
    """What triage kept, in input order, and how many it dropped for each reason."""

    kept: list[Scored] = field(default_factory=list)
    low_importance: int = 0
    excluded: int = 0  # successes or errors left out by the configuration
    duplicates: int = 0
    over_cap: int = 0


NOVELTY_BLOCK = 1024  # rows compared at once: 10k experiences take 40 MB of similarities, not 400


def novelty(vectors: np.ndarray) -> np.ndarray:
    """Each row's 1 minus its closest similarity to an earlier row (the first row: 1)."""
    closest = np.zeros(len(vectors), dtype=np.float32)
    for start in range(0, len(vectors), NOVELTY_BLOCK):
        rows = vectors[start : start + NOVELTY_BLOCK]
        sims = rows @ vectors[: start + len(rows)].T
        earlier = np.arange(start + len(rows))[None, :] < np.arange(start, start + len(rows))[:, None]
        best = np.where(earlier, sims, -np.inf).max(axis=1)
        closest[start : start + len(rows)] = np.where(np.isfinite(best), best, 0.0)
    return np.clip(1.0 - closest, 0.0, 1.0)


def efficiency(experience: Experience, typical: float | None) -> float:
    """How quick it was against the typical duration: 0.5 at it, toward 1 when quicker, 0.5 unknown."""
    if typical is None or experience.duration_s is None:
        return 0.5
    return typical / (typical + experience.duration_s)


def importance(experiences: Sequence[Experience], vectors: np.ndarray) -> list[float]:
    """Each experience's importance, in triage's weights (the module's docstring says how each part scores)."""
    durations = [e.duration_s for e in experiences if e.duration_s is not None and e.duration_s > 0]
    typical = median(durations) if durations else None
    new = novelty(vectors)
    scores = []
    for index, experience in enumerate(experiences):
        outcome = IMPACT_SCORE[experience.impact] if experience.impact else OUTCOME_SCORE[experience.outcome]
        value = (
            WEIGHTS["outcome"] * outcome
            + WEIGHTS["novelty"] * float(new[index])
            + WEIGHTS["error"] * (experience.outcome == "failure")
            + WEIGHTS["efficiency"] * efficiency(experience, typical)
        )
        scores.append(round(value, 6))
    return scores


def _included(experience: Experience, config: TriageConfig) -> bool:
    if experience.outcome == "success" and not config.include_successful:
        return False
    return not (experience.outcome == "failure" and not config.include_errors)


def triage(
    experiences: Sequence[Experience], vectors: np.ndarray, config: TriageConfig = DEFAULT_TRIAGE
) -> TriageResult:
    """The significant experiences (``vectors``: their unit embeddings, row by row)."""
    result = TriageResult()
    scores = importance(experiences, vectors)
    protected = {row for row, e in enumerate(experiences) if config.include_breakthroughs and e.breakthrough}
    candidates = []
    for row, experience in enumerate(experiences):
        if row not in protected and not _included(experience, config):
            result.excluded += 1
        elif row not in protected and scores[row] < config.min_importance:
            result.low_importance += 1
        else:
            candidates.append(row)
    # Most important first (breakthroughs before all), so a representative is the best of its near-duplicates.
    candidates.sort(key=lambda r: (r not in protected, -scores[r], r))
    chosen: list[int] = []
    kept_vectors = np.zeros((len(candidates), vectors.shape[1] if vectors.ndim == 2 else 0), dtype=np.float32)
    stands_for: dict[int, list[str]] = {}
    for row in candidates:
        alike = np.flatnonzero(kept_vectors[: len(chosen)] @ vectors[row] > config.similarity_threshold)
        if len(alike) and row not in protected:
            stands_for[chosen[int(alike[0])]].append(experiences[row].id)
            result.duplicates += 1
            continue
        kept_vectors[len(chosen)] = vectors[row]
        chosen.append(row)
        stands_for[row] = [experiences[row].id]
    per_session: dict[str, int] = {}
    for row in chosen:  # already most important first
        session = experiences[row].session_id
        if per_session.get(session, 0) >= config.max_per_session and row not in protected:
            result.over_cap += 1
            continue
        per_session[session] = per_session.get(session, 0) + 1
        result.kept.append(Scored(experiences[row], scores[row], row, tuple(stands_for[row])))
    result.kept.sort(key=lambda s: s.row)
    return result
