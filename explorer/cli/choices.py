"""The engine's choices and defaults that options show in their help, written out here.

Typer reads every command's options (their types and defaults) whenever the ``explorer`` command starts, even
for ``--help``; taking these from where they live would import the records (numpy, pydantic), the reading
loaders (0.35 s) or the dreaming engine into every command. :data:`ENGINE` names where each one lives, and
``tests/test_one_place.py`` holds every name written here equal to the engine's, so a change there fails that
test rather than drifting here (and a name added here without its home fails it too).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

SessionStatus = Literal["active", "paused", "completed", "abandoned"]
CrystalStatus = Literal["active", "acted_upon", "invalidated", "archived"]
FenceAction = Literal["include", "exclude"]
Source = Literal["wander", "dreams", "imported", "all"]
Enrich = Literal["auto", "now", "later"]

MAX_MB = 20.0
ENRICH_AT_ONCE = 1000
NICENESS = 10
RESULT_THRESHOLD = 0.02
STEPS_PER_RUN = 10_000  # the most `wander run --steps` takes
PAGE_MAX = 1_000_000  # the most a list command's --limit or --offset takes


class ReviewState(StrEnum):
    """The review states' values (an enum, not a Literal: typer takes a list of enum values)."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    ARCHIVED = "archived"


# Where each name above lives in the engine, as ``module:attribute`` (what ``pkgutil.resolve_name`` reads).
ENGINE = {
    "SessionStatus": "explorer.records.wander:SessionStatus",
    "CrystalStatus": "explorer.records.wander:CrystalStatus",
    "FenceAction": "explorer.records.wander:FenceAction",
    "Source": "explorer.consolidation.service:Source",
    "Enrich": "explorer.reading.ingest:Enrich",
    "MAX_MB": "explorer.reading.loaders:DEFAULT_MAX_MB",
    "ENRICH_AT_ONCE": "explorer.reading.ingest:ENRICH_AT_ONCE",
    "NICENESS": "explorer.jobs.worker:NICENESS",
    "RESULT_THRESHOLD": "explorer.dreaming.exploration:ExplorationConfig.result_threshold",
    "STEPS_PER_RUN": "explorer.wander.config:STEPS_PER_RUN",
    "PAGE_MAX": "explorer.records:PAGE_MAX",
    "ReviewState": "explorer.records.wander:ReviewState",
}
