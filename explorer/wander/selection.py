"""Stages 3 and 4: score each candidate, then pick one by softmax sampling.

The composite is wander.md's: 0.3·interestingness + 0.3·novelty +
0.2·bridge potential + 0.2·uncertainty, plus the attractor's pull. Sampling is
seeded by the caller (from the session's seed and the step number), so the same
seed over the same database makes the same choice.
"""

from __future__ import annotations

import numpy as np

from explorer.records.wander import Adjacency, Session
from explorer.wander.adjacency import Surroundings
from explorer.wander.config import WanderTuning
from explorer.wander.scope import attractor_pull

UNVERIFIED_UNCERTAINTY = 0.6  # an analogy the model proposed is a guess until visited
ANALOGY_IMPORTANCE = 0.6


def band_fit(distance: float, tuning: WanderTuning) -> float:
    """1 at the middle of the distance band, falling to 0 at distance 0 (and at twice the middle)."""
    middle = (tuning.band_low + tuning.band_high) / 2
    return max(0.0, 1.0 - abs(distance - middle) / middle)


def ambiguity(similarity: float) -> float:
    """How undecided the relation to here is: 1 at cosine 0.5, 0 at 0 or 1."""
    return max(0.0, 1.0 - 2.0 * abs(similarity - 0.5))


def score(
    candidates: list[Adjacency],
    s: Surroundings,
    session: Session,
    visited_domains: set[str],
    failed_paths: np.ndarray,
    tuning: WanderTuning,
) -> None:
    """Fill in each candidate's four scores, attractor pull and composite score."""
    visited = s.loci.visited.matrix
    here_domains = {d.lower() for d in s.here.domains}
    seen_domains = {d.lower() for d in visited_domains}
    for c in candidates:
        c.novelty = float(np.clip(1.0 - float(np.max(visited @ c.embedding)), 0.0, 1.0)) if len(visited) else 1.0
        existing = s.loci.loci.get(c.locus_id) if c.locus_id else None
        row = s.corpus.row(c.node_id) if c.node_id else None
        fit = band_fit(c.distance, tuning)
        if existing is not None and existing.visit_count > 0:
            # dwelling there rated it: that rating beats any prior
            c.interestingness = existing.interestingness
            c.uncertainty = existing.uncertainty
        else:
            importance = float(s.corpus.importance[row]) if row is not None else ANALOGY_IMPORTANCE
            confidence = float(s.corpus.confidence[row]) if row is not None else 1.0 - UNVERIFIED_UNCERTAINTY
            c.interestingness = 0.6 * fit + 0.4 * importance
            c.uncertainty = 0.5 * ambiguity(c.similarity) + 0.5 * (1.0 - confidence)
        if len(failed_paths) and float(np.max(failed_paths @ c.embedding)) > 1.0 - tuning.failed_path_radius:
            c.interestingness *= tuning.failed_path_penalty
        domains = {d.lower() for d in c.domains}
        if not domains:
            c.bridge_potential = 0.3
        elif here_domains and domains & here_domains:
            c.bridge_potential = 0.2
        else:
            c.bridge_potential = 1.0 if domains - seen_domains else 0.7
        c.attractor_pull = attractor_pull(c.embedding, session)
        c.score = (
            tuning.w_interestingness * c.interestingness
            + tuning.w_novelty * c.novelty
            + tuning.w_bridge * c.bridge_potential
            + tuning.w_uncertainty * c.uncertainty
            + tuning.attractor_weight * c.attractor_pull
        )


def softmax_select(candidates: list[Adjacency], temperature: float, rng: np.random.Generator) -> int:
    """Index of the chosen candidate, drawn with probability ∝ exp(score / temperature); fills ``probability``."""
    scores = np.asarray([c.score for c in candidates], dtype=np.float64)
    weights = np.exp((scores - scores.max()) / max(temperature, 1e-6))
    probabilities = weights / weights.sum()
    for c, p in zip(candidates, probabilities, strict=True):
        c.probability = float(p)
    return int(rng.choice(len(candidates), p=probabilities))
