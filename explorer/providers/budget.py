"""A spending limit that holds, even with calls in flight at once.

Why reserve: a call's price is known only after it answers, and with several
calls in flight a check of "what is left" before each one lets them all pass
together. So before every attempt the gateway reserves the attempt's worst case
(the whole prompt and a full ``max_tokens`` answer at the model's price, the
request asking for no more) and, when the attempt is over, settles the
reservation at what it really cost, never more than was reserved: a server that
reports more usage than that, or answers more than ``max_tokens``, is charged the
reservation. A call the budget cannot cover is not made. Spending therefore never
passes the limit, whatever a server answers or reports.
"""

from __future__ import annotations

import math
import threading


class Budget:
    """Cents a run (a wander session, an ingest, a night of dreaming) may spend on priced models.

    ``limit_cents`` ``None`` means no limit; ``spent_cents`` starts at what was spent before (a resumed session).
    Thread-safe: the calls of one run share it.
    """

    def __init__(self, limit_cents: float | None = None, spent_cents: float = 0.0):
        self.limit_cents = limit_cents
        self.spent_cents = spent_cents
        self.reserved_cents = 0.0
        self.refused = 0
        self._lock = threading.Lock()

    @property
    def remaining_cents(self) -> float:
        """What is neither spent nor reserved by a call in flight (infinite without a limit)."""
        if self.limit_cents is None:
            return math.inf
        return max(0.0, self.limit_cents - self.spent_cents - self.reserved_cents)

    @property
    def exhausted(self) -> bool:
        """Whether a call was refused for want of budget: the run should say so, and stop asking."""
        return self.refused > 0

    def can_cover(self, cents: float) -> bool:
        """Whether a call costing at most ``cents`` could be reserved now (without reserving it)."""
        with self._lock:
            return cents <= self.remaining_cents

    def reserve(self, cents: float) -> bool:
        """Hold ``cents`` for one attempt; ``False`` (and the attempt is not made) when they are not left."""
        with self._lock:
            if cents > self.remaining_cents:
                self.refused += 1
                return False
            self.reserved_cents += cents
            return True

    def settle(self, reserved: float, actual: float) -> None:
        """Release an attempt's reservation and count what it really cost, at most what was reserved."""
        with self._lock:
            self.reserved_cents = max(0.0, self.reserved_cents - reserved)
            self.spent_cents += min(actual, reserved)

    def describe(self) -> str:
        """One line for reports: spent, of what limit."""
        if self.limit_cents is None:
            return f"spent {self.spent_cents:.2f} ¢ (no budget limit)"
        return f"spent {self.spent_cents:.2f} ¢ of a {self.limit_cents:g} ¢ budget"
