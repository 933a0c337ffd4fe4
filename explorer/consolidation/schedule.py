"""When to consolidate (docs/consolidation.md#when-to-consolidate): the four triggers and the minimum interval.

- manual: at once, always.
- session-complete: when a working session ends, always (the primary trigger; it must never be missed).
- periodic: when ``periodic_interval_s`` (30 minutes) has passed since the last run over the same source.
- threshold: when at least ``threshold_experiences`` (50) new experiences wait, but not sooner than
  ``min_interval_s`` (10 minutes) after the last run, so a busy agent does not consolidate after every step.

Pure: the caller says when it is, when the last run was and how many experiences are new.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Trigger = Literal["manual", "session-complete", "periodic", "threshold"]


@dataclass(frozen=True)
class ScheduleConfig:
    """The default schedule."""

    periodic: bool = True
    periodic_interval_s: float = 1800.0
    threshold: bool = True
    threshold_experiences: int = 50
    min_interval_s: float = 600.0


DEFAULT_SCHEDULE = ScheduleConfig()


@dataclass(frozen=True)
class Decision:
    """Whether a trigger calls for a run now, and why (said in the report either way)."""

    due: bool
    reason: str


def decide(
    trigger: Trigger,
    now: datetime,
    last_run: datetime | None,
    new_experiences: int,
    config: ScheduleConfig = DEFAULT_SCHEDULE,
) -> Decision:
    """Whether ``trigger`` calls for a consolidation at ``now``."""
    since = None if last_run is None else (now - last_run).total_seconds()
    if trigger == "manual":
        return Decision(True, "asked for")
    if trigger == "session-complete":
        return Decision(True, "a session completed")
    if new_experiences == 0:
        return Decision(False, "no new experiences since the last run")
    if trigger == "periodic":
        if not config.periodic:
            return Decision(False, "the periodic trigger is off")
        if since is not None and since < config.periodic_interval_s:
            return Decision(
                False, f"{since:.0f} s since the last run, under the {config.periodic_interval_s:g} s period"
            )
        return Decision(True, "the period has passed" if since is not None else "no run yet")
    if not config.threshold:
        return Decision(False, "the threshold trigger is off")
    if new_experiences < config.threshold_experiences:
        return Decision(False, f"{new_experiences} new experiences, under the {config.threshold_experiences} needed")
    if since is not None and since < config.min_interval_s:
        return Decision(False, f"{since:.0f} s since the last run, under the {config.min_interval_s:g} s minimum")
    return Decision(True, f"{new_experiences} new experiences")
