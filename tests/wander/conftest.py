"""Wander fixtures: the small corpus (the shared ``corpus_copy``) offline or with a litellm mock model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer.records.wander import Session
from explorer.runtime import Runtime
from explorer.wander import service
from explorer.wander.config import SessionConfig

SEED = "memory management, reference counting and garbage collection"

# One answer every Wander prompt parses: dwelling, analogy, crystallize and validate.
MOCK_ANSWER: dict[str, Any] = {
    "connection": "Both decide when something is no longer needed.",
    "tension": "One reclaims at once, the other waits for a cycle.",
    "bridge": "Lifetimes of objects translate into lifetimes of ideas.",
    "surprise": "Forgetting turns out to be a feature.",
    "possibility": "Treat stale knowledge like unreachable objects.",
    "themes": ["memory", "garbage collection", "object lifetimes"],
    "interestingness": 0.8,
    "actionability": 0.6,
    "analogies": [
        {
            "concept": "Forgetting as the mind's garbage collector",
            "domain": "psychology",
            "rationale": "both reclaim what is no longer reachable",
        }
    ],
    "insight": "Knowledge, like memory, needs a collector: what nothing refers to any more should be reclaimed.",
    "confidence": 0.8,
    "domains": ["python", "psychology"],
    "valid": True,
    "notes": "supported by the residues",
}


def mock_json(**overrides: Any) -> str:
    return json.dumps({**MOCK_ANSWER, **overrides})


@pytest.fixture
def mock_runtime(corpus_copy: Path, make_runtime) -> Runtime:
    """The small corpus with a local model answered by litellm's mock_response (no network, no cost)."""
    return make_runtime(db=corpus_copy, completion_kwargs={"mock_response": mock_json()}, local_model="ollama/llama3")


def new_session(runtime: Runtime, seed_concept: str = SEED, random_seed: int = 1, **config: Any) -> Session:
    config.setdefault("human_checkpoint_frequency", 0)
    # The hashing embedder knows only shared words: a short seed is far from every chunk, and a walk only goes to
    # stored nodes, so the fence is wide unless a test draws it.
    config.setdefault("max_drift_distance", 1.5)
    return service.create_session(runtime, SessionConfig(seed_concept=seed_concept, random_seed=random_seed, **config))
