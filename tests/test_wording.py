"""Counts and names as people read them."""

from __future__ import annotations

from typing import get_args

from explorer.records.wander import Strategy
from explorer.wording import WAYS, counted, locus_kind, way


def test_a_count_takes_its_nouns_number() -> None:
    assert [counted(n, "crystal") for n in (0, 1, 2)] == ["0 crystals", "1 crystal", "2 crystals"]
    assert counted(3, "locus", "loci") == "3 loci" and counted(1, "locus", "loci") == "1 locus"


def test_every_way_a_walk_finds_a_place_has_words() -> None:
    assert set(WAYS) == set(get_args(Strategy))
    assert way("distance_band") == "a neighbour at the right distance" and locus_kind("ADJACENT") == "adjacent"
