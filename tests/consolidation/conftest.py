"""Helpers for the consolidation tests: experiences built field by field, groups of alike experiences (each group
its own words, so the hashing embedder puts a group together and the groups apart), and the sample log.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np

from explorer.consolidation.triage import Scored
from explorer.providers.embeddings import Embedder
from explorer.records.consolidation import Experience

SAMPLE_LOG = Path(__file__).resolve().parents[1] / "data" / "experiences_sample.jsonl"

GROUP_WORDS = {
    "naked single": ["cell", "candidate", "left", "digit", "placed", "row", "column", "only"],
    "hidden single": ["square", "unit", "position", "digit", "hidden", "fits", "box", "nowhere"],
    "pointing pair": ["pair", "box", "line", "confined", "eliminate", "outside", "candidates", "intersection"],
    "backtracking": ["guess", "undone", "contradiction", "empty", "revert", "evidence", "wrong", "branch"],
    "x-wing": ["wing", "rectangle", "rows", "columns", "corners", "fish", "cover", "base"],
}


def experience(description: str = "an experience", **fields: Any) -> Experience:
    """An experience for the pure functions: a successful move unless the fields say otherwise."""
    return Experience(
        kind=fields.pop("kind", "move"),
        description=description,
        outcome=fields.pop("outcome", "success"),
        session_id=fields.pop("session_id", "s1"),
        **fields,
    )


def grouped(groups: int, per_group: int, seed: int = 0, **fields: Any) -> list[Experience]:
    """``per_group`` experiences of each of the first ``groups`` strategies, each a different draw of its
    group's words (alike, never near-duplicates), interleaved as a session would have them.
    """
    rng = random.Random(seed)
    names = list(GROUP_WORDS)[:groups]
    found = []
    for index in range(per_group):
        for name in names:
            words = rng.sample(GROUP_WORDS[name], 5)
            found.append(experience(f"{' '.join(words)} step{index}{name[:3]}", strategy=name, **fields))
    return found


def scored(experiences: list[Experience], importance: float = 0.5) -> list[Scored]:
    """Experiences as triage would pass them on, one a row."""
    return [Scored(e, importance, row, (e.id,)) for row, e in enumerate(experiences)]


def vectors(embedder: Embedder, experiences: list[Experience]) -> np.ndarray:
    return embedder.embed([e.text for e in experiences])
