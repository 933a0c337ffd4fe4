"""Prominence: how present a memory is, fading with age and rising with use.

A memory's prominence halves every ``half_life`` days since it was last used
(or created, if never used). Its half-life grows with importance and with the
number of times it has been used, so memories that matter, or keep being
recalled, fade more slowly. Static-profile memories never fade.

Thresholds (docs/dreaming.md#prominence): at or above ``ACTIVE`` a memory is in play; in
``[DORMANT, ACTIVE)`` it is fading, the range fusion draws from; below
``DORMANT`` it is archived (kept, but no longer dreamt over by fusion).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from explorer.records import Node

ACTIVE = 0.5
DORMANT = 0.1

_DAY_S = 86400.0


@dataclass(frozen=True)
class ProminenceConfig:
    """How fast an unused memory fades, and how much importance and recall slow the fading."""

    half_life_days: float = 30.0  # for importance 0.5 and no use
    use_boost: float = 0.25  # each use lengthens the half-life by this fraction …
    max_uses: int = 10  # … up to this many uses
    floor: float = 0.0


DEFAULT_PROMINENCE = ProminenceConfig()


def prominence(node: Node, now: datetime, config: ProminenceConfig = DEFAULT_PROMINENCE) -> float:
    """The node's prominence at ``now`` (in [0, 1])."""
    if node.memory_type == "static_profile":
        return 1.0
    anchor = node.last_accessed_at or node.created_at
    if anchor is None:
        return 1.0  # not stored yet: as fresh as it gets
    age_days = max(0.0, (_aware(now) - _aware(anchor)).total_seconds() / _DAY_S)
    uses = min(node.access_count, config.max_uses)
    half_life = config.half_life_days * (0.5 + node.importance) * (1.0 + config.use_boost * uses)
    return max(config.floor, min(1.0, 0.5 ** (age_days / half_life)))


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
