"""Whose turn it is to hold a database file: a queue across processes, served in the order they asked.

Why: DuckDB lets one process at a time attach a file read-write, and a process that meets its lock can only try
again later. Trying again at random serves whoever happens to try at the right moment: a process that lets the file
go and takes it again at once (a walk's next step, the API under load) wins nearly every time, and the CLI beside it
waited up to 16 s or failed busy (measured with a walk, the API and the CLI on one file). Nor would one blocking
``flock`` on a file do: Linux wakes every waiter when it is let go and nothing orders them, so the process that let
go, still running, can take it again before they wake.

How: a ticket lock made of open-file-description locks (Linux's ``F_OFD_SETLK``: one per open descriptor, so
each turn has its own) on a sidecar file, ``<file>.queue``. Its first 8 bytes count the tickets given out; taking
one (under a lock of byte 0, held for microseconds) also locks the ticket's own byte, and its holder then waits, in
the kernel, until the byte of the ticket before is let go. Ending a turn closes the descriptor, which lets go of
the ticket's byte and so hands the file to the next in line. The kernel lets go of a dead process's locks, so a
process killed while it holds or awaits a turn stalls nobody; a waiter that gives up leaves a thread waiting in
its place, which passes the turn straight on, so those behind it are not stalled by the gap either.

Where open-file-description locks are missing (not Linux), :func:`take` grants every turn at once and DuckDB's
own lock, retried, is all there is, as before.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import threading
from pathlib import Path

_QUEUED = hasattr(fcntl, "F_OFD_SETLKW")
_COUNTER = 0  # bytes 0-7 hold the next ticket; a lock of byte 0 guards them
_FIRST_SLOT = 8  # ticket t's own byte
_open: set[int] = set()  # descriptors of this process's turns (held, awaited, or passed on by a waiter that left)


def _region(kind: int, start: int) -> bytes:
    """A ``struct flock`` (as 64-bit Linux lays it out) for one byte, ``l_pid`` 0 as open-file-description locks
    require.
    """
    return struct.pack("@hhqqi4x", kind, os.SEEK_SET, start, 1, 0)


def _lock(fd: int, start: int, *, wait: bool) -> bool:
    """Lock byte ``start`` of the sidecar for this descriptor: blocking, or whether it was free."""
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLKW if wait else fcntl.F_OFD_SETLK, _region(fcntl.F_WRLCK, start))
    except OSError as exc:
        if wait or exc.errno not in (errno.EACCES, errno.EAGAIN):
            raise
        return False
    return True


def _unlock(fd: int, start: int) -> None:
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _region(fcntl.F_UNLCK, start))


def _close(fd: int) -> None:
    """Let go of everything the descriptor locks: the turn passes to the next ticket."""
    _open.discard(fd)
    os.close(fd)


def _forget_inherited() -> None:
    """A forked child shares its parent's descriptors, and a lock lasts while any copy is open: close the child's
    copies, or the parent's turn would outlive the parent letting go of it.
    """
    for fd in list(_open):
        _close(fd)


os.register_at_fork(after_in_child=_forget_inherited)


class Turn:
    """One process's turn at a file: granted by :func:`take`, ended by :meth:`release`."""

    def __init__(self, fd: int | None, ticket: int) -> None:
        self._fd, self.ticket = fd, ticket

    def others_waiting(self) -> bool:
        """Whether another turn has been asked for since this one (it waits for this one to end)."""
        if self._fd is None:
            return False
        _lock(self._fd, _COUNTER, wait=True)
        try:
            return _read_counter(self._fd) > self.ticket + 1
        finally:
            _unlock(self._fd, _COUNTER)

    def release(self) -> None:
        """End the turn: the next process in line gets the file."""
        if self._fd is not None:
            _close(self._fd)
            self._fd = None


def _read_counter(fd: int) -> int:
    raw = os.pread(fd, 8, _COUNTER)
    return int.from_bytes(raw, "little") if len(raw) == 8 else 0


def take(path: Path, timeout: float) -> Turn | None:
    """Queue for ``path`` (the database file); the turn once every turn asked for before has ended, or ``None`` if
    that took more than ``timeout`` seconds (the place in the queue is then passed on, not kept).
    """
    if not _QUEUED:
        return Turn(None, 0)
    fd = os.open(f"{path}.queue", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    _open.add(fd)
    try:
        _lock(fd, _COUNTER, wait=True)
        try:
            ticket = _read_counter(fd)
            os.pwrite(fd, (ticket + 1).to_bytes(8, "little"), _COUNTER)
            _lock(fd, _FIRST_SLOT + ticket, wait=False)  # nobody else was given this ticket: it is free
        finally:
            _unlock(fd, _COUNTER)
    except BaseException:
        _close(fd)
        raise
    if ticket == 0 or _await(fd, _FIRST_SLOT + ticket - 1, timeout):
        return Turn(fd, ticket)
    return None


def _await(fd: int, before: int, timeout: float) -> bool:
    """Wait until the ticket before lets go of its byte (``before``), for at most ``timeout`` seconds.

    The kernel's wait cannot time out, so a thread does it; if the caller gives up first, that thread, once the
    byte is let go, ends this turn at once (closes ``fd``) so that the next ticket's turn comes.
    """
    if _lock(fd, before, wait=False):
        _unlock(fd, before)
        return True
    gate = threading.Lock()
    granted = threading.Event()
    given_up = False

    def wait() -> None:
        with contextlib.suppress(OSError):  # the lock call failing leaves DuckDB's own lock to keep order
            _lock(fd, before, wait=True)
            _unlock(fd, before)
        with gate:
            if given_up:
                _close(fd)
            else:
                granted.set()

    threading.Thread(target=wait, name="explorer-turn", daemon=True).start()
    if granted.wait(timeout):
        return True
    with gate:
        given_up = not granted.is_set()
    return not given_up
