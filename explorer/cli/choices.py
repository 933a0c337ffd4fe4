"""The engine's choices and defaults that options show in their help, written out here.

Typer reads every command's options (their types and defaults) whenever the ``explorer`` command starts, even
for ``--help``; taking these from where they live would import the records (numpy, pydantic), the reading
loaders (0.35 s) or the dreaming engine into every command. ``tests/cli/test_startup.py`` holds each one equal
to the engine's, so a change there fails that test rather than drifting here.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

SessionStatus = Literal["active", "paused", "completed", "abandoned"]  # explorer.records.wander.SessionStatus
CrystalStatus = Literal["active", "acted_upon", "invalidated", "archived"]  # explorer.records.wander.CrystalStatus
FenceAction = Literal["include", "exclude"]  # explorer.records.wander.FenceAction
Source = Literal["wander", "dreams", "imported", "all"]  # explorer.consolidation.service.Source

MAX_MB = 20.0  # explorer.reading.loaders.DEFAULT_MAX_MB
NICENESS = 10  # explorer.jobs.worker.NICENESS
RESULT_THRESHOLD = 0.02  # explorer.dreaming.exploration.ExplorationConfig.result_threshold
STEPS_PER_RUN = 10_000  # explorer.wander.config.STEPS_PER_RUN: the most `wander run --steps` takes
PAGE_MAX = 1_000_000  # explorer.records.PAGE_MAX: the most a list command's --limit or --offset takes


class ReviewState(StrEnum):
    """explorer.records.wander.ReviewState's values (an enum, not a Literal: typer takes a list of enum values)."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    ARCHIVED = "archived"
