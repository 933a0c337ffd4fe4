"""Affinity: meaning plus shared distinctive terms, put in proportion against the knowledge base."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.affinity import Affinity, Evidence

TEXTS = {
    "finger": "The finger command shows who is logged in and prints their plan file.",
    "plan": "A plan file in a home directory is displayed when the user is fingered by the finger command.",
    "disk": "A hard disk stores data on spinning platters read by a moving head.",
    "cache": "A cache keeps recently used data close to the processor so it is read faster.",
    "lawn": "Grass on a lawn grows slowly in spring and needs water in summer.",
}


def build(embedder, **kwargs) -> Affinity:
    ids = list(TEXTS)
    return Affinity(ids, [TEXTS[i] for i in ids], embedder.embed([TEXTS[i] for i in ids]), **kwargs)


def test_shared_distinctive_terms_raise_affinity_above_meaning_alone(embedder) -> None:
    affinity = build(embedder)
    meaning_only = float(affinity.vectors[0] @ affinity.vectors[1])
    assert affinity.score("finger", "plan") > meaning_only + 0.2  # "finger", "plan", "file" are shared and rare
    assert affinity.score("finger", "plan") > affinity.score("finger", "lawn")
    assert affinity.score("finger", "plan") == affinity.score("plan", "finger")
    assert [p for p, _ in affinity.partners("finger", 1)] == ["plan"]
    assert "finger" not in [p for p, _ in affinity.partners("finger", 4)]  # never itself
    assert [p for p, _ in affinity.partners("finger", 2, allowed=lambda i: i != "plan")][0] != "plan"


def test_evidence_names_the_shared_terms_and_a_percentile(embedder) -> None:
    affinity = build(embedder)
    strong, weak = affinity.evidence("finger", "plan"), affinity.evidence("disk", "lawn")
    assert {"finger", "plan"} <= set(strong.shared_terms) and weak.shared_terms == ()
    assert strong.percentile > weak.percentile and 0 <= weak.percentile <= strong.percentile <= 100
    assert "shared distinctive terms: " in strong.line() and "finger" in strong.line()
    read = Evidence.read(strong.line())  # what a judge with no model reads back
    assert read is not None and read.shared_terms == strong.shared_terms
    assert (round(read.affinity, 2), read.percentile) == (round(strong.affinity, 2), round(strong.percentile, 1))
    assert Evidence.read(weak.line()).shared_terms == () and Evidence.read("no evidence here") is None


def test_texts_of_stop_words_only_still_have_an_affinity(embedder) -> None:
    vectors = embedder.embed(["the and of", "it is was"])
    affinity = Affinity(["a", "b"], ["the and of", "it is was"], vectors)
    assert np.isclose(affinity.score("a", "b"), float(vectors[0] @ vectors[1]), atol=1e-5)
    assert affinity.evidence("a", "b").shared_terms == ()


def test_the_moments_are_scipys_bias_corrected_ones() -> None:
    from scipy.stats import kurtosis, skew

    from explorer.affinity import sample_skew_kurtosis

    rng = np.random.default_rng(3)
    for values in (rng.normal(size=50), rng.beta(0.5, 0.5, size=2000), np.array([0.1, 0.2, 0.2, 0.9])):
        skewness, excess = sample_skew_kurtosis(values)
        assert skewness == pytest.approx(skew(values, bias=False), rel=1e-9, abs=1e-12)
        assert excess == pytest.approx(kurtosis(values, bias=False), rel=1e-9, abs=1e-12)
