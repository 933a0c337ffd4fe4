"""Model requests held to a total deadline, which a cancel cuts short.

Why not the HTTP client's timeout alone: httpx times each read (and the connect, and each write), never the whole
request, so a server that sends its headers and then a byte a second is never silent long enough to trip it, and
holds the call for as long as it likes. Here each request runs as a task on an event loop in a thread of its own;
the asking thread waits for the task until the attempt's deadline or a cancel, and cancelling the task closes its
connection (httpx drops a connection whose response was interrupted), so nothing is left reading.

One loop serves the whole process: litellm caches its async HTTP clients process-wide, and a client belongs to the
loop that opened it.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine
from concurrent.futures import Future, wait
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


class CallCancelled(BaseException):
    """The run asking was cancelled (:meth:`Interrupter.cancel`): raised from the call, through the engine.

    A BaseException, so the engine's per-item isolation (``except Exception``) does not count it as one item's
    failure and go on to the next.
    """


class DeadlinePassed(Exception):
    """The request was not done by its deadline; it was abandoned and its connection closed."""


class Interrupter:
    """Runs requests to their deadline and interrupts them all at once on :meth:`cancel`.

    Thread-safe: every thread of a run (see ``Gateway.map``) asks through the same one.
    """

    def __init__(self) -> None:
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._in_flight: set[Future[Any]] = set()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called and :meth:`resume` not since."""
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Interrupt every request in flight, and refuse every later one until :meth:`resume`."""
        with self._lock:
            self._cancelled.set()
            in_flight = list(self._in_flight)
        for future in in_flight:
            future.cancel()  # cancels the task on the loop, which closes its connection

    def resume(self) -> None:
        """Let requests through again (the next run of a process whose last one was cancelled)."""
        self._cancelled.clear()

    def check(self) -> None:
        """Raise :class:`CallCancelled` when cancelled: called before anything that costs (a request, a slot)."""
        if self._cancelled.is_set():
            raise CallCancelled("the run was cancelled")

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds`` (the backoff between attempts), woken by a cancel, which then raises."""
        self._cancelled.wait(seconds)
        self.check()

    def run(self, request: Coroutine[Any, Any, T], deadline_s: float) -> T:
        """What ``request`` returns or raises, if it is done within ``deadline_s`` seconds; else
        :class:`DeadlinePassed`, or :class:`CallCancelled` as soon as the run is cancelled.
        """
        with self._lock:  # a cancel either finds this request in flight or is seen here, never neither
            if self._cancelled.is_set():
                request.close()
                raise CallCancelled("the run was cancelled")
            future = _submit(request)
            self._in_flight.add(future)
        try:
            wait([future], timeout=deadline_s)
            if future.cancelled():
                raise CallCancelled("the run was cancelled")
            if not future.done():
                future.cancel()
                raise DeadlinePassed(f"no complete answer within {deadline_s:g} s")
            return future.result()
        finally:
            with self._lock:
                self._in_flight.discard(future)


def _submit(request: Coroutine[Any, Any, T]) -> Future[T]:
    """``request`` started on the process's request loop, itself started on first use in a daemon thread (it
    idles in a select when unused).
    """
    import asyncio  # on the first model request: asyncio (ssl under it) is a tenth of a short command's start

    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="model-requests", daemon=True).start()
        loop = _loop
    return asyncio.run_coroutine_threadsafe(request, loop)
