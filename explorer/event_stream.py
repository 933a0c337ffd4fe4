"""Hearing of events as they happen: subscribers in this process, and a follower for any process.

Every event is stored first (:mod:`explorer.store.events`, one row with its ``seq``); this module only tells of
stored ones, so a listener never hears of something that did not happen.

- :func:`subscribe`: a callback in this process, called with each event this process stores in a database,
  once the transaction that wrote it has committed and the file is released (never for a write that
  rolled back). It runs on the writing thread, so it should be quick (the NATS publisher only queues).
- :func:`follow`: the events of a database as they appear, whoever writes them (a background worker walks in a
  process of its own), by short reads of the store.

Both take the :class:`~explorer.store.Store`, not the runtime: hearing of events needs the database and nothing
the runtime wires (models, embedder), and the runtime itself wires the NATS publisher onto this module, so
taking the runtime here would make the two import each other.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.store import Store, database
from explorer.store.events import Event, list_events
from explorer.store.wander import session_id_of

__all__ = ["Event", "Subscriber", "Subscription", "follow", "subscribe"]

log = logging.getLogger(__name__)
Subscriber = Callable[[Event], None]
FOLLOW_POLL_S = 0.5  # a follower's read of the store: a few ms each, so a walk's writes barely wait for it
FOLLOW_BATCH = 500
# Two threads of one process may commit events out of seq order (a sequence number is taken at the insert,
# not at the commit): a follower looks this many numbers back for one it has not seen yet.
LOOK_BACK = 64


def _key(path: Path) -> str:
    return str(Path(path).resolve())


@dataclass(frozen=True, eq=False)
class Subscription:
    """One subscriber and what it listens to; :meth:`close` ends it."""

    database: str
    callback: Subscriber
    session_id: str | None = None
    subject_prefix: str | None = None

    def wants(self, event: Event) -> bool:
        """Whether the event is of the session and subject family this subscriber asked for."""
        return (self.session_id is None or event.session_id == self.session_id) and (
            not self.subject_prefix or event.subject.startswith(self.subject_prefix)
        )

    def close(self) -> None:
        """Stop calling the subscriber (closing twice is harmless)."""
        with _lock:
            if self in _subscriptions:
                _subscriptions.remove(self)


_lock = threading.Lock()
_subscriptions: list[Subscription] = []


def subscribe(
    db: Store, callback: Subscriber, *, session_id: str | None = None, subject_prefix: str | None = None
) -> Subscription:
    """Call ``callback(event)`` for every event this process stores in ``db`` from now on (narrowed to a
    session or a subject family such as ``wander.crystal.``), in the order stored.
    """
    subscription = Subscription(_key(db.path), callback, session_id, subject_prefix)
    with _lock:
        _subscriptions.append(subscription)
    return subscription


def _tell(path: Path, committed: list[Any]) -> None:
    """The store's commit hook: hand the committed events to their subscribers. A subscriber's failure is
    logged and never reaches the write, which stands.
    """
    with _lock:
        listening = list(_subscriptions)
    if not listening:
        return
    key = _key(path)
    listening = [s for s in listening if s.database == key]
    for event in committed:
        if not isinstance(event, Event):
            continue
        for subscription in listening:
            if subscription.wants(event):
                try:
                    subscription.callback(event)
                except Exception:
                    log.exception("an event subscriber failed on %s (seq %s)", event.subject, event.seq)


database.commit_hooks.append(_tell)


def follow(
    db: Store,
    session_id: str | None = None,
    subject_prefix: str | None = None,
    after_seq: int = 0,
    *,
    poll_s: float = FOLLOW_POLL_S,
    idle_s: float | None = None,
) -> Iterator[Event]:
    """The stored events after ``after_seq`` (of a session, of a subject family), then each new one as it
    appears, whichever process writes it: a short read of the store every ``poll_s`` seconds, with the file
    free in between. Ends after ``idle_s`` seconds without a new event (``None``: never; leave the loop to stop).

    Events come in ``seq`` order, except one whose transaction committed after a later-numbered one's (two
    threads of one writer at once): it comes when it is committed, not never.
    """
    if session_id:  # a short id as the pages show it
        with db.connect() as con:
            session_id = session_id_of(con, session_id)
    seen: deque[int] = deque(maxlen=4 * LOOK_BACK)
    newest, quiet_since = after_seq, time.monotonic()
    while True:
        with db.connect() as con:
            batch = list_events(
                con,
                session_id=session_id,
                subject_prefix=subject_prefix,
                after_seq=max(after_seq, newest - LOOK_BACK),
                limit=FOLLOW_BATCH,
            )
        fresh = [e for e in batch if e.seq not in seen]
        for event in fresh:
            seen.append(event.seq)
            newest = max(newest, event.seq)
            yield event
        if fresh:
            quiet_since = time.monotonic()
            if len(batch) == FOLLOW_BATCH:
                continue
        elif idle_s is not None and time.monotonic() - quiet_since >= idle_s:
            return
        time.sleep(poll_s)
