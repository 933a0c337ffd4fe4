"""Step leases: which process is taking a session's step (or a crystallization) now.

Why: a step reads, then asks models with the database free, then writes; two processes stepping one session at
once both asked their models and only one could keep its step. The calls of the other were paid for and never
charged to the session, so six clients stepping one priced session spent almost five times its budget. A step
now takes the session's lease before it asks anything, and a second stepper is refused at once, having spent
nothing; the lease goes with the step's write (or its failure).

A lease names its holder by process (``host:pid:start``, unique even when a pid is reused) so a holder that
died (killed, crashed) frees the session at once for anyone on the same host; one on another host that cannot
be checked from here frees it after :data:`LEASE_S`.
"""

from __future__ import annotations

import os
import socket
import uuid

import psutil

from explorer.store.database import Connection

LEASE_S = 900  # a step's lease is taken for this long at most: a holder on another host may have died silently
_TRIES = 3  # takes of a lease that met a giver's or another taker's write at the same moment


def identity(pid: int | None = None) -> str:
    """``host:pid:start``: names a process uniquely, even after its pid is reused by another."""
    process = psutil.Process(pid or os.getpid())
    return f"{socket.gethostname()}:{process.pid}:{process.create_time():.2f}"


def is_alive(holder: str) -> bool:
    """Whether the process a holder's identity names (:func:`identity`, perhaps with more after it) is still
    running. A process on another host cannot be checked from here and counts as alive.
    """
    host, _, rest = holder.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname():
        return True
    try:
        process = psutil.Process(int(pid))
        return f"{process.create_time():.2f}" == started.partition(":")[0] and process.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, ValueError):
        return False


def new_holder() -> str:
    """A holder for one lease: this process, and which of its leases."""
    return f"{identity()}:{uuid.uuid4().hex[:8]}"


def take(con: Connection, session_id: str, holder: str, lease_s: int = LEASE_S) -> str | None:
    """Take the session's lease for ``holder``; None when it got it, else who holds it now. Outside a transaction,
    each statement committing alone: two takers at once meet on the table's key and only one row is written.
    """
    for attempt in range(_TRIES):
        row = con.execute("SELECT holder, until < now() FROM step_leases WHERE session_id = ?", [session_id]).fetchone()
        if row is not None:
            if not row[1] and is_alive(str(row[0])):
                return str(row[0])
            con.execute("DELETE FROM step_leases WHERE session_id = ? AND holder = ?", [session_id, row[0]])
        try:
            con.execute(
                "INSERT INTO step_leases (session_id, holder, until) VALUES (?, ?, now() + CAST(? AS INTERVAL)) "
                "ON CONFLICT (session_id) DO NOTHING",
                [session_id, holder, f"{int(lease_s)} seconds"],
            )
        except Exception:  # noqa: BLE001 - another taker or giver at the same moment: each backend names it its way
            if attempt == _TRIES - 1:
                raise
            continue  # DuckDB: a lease given back while ours went in clashes with it until both are seen
        found = _holder(con, session_id)
        return None if found == holder else found or "another process"
    raise AssertionError("unreachable")  # pragma: no cover - the last attempt returns or raises


def _holder(con: Connection, session_id: str) -> str | None:
    row = con.execute("SELECT holder FROM step_leases WHERE session_id = ?", [session_id]).fetchone()
    return None if row is None else str(row[0])


def release(con: Connection, session_id: str, holder: str) -> None:
    """Give the lease back (only ``holder``'s: one that expired and was taken by another stays theirs)."""
    con.execute("DELETE FROM step_leases WHERE session_id = ? AND holder = ?", [session_id, holder])
