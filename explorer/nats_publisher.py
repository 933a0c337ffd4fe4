"""Publishing stored events to NATS (``NATS_URL``), under the subjects docs/wander.md names.

Why a thread of its own: nats-py is asyncio, and the engine's writers (a walk, a page, a worker) are plain threads
that must never wait on a network. A writer only queues the stored event (:meth:`NatsPublisher.publish`); the
publisher's own loop sends it. The store is the record: when the server is away the walk goes on, its events stay
in the store, a warning is logged once per outage, and the client reconnects by itself when the server is back
(what it queued meanwhile, up to its buffer, goes out then). At exit what is queued is flushed, for a short while
at most.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import threading
from collections import deque
from pathlib import Path

from nats.aio.client import Client
from nats.errors import Error as NatsError

from explorer import event_stream
from explorer.store import Store
from explorer.store.events import Event

log = logging.getLogger(__name__)
QUEUE_LIMIT = 10_000  # events waiting for the server; beyond it the oldest are dropped (the store has them)
CLOSE_WAIT_S = 2.0  # how long exit waits for queued events to reach the server
RECONNECT_WAIT_S = 1  # seconds between attempts (nats-py takes whole seconds)


class NatsPublisher:
    """One connection to a NATS server, shared by every database this process publishes from."""

    def __init__(self, url: str):
        self.url = url
        self._queue: deque[Event] = deque(maxlen=QUEUE_LIMIT)
        self._closing = threading.Event()
        self._outage = False
        self._loop = asyncio.new_event_loop()
        self._wake = asyncio.Event()
        self._thread = threading.Thread(target=self._loop.run_forever, name="nats-publisher", daemon=True)
        self._thread.start()
        self._done = asyncio.run_coroutine_threadsafe(self._run(), self._loop)

    def publish(self, event: Event) -> None:
        """Queue a stored event for the server (returns at once, whatever the server's state)."""
        if self._closing.is_set():
            return
        if len(self._queue) == QUEUE_LIMIT:
            self._went_away(f"{QUEUE_LIMIT} events wait for it")
        self._queue.append(event)
        self._loop.call_soon_threadsafe(self._wake.set)

    def close(self, timeout_s: float = CLOSE_WAIT_S) -> None:
        """Send what is queued, within ``timeout_s``, and disconnect; what the server did not get stays in the store."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._loop.call_soon_threadsafe(self._wake.set)
        try:
            self._done.result(timeout=timeout_s)
        except Exception:  # not flushed in time, or the loop failed: the events are in the store
            if self._queue:
                log.warning("%d event(s) were not published to NATS at %s before exit", len(self._queue), self.url)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=timeout_s)

    # -- the publisher's own loop ----------------------------------------------------------------------

    def _went_away(self, why: str) -> None:
        if not self._outage:
            self._outage = True
            log.warning(
                "cannot publish events to NATS at %s (%s); they stay in the store, publishing resumes when it is back",
                self.url,
                why,
            )

    async def _run(self) -> None:
        client = Client()

        async def disconnected() -> None:
            self._went_away("the server went away")

        async def reconnected() -> None:
            self._outage = False
            log.info("publishing events to NATS at %s again", self.url)
            self._wake.set()

        async def error(exc: Exception) -> None:
            self._went_away(f"{type(exc).__name__}: {exc}".rstrip(": "))

        connecting = asyncio.ensure_future(
            client.connect(
                self.url,
                name="dream-explorer",
                max_reconnect_attempts=-1,  # forever: a server that comes back gets the events again
                reconnect_time_wait=RECONNECT_WAIT_S,
                connect_timeout=2,
                disconnected_cb=disconnected,
                reconnected_cb=reconnected,
                error_cb=error,
            )
        )
        connecting.add_done_callback(self._connected)

        def connected() -> bool:
            return connecting.done() and not connecting.cancelled() and connecting.exception() is None

        try:
            while not self._closing.is_set():
                if connected():
                    await self._send(client)
                await self._wake.wait()
                self._wake.clear()
            if self._outage:  # the server is away: what is queued stays in the store, exit does not wait
                return
            if self._queue and not connecting.done():  # at exit before the first connection: give it a moment
                await asyncio.wait({connecting}, timeout=CLOSE_WAIT_S)
            if connected():
                await self._send(client)
                await client.flush(timeout=int(CLOSE_WAIT_S))
        finally:
            if connected() and not client.is_closed:
                await client.close()
            connecting.cancel()

    def _connected(self, connecting: asyncio.Future[None]) -> None:
        if not connecting.cancelled() and (exc := connecting.exception()) is not None:  # a URL it cannot use
            self._went_away(f"{type(exc).__name__}: {exc}")
        self._wake.set()

    async def _send(self, client: Client) -> None:
        while self._queue:
            event = self._queue.popleft()
            try:
                await client.publish(event.subject, json.dumps(event.to_json(), default=str).encode())
            except NatsError as exc:  # its buffer is full while the server is away: this one stays in the store only
                self._went_away(f"{type(exc).__name__}")


_publishers: dict[str, NatsPublisher] = {}
_publishing: dict[tuple[str, str], event_stream.Subscription] = {}  # (server, database file) → its subscription
_lock = threading.Lock()


def publish_events(db: Store, url: str) -> event_stream.Subscription:
    """Publish every event this process stores in ``db`` to the NATS server at ``url``: once, however many
    runtimes the process opens on that file, over one connection per server, closed at exit after a short flush.
    """
    key = (url, str(Path(db.path).resolve()))
    with _lock:
        subscription = _publishing.get(key)
        if subscription is None:
            publisher = _publishers.get(url)
            if publisher is None:
                publisher = _publishers[url] = NatsPublisher(url)
                atexit.register(publisher.close)
            subscription = _publishing[key] = event_stream.subscribe(db, publisher.publish)
        return subscription
