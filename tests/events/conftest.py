"""Event fixtures: sessions on the small corpus, a real ``nats-server`` on a loopback port and a NATS listener."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client

from explorer.records.wander import Session
from explorer.runtime import Runtime
from explorer.store import events as events_store
from explorer.store.events import Event
from explorer.testing.ports import listening_port
from explorer.wander import service
from explorer.wander.config import SessionConfig

NATS_SERVER = Path("/usr/sbin/nats-server")
WAIT_S = 60.0  # the most a test waits for something that must happen (never what it asserts)


def new_session(runtime: Runtime, random_seed: int = 3, **config: Any) -> Session:
    """A session on the small corpus, with no checkpoint and a wide fence unless a test draws one (the hashing
    embedder puts a short seed far from every chunk).
    """
    config.setdefault("seed_concept", "memory management, reference counting and garbage collection")
    config.setdefault("human_checkpoint_frequency", 0)
    config.setdefault("max_drift_distance", 1.5)
    return service.create_session(runtime, SessionConfig(random_seed=random_seed, **config))


def stored(runtime: Runtime, session_id: str) -> list[Event]:
    """The session's events as the store holds them, in order."""
    with runtime.db.connect() as con:
        return events_store.list_events(con, session_id=session_id, limit=100_000)


def eventually(check: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    """Wait until ``check()`` holds (something another thread or process does), failing after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        time.sleep(0.05)


@dataclass
class NatsServer:
    """``nats-server`` on 127.0.0.1 and a port it chose at its first start (``-p -1``, read back from its
    listening socket), which a test may stop and start again on that port, as a server back from a crash would be.
    """

    port: int | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        assert self.port is not None, "the server has not started"
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> NatsServer:
        self.process = subprocess.Popen(
            [str(NATS_SERVER), "-a", "127.0.0.1", "-p", str(self.port or -1)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.port = listening_port(self.process, WAIT_S)
        return self

    def stop(self) -> None:
        """Kill the server outright, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def nats_server() -> Iterator[NatsServer]:
    if not NATS_SERVER.exists():
        pytest.fail(f"{NATS_SERVER} is missing: scripts/setup.sh installs Debian's nats-server")
    server = NatsServer().start()
    yield server
    server.stop()


@dataclass
class NatsListener:
    """A nats-py subscriber on its own thread and loop, collecting every message under ``subjects``."""

    url: str
    subjects: str = "wander.>"
    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    reconnections: int = 0

    def start(self) -> NatsListener:
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._subscribe(), self._loop).result(timeout=WAIT_S)
        return self

    async def _subscribe(self) -> None:
        async def reconnected() -> None:
            self.reconnections += 1

        async def received(msg: Any) -> None:
            self.messages.append((msg.subject, json.loads(msg.data)))

        self._client = Client()
        await self._client.connect(
            self.url, max_reconnect_attempts=-1, reconnect_time_wait=1, reconnected_cb=reconnected
        )
        await self._client.subscribe(self.subjects, cb=received)
        await self._client.flush()  # the server has the subscription before anyone publishes

    def seqs(self) -> list[int]:
        return [body["seq"] for _, body in self.messages]

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._client.close(), self._loop).result(timeout=WAIT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)


@pytest.fixture
def nats_listener(nats_server: NatsServer) -> Iterator[NatsListener]:
    listener = NatsListener(nats_server.url).start()
    yield listener
    listener.close()
