"""Exploration's candidate pool on a small knowledge base: a judge is shown the pairs that stand out in it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from explorer.affinity import Affinity, Evidence
from explorer.dreaming.exploration import DEFAULT_EXPLORATION, ExplorationConfig, candidate_bar
from explorer.dreaming.service import recent_verdicts, run_exploration
from explorer.reading.ingest import ingest_paths

FOLDOC = Path(__file__).parents[1] / "data" / "foldoc_sample.jsonl"


def test_a_small_base_keeps_a_share_of_what_its_judge_is_shown(runtime) -> None:
    """42 entries over 19 domains: eight candidates a seed reached down to pairs weaker than half the base's, and
    the judge kept 3 of 192 over four nights; shown the pairs of the base's top 2% (a seed with none, its best
    bridge alone), it keeps 3 of 24.
    """
    ingest_paths(runtime, [FOLDOC])
    as_of = datetime.now(UTC) + timedelta(days=45)
    nights = [run_exploration(runtime, seed=seed, as_of=as_of) for seed in range(4)]
    judged, kept = sum(n.candidates_judged for n in nights), sum(n.candidates_kept for n in nights)
    assert judged > 0 and kept / judged >= 0.1
    shown = [Evidence.read(view.verdict.evidence or "") for view in recent_verdicts(runtime, limit=500)]
    standing_out = [e for e in shown if e is not None and e.percentile >= DEFAULT_EXPLORATION.candidate_percentile]
    assert len(standing_out) >= 3  # the rest: a seed's best bridge, shown alone as none stands out


def base_of(size: int) -> Affinity:
    vectors = np.random.default_rng(0).normal(size=(size, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return Affinity([f"m{i}" for i in range(size)], [f"note {i}" for i in range(size)], vectors)


def test_a_base_too_small_for_its_top_share_to_fill_a_pool_shows_its_strongest_pairs() -> None:
    config = ExplorationConfig(candidate_percentile=98.0, max_candidates_per_seed=8)
    assert candidate_bar(base_of(60), config) == 98.0  # 1,770 pairs: their top 2% is 35
    assert candidate_bar(base_of(20), config) == round(100 * (1 - 8 / 190), 2)  # the 8 strongest of 190
    assert candidate_bar(base_of(4), config) == 0.0  # 6 pairs: every one may be put before a judge
