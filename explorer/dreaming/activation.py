"""Spreading activation over the relation graph.

Synchronous (double-buffered) propagation from one seed: at every step each
node above ``activation_threshold`` keeps ``1 - decay`` of its activation and
passes ``decay × edge weight`` to each neighbour (capped at 1). Activation is not
divided by a node's degree: with REM exploration's thresholds (0.005 to spread, 0.02 to
count) a fan-out division starved every seed of more than a few relations, so
exploration on a real corpus found nothing two hops out. Edge weights depend
on the relation type and the direction of travel, times the relation's
confidence. Multiplicative Gaussian noise on the final scores is what makes
REM exploration wander; with ``noise_sigma = 0`` the result is deterministic,
otherwise it is reproducible from the generator passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.dreaming.graph import GetRelations, other_end
from explorer.records import Relation

# (forward, reverse): forward is travelling from the relation's source to its target.
# UPDATES links two versions (both matter); an extension says more than its base;
# the sources of a derivation say more than the derivation; a note and the subject it names
# bear on each other both ways.
EDGE_WEIGHTS: dict[str, tuple[float, float]] = {
    "UPDATES": (0.9, 0.9),
    "EXTENDS": (0.7, 0.5),
    "DERIVES": (0.4, 0.6),
    "MENTIONS": (0.8, 0.8),
    "LINKS": (0.8, 0.8),  # a [[wikilink]]: the note and the one it links bear on each other, as a mention does
}


@dataclass(frozen=True)
class ActivationConfig:
    """How far and how noisily activation spreads from a seed memory; REM exploration sets its own values."""

    max_steps: int = 3
    decay: float = 0.5
    activation_threshold: float = 0.01
    noise_sigma: float = 0.2
    result_threshold: float = 0.05
    max_results: int | None = 10  # None: every node above the result threshold


DEFAULT_ACTIVATION = ActivationConfig()


def edge_weight(relation: Relation, from_id: str) -> float:
    """Directional weight of travelling along ``relation`` from ``from_id``, times its confidence."""
    forward, reverse = EDGE_WEIGHTS[relation.type]
    return (forward if relation.source_id == from_id else reverse) * relation.confidence


def gaussian_noise(sigma: float, size: int, rng: np.random.Generator | None) -> np.ndarray:
    """``size`` draws of N(0, sigma); zeros when sigma is 0 (no generator needed then)."""
    if sigma <= 0 or size == 0:
        return np.zeros(size)
    if rng is None:
        raise ValueError("noise needs a seeded generator (np.random.default_rng(seed))")
    return rng.normal(0.0, sigma, size)


def spread_activation(
    seed_id: str,
    get_relations: GetRelations,
    config: ActivationConfig = DEFAULT_ACTIVATION,
    rng: np.random.Generator | None = None,
) -> dict[str, float]:
    """Activation score of every node reached from ``seed_id`` (the seed itself left out), best first."""
    retention = 1.0 - config.decay
    current: dict[str, float] = {seed_id: 1.0}
    for _ in range(config.max_steps):
        following: dict[str, float] = {}
        for node_id, activation in current.items():
            if activation < config.activation_threshold:
                continue
            following[node_id] = min(1.0, following.get(node_id, 0.0) + activation * retention)
            for relation in get_relations(node_id):
                neighbour = other_end(relation, node_id)
                spread = activation * edge_weight(relation, node_id) * config.decay
                following[neighbour] = min(1.0, following.get(neighbour, 0.0) + spread)
        current = following
    current.pop(seed_id, None)
    # Sorted before noise so the draws fall on the same nodes run after run.
    ids = sorted(current, key=lambda i: (-current[i], i))
    scores = np.array([current[i] for i in ids], dtype=float)
    scores = np.clip(scores * (1.0 + gaussian_noise(config.noise_sigma, len(ids), rng)), 0.0, 1.0)
    kept = [(i, float(s)) for i, s in zip(ids, scores, strict=True) if s >= config.result_threshold]
    kept.sort(key=lambda item: (-item[1], item[0]))
    return dict(kept if config.max_results is None else kept[: config.max_results])
