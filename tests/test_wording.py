"""Counts and names as people read them."""

from __future__ import annotations

from typing import get_args

from explorer.records import NODE_TYPES
from explorer.records.wander import Strategy
from explorer.wording import NODE_KINDS, WAYS, counted, locus_kind, node_kind, way


def test_a_count_takes_its_nouns_number() -> None:
    assert [counted(n, "crystal") for n in (0, 1, 2)] == ["0 crystals", "1 crystal", "2 crystals"]
    assert counted(3, "locus", "loci") == "3 loci" and counted(1, "locus", "loci") == "1 locus"


def test_every_way_a_walk_finds_a_place_has_words() -> None:
    assert set(WAYS) == set(get_args(Strategy))
    assert way("distance_band") == "a neighbour at the right distance" and locus_kind("ADJACENT") == "adjacent"


def test_every_node_type_has_words() -> None:
    assert set(NODE_KINDS) == set(NODE_TYPES)
    assert node_kind("raw_chunk") == "chunk" and node_kind("entity_insight") == "entity insight"
