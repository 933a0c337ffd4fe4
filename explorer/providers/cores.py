"""How many cores no other process is using now, so the local model's threads do not fight for them.

Why: torch's threads spin-wait for each other between operations. On a quiet machine two threads embed a
passage in 17 ms where one takes 33; with one core busy elsewhere (the app drawing a page beside the worker)
the same two threads took 44 ms, and a single short text 78 ms against 27 on one thread. Measured on this
project's two-core machine: the right thread count depends on what else runs, not on the batch.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

WINDOW_S = 0.1  # shorter intervals are too coarse for the kernel's CPU-time counters; the last figure stands
TAKEN = 0.5  # a core is counted as taken once other processes use half of it

Sample = tuple[float, float, float]
"""(monotonic seconds, CPU seconds the machine has worked, CPU seconds this process has worked)."""


def _busy_seconds() -> float:
    """CPU seconds the whole machine has spent working (every process, every core) since it started."""
    import psutil  # here, not on top: every command imports this module, only a local embedding model counts cores

    times = psutil.cpu_times()
    return sum(getattr(times, name, 0.0) for name in ("user", "nice", "system", "irq", "softirq"))


class IdleCores:
    """Cores the machine's *other* processes left idle since the last time it was asked (at least one)."""

    def __init__(self, total: int | None = None, sample: Callable[[], Sample] | None = None):
        """``sample`` reads the clock and the CPU counters (default: the OS's); a test passes figures it chose."""
        import psutil

        self.total = total or os.cpu_count() or 1
        self._process = psutil.Process()
        self._sample = sample or self._os_sample
        self._lock = threading.Lock()
        self._mark = self._sample()
        self._idle = self.total

    def _os_sample(self) -> Sample:
        own = self._process.cpu_times()
        return time.monotonic(), _busy_seconds(), own.user + own.system

    def __call__(self) -> int:
        """The idle cores: the machine's busy time less this process's own, over the time since the last ask."""
        with self._lock:
            now = self._sample()
            elapsed = now[0] - self._mark[0]
            if elapsed >= WINDOW_S:
                others = max(0.0, (now[1] - self._mark[1]) - (now[2] - self._mark[2])) / elapsed
                self._idle = max(1, min(self.total, int(self.total - others + TAKEN)))
                self._mark = now
            return self._idle
