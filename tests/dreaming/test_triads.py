"""Which memories a dream binds: an anchor of the current period, its bridge partner, a third on both."""

from __future__ import annotations

import numpy as np

from explorer.affinity import Affinity
from explorer.dreaming.triads import TriadConfig, current_period, sample_triads

from .conftest import memory

NETWORK = [
    ("networking", 2020, "A router forwards packets between networks using a routing table of prefixes."),
    ("networking", 2019, "Ethernet frames carry packets across a local network segment between hosts."),
    ("hardware", 2020, "A network interface card puts ethernet frames on the wire and raises interrupts."),
    ("hardware", 2012, "The routing table of a router is held in fast memory on its line cards."),
    ("gardening", 2019, "Tomatoes need sun, steady water and stakes to hold the heavy stems."),
    ("gardening", 2011, "Compost feeds the soil of a vegetable garden through the winter."),
]


def nodes(embedder):
    found = [memory(text, domain=domain, year=year) for domain, year, text in NETWORK]
    for node, vector in zip(found, embedder.embed([n.text for n in found]), strict=True):
        node.embedding = vector
    return found


def test_the_current_period_widens_to_earlier_years_when_sparse() -> None:
    pool = [memory(year=y) for y in (2020, 2019, 2019, 2012, 2025)]
    assert [n.year for n in current_period(pool, 2020, 1)] == [2020]
    assert sorted(n.year for n in current_period(pool, 2020, 3)) == [2019, 2019, 2020]
    assert len(current_period(pool, None, 1)) == len(pool)


def test_triads_bridge_categories_and_never_repeat_a_pair(embedder) -> None:
    pool = nodes(embedder)
    affinity = Affinity.of_nodes(pool)
    anchors = [n for n in pool if n.year == 2020]
    triads = sample_triads(anchors, pool, affinity, 6, np.random.default_rng(0))
    assert 0 < len(triads) <= 6
    pairs = [frozenset((t[0].id, t[1].id)) for t in triads]
    assert len(pairs) == len(set(pairs))
    for anchor, partner, *rest in triads:
        assert anchor in anchors and anchor.domain != partner.domain
        assert len({anchor.id, partner.id, *(n.id for n in rest)}) == 2 + len(rest)
    # the router's strongest bridge is the line cards' routing table, not the tomatoes
    first = {t[0].id: t[1] for t in reversed(triads)}
    assert first[pool[0].id].text == NETWORK[3][2]
    assert {t[0].id for t in triads} == {a.id for a in anchors}  # a used anchor's bridges weaken


def test_one_category_needs_only_another_source(embedder) -> None:
    pool = [memory(text, domain="notes", document_id=f"doc{i}") for i, (_, _, text) in enumerate(NETWORK)]
    for node, vector in zip(pool, embedder.embed([n.text for n in pool]), strict=True):
        node.embedding = vector
    triads = sample_triads(pool[:1], pool, Affinity.of_nodes(pool), 3, np.random.default_rng(0))
    assert triads and all(t[1].document_id != "doc0" for t in triads)


def test_a_large_period_weighs_a_sample_of_its_anchors(embedder) -> None:
    """Each weighed anchor is measured against every memory: a period larger than the bound weighs a random
    sample of it (every dream's anchor among them), a period within the bound all of it.
    """
    pool = nodes(embedder)
    affinity = Affinity.of_nodes(pool)
    bounded = TriadConfig(anchors_per_dream=1, least_anchors=2)
    weighed: list[str] = []
    partners = affinity.partners

    def counted(node_id, k, allowed=None):
        weighed.append(node_id)
        return partners(node_id, k, allowed)

    affinity.partners = counted  # type: ignore[method-assign]
    triads = sample_triads(pool, pool, affinity, 1, np.random.default_rng(0), bounded)
    anchors = set(weighed[:2])
    assert len(anchors) == 2 and len(triads) == 1 and triads[0][0].id in anchors
    weighed.clear()
    within = sample_triads(pool, pool, affinity, 6, np.random.default_rng(0), bounded)
    assert set(weighed) >= {n.id for n in pool} and within
