"""A job kind for the shared queue's tests, and ``python counting_kind.py ARGS`` = ``explorer ARGS`` knowing it.

``test.count`` counts ``items``, pausing ``pause_s`` at each and reporting progress between them, and touches
nothing but its job's row: the queue's tests time the queue (deferring, claiming, aborting, recovering a dead
worker's job), not an engine, and need a run that lasts as long as they say on any store.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from pydantic import Field

from explorer.jobs.kinds import KINDS, Kind, Params
from explorer.records import Progress
from explorer.runtime import Runtime

NAME = "test.count"


class Counting(Params):
    """How many items, and the pause at each."""

    items: int = Field(ge=1)
    pause_s: float = Field(0.0, ge=0)


@dataclass(frozen=True)
class Counted:
    """The items counted."""

    items: int

    def to_json(self) -> dict[str, int]:
        return {"counted": self.items}


def count(runtime: Runtime, p: Counting, progress: Progress) -> Counted:
    for item in range(p.items):
        progress(item, p.items, f"item {item + 1}")
        time.sleep(p.pause_s)
    progress(p.items, p.items, "done")
    return Counted(p.items)


def register() -> None:
    """Make ``test.count`` a kind of job in this process."""
    KINDS[NAME] = Kind(NAME, "counting", Counting, count)


if __name__ == "__main__":
    register()
    from explorer.cli import main

    sys.argv[0] = "explorer"
    main()
