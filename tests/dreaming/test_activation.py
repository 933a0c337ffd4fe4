"""Relation edge weights and synchronous spreading activation."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.dreaming.activation import EDGE_WEIGHTS, ActivationConfig, edge_weight, spread_activation
from explorer.dreaming.graph import relations_lookup

from .conftest import link

EXACT = ActivationConfig(
    max_steps=2, decay=0.5, activation_threshold=0.0, noise_sigma=0.0, result_threshold=0.0, max_results=None
)


@pytest.mark.parametrize("kind,forward,reverse", [("UPDATES", 0.9, 0.9), ("EXTENDS", 0.7, 0.5), ("DERIVES", 0.4, 0.6)])
def test_edge_weight_is_directional_weight_times_confidence(kind, forward, reverse) -> None:
    assert EDGE_WEIGHTS[kind] == (forward, reverse)
    relation = link("a", "b", kind, confidence=0.5)
    assert edge_weight(relation, "a") == pytest.approx(forward * 0.5)
    assert edge_weight(relation, "b") == pytest.approx(reverse * 0.5)


def test_activation_spreads_synchronously_with_decay() -> None:
    # a → b → c. Step 1: a keeps 0.5, b gets 0.7·0.5 = 0.35. Step 2 (from step 1's values only):
    # b keeps 0.175 and receives 0.175 from a; c gets 0.35·0.7·0.5 = 0.1225.
    get = relations_lookup([link("a", "b"), link("b", "c")])
    scores = spread_activation("a", get, EXACT)
    assert "a" not in scores
    assert scores == pytest.approx({"b": 0.35, "c": 0.1225})
    assert list(scores) == ["b", "c"]  # best first


def test_thresholds_steps_and_result_cap() -> None:
    get = relations_lookup([link("a", "b"), link("b", "c"), link("a", "d", "DERIVES")])
    one_step = spread_activation("a", get, ActivationConfig(max_steps=1, noise_sigma=0.0, result_threshold=0.0))
    assert set(one_step) == {"b", "d"}  # c is two hops away
    strict = spread_activation("a", get, ActivationConfig(max_steps=3, noise_sigma=0.0, result_threshold=0.2))
    assert all(score >= 0.2 for score in strict.values()) and "c" not in strict
    capped = spread_activation(
        "a", get, ActivationConfig(max_steps=3, noise_sigma=0.0, result_threshold=0.0, max_results=1)
    )
    assert list(capped) == ["b"]
    # a node below the activation threshold does not spread: nothing goes past b
    quiet = spread_activation(
        "a", get, ActivationConfig(max_steps=3, noise_sigma=0.0, result_threshold=0.0, activation_threshold=0.5)
    )
    assert "c" not in quiet


def test_isolated_seed_reaches_nothing() -> None:
    assert spread_activation("lonely", relations_lookup([link("a", "b")]), EXACT) == {}


def _graph():
    relations = [link(f"n{i}", f"n{i + 1}", "EXTENDS", confidence=0.9) for i in range(12)]
    relations += [link("n0", f"m{i}", "DERIVES") for i in range(5)]
    return relations_lookup(relations)


def test_no_noise_is_deterministic_without_a_generator() -> None:
    config = ActivationConfig(noise_sigma=0.0, max_steps=4, result_threshold=0.0, max_results=None)
    assert spread_activation("n0", _graph(), config) == spread_activation("n0", _graph(), config)


def test_noise_is_reproducible_from_its_seed_and_varies_between_seeds() -> None:
    config = ActivationConfig(noise_sigma=0.6, max_steps=4, result_threshold=0.0, max_results=None)
    first = spread_activation("n0", _graph(), config, np.random.default_rng(7))
    again = spread_activation("n0", _graph(), config, np.random.default_rng(7))
    other = spread_activation("n0", _graph(), config, np.random.default_rng(8))
    plain = spread_activation(
        "n0", _graph(), ActivationConfig(noise_sigma=0.0, max_steps=4, result_threshold=0.0, max_results=None)
    )
    assert first == again
    assert first != other
    assert set(first) <= set(plain) and first != plain
    assert all(0.0 <= s <= 1.0 for s in first.values())


def test_noise_without_a_generator_is_refused() -> None:
    with pytest.raises(ValueError, match="seeded generator"):
        spread_activation("n0", _graph(), ActivationConfig(noise_sigma=0.3))
