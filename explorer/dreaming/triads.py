"""Which memories a REM dream binds: three that bear on each other across categories.

The original design sampled three memories at random (one from the current year), so a
dream's parents are almost never related and its "implicit question" has no
support in them. Here each dream starts from an anchor of the current period
and binds the partner it has the strongest affinity with in another category
(:mod:`explorer.affinity`: meaning plus shared distinctive terms), then a third
memory that bears on both. The current period is the current year, widened to
earlier years when it holds fewer anchors than dreams. The (anchor, partner)
pairs are drawn by strength (a softmax, so strong bridges come first but not
only they), an anchor's weakening with each dream it already anchors, and no
pair is dreamt twice: the dreams of a night spread over the knowledge base
instead of circling one strong pair (docs/dreaming.md#rem-cycle). No memory is
bound to one it is not related to: a partner or a third below the knowledge
base's relation floor (:attr:`~explorer.affinity.Affinity.floor`) is left out,
so two unrelated subjects give no dream between them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from explorer.affinity import Affinity
from explorer.dreaming.graph import bridges_from, several_categories
from explorer.records import Node


@dataclass(frozen=True)
class TriadConfig:
    """How a dream's memories are chosen: how many partners are weighed, and how sharply strength decides."""

    partners: int = 5  # the anchor's strongest partners the second memory is drawn from
    temperature: float = 0.05  # softmax temperature over affinities (they differ by hundredths)
    reuse_penalty: float = 0.1  # an anchor's bridges weaken by this for each dream it already anchors
    # Anchors whose bridges are weighed, at most: this many per dream asked, and never fewer than least_anchors.
    # Each is measured against every memory, so weighing all of a large period's (an undated vault of 10,000
    # notes is one period) cost minutes before the first dream; a random sample of them still offers the softmax
    # many strong bridges to choose from, and a period no larger than the bound is weighed whole, as before.
    anchors_per_dream: int = 8
    least_anchors: int = 64


DEFAULT_TRIADS = TriadConfig()
MOST_SURE = 0.99  # a dream's confidence, however strong its binding: what two decimals can show short of certain


def current_period(pool: Sequence[Node], current_year: int | None, at_least: int) -> list[Node]:
    """The memories of ``current_year``, widened to earlier years until the period holds ``at_least`` of them
    (a sparse year would otherwise anchor every dream on the same few memories); all of them when undated.
    """
    if current_year is None:
        return list(pool)
    dated = sorted({n.year for n in pool if n.year is not None and n.year <= current_year}, reverse=True)
    period: list[Node] = []
    for year in dated:
        period += [n for n in pool if n.year == year]
        if len(period) >= at_least:
            break
    return period


def _softmax_pick(scores: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    weights = np.exp((scores - scores.max()) / temperature)
    return int(rng.choice(len(scores), p=weights / weights.sum()))


def sample_triads(
    anchors: Sequence[Node],
    pool: Sequence[Node],
    affinity: Affinity,
    count: int,
    rng: np.random.Generator,
    config: TriadConfig = DEFAULT_TRIADS,
) -> list[list[Node]]:
    """Up to ``count`` triads (anchor, its bridge partner, a memory bearing on both), strongest bridges likeliest.

    Only memories ``affinity`` was built over take part; a partner comes from another document (when there are
    several) and, when the knowledge base has several categories, from another category than the anchor; it and
    the third bear on the anchor at least as strongly as the relation floor.
    """
    by_id = {n.id: n for n in pool if n.id in affinity}
    several = several_categories(by_id.values())
    sources = len({n.document_id for n in by_id.values()}) > 1

    def bridges(a: Node) -> Callable[[str], bool]:
        return bridges_from(a, by_id, other_category=several, other_source=sources)

    weighed = _sample_anchors([a for a in anchors if a.id in by_id], count, rng, config)
    bridges_of = {a.id: related(affinity, affinity.partners(a.id, config.partners, bridges(a))) for a in weighed}
    options = {frozenset((a, p)): (a, p, s) for a, found in bridges_of.items() for p, s in found}
    uses: dict[str, int] = {}
    triads: list[list[Node]] = []
    while options and len(triads) < count:
        keys = list(options)
        strength = np.array([options[k][2] - config.reuse_penalty * uses.get(options[k][0], 0) for k in keys])
        anchor_id, partner_id, _ = options.pop(keys[_softmax_pick(strength, config.temperature, rng)])
        uses[anchor_id] = uses.get(anchor_id, 0) + 1
        anchor, partner = by_id[anchor_id], by_id[partner_id]
        third = _third(anchor, partner, by_id, affinity, config)
        triads.append([anchor, partner, *([third] if third else [])])
    return triads


def _sample_anchors(anchors: list[Node], count: int, rng: np.random.Generator, config: TriadConfig) -> list[Node]:
    """The anchors whose bridges are weighed for ``count`` dreams: all of them up to the bound of ``config``, else a
    random sample of that many, in their order (see :attr:`TriadConfig.anchors_per_dream`).
    """
    bound = max(config.least_anchors, config.anchors_per_dream * count)
    if len(anchors) <= bound:
        return anchors
    return [anchors[i] for i in sorted(rng.choice(len(anchors), size=bound, replace=False))]


def binding(triad: Sequence[Node], affinity: Affinity) -> float:
    """How sure it is that a dream's memories bear on each other, as measured: the share of this knowledge base's
    random pairs weaker than its weakest pair, at most :data:`MOST_SURE` (a sample of pairs is evidence, never
    the certainty of 1 that a dream drawn from two different memories cannot claim).
    """
    weakest = min(combinations(triad, 2), key=lambda pair: affinity.score(pair[0].id, pair[1].id))
    return round(min(MOST_SURE, affinity.evidence(weakest[0].id, weakest[1].id).percentile / 100), 3)


def related(affinity: Affinity, partners: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The partners at or above the relation floor (all of them while the base is too small to have one)."""
    floor = affinity.floor
    return [(p, s) for p, s in partners if floor is None or s >= floor]


def _third(anchor: Node, partner: Node, by_id: dict[str, Node], affinity: Affinity, config: TriadConfig) -> Node | None:
    """The memory, from a third document, that bears most on both (the higher of its two affinities is not
    enough: it must bear on the weaker side too, at least as strongly as the relation floor).
    """
    taken = {anchor.document_id, partner.document_id} - {None}
    if len({n.document_id for n in by_id.values()} - taken) == 0:
        taken = set()  # one source (or two): the third may share one
    pool = {p for node in (anchor, partner) for p, _ in affinity.partners(node.id, config.partners * 2)} - {
        anchor.id,
        partner.id,
    }
    options = [p for p in pool if p in by_id and by_id[p].document_id not in taken]
    bearing = related(
        affinity, [(p, min(affinity.score(anchor.id, p), affinity.score(partner.id, p))) for p in options]
    )
    if not bearing:
        return None
    return by_id[max(bearing, key=lambda pair: (pair[1], pair[0]))[0]]
