"""Where a server that a test or benchmark started listens (an app, an API, a NATS server).

Why read it back: the server is told to bind any free port (port 0) and the port is read from its own listening
socket. Choosing a free port first and handing it over left a moment in which another test worker's server could
take it, and a check that "something answers there" would then talk to that other server.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import psutil

LOOPBACK = "127.0.0.1"


def listening_port(process: subprocess.Popen[bytes], timeout_s: float, log: Path | None = None) -> int:
    """The port on 127.0.0.1 that ``process`` (or a process it started) listens on, once it does.

    Raises ``RuntimeError`` (with the end of ``log``, what the server printed) if it exits first or does not
    listen within ``timeout_s``.
    """
    server = f"the server (pid {process.pid})"
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{server} exited with {process.returncode}{_tail(log)}")
        ports = _listening(process.pid)
        if len(ports) == 1:
            return ports.pop()
        if len(ports) > 1:
            raise RuntimeError(f"{server} listens on several ports, {sorted(ports)}: which one is meant?")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server} did not listen on {LOOPBACK} within {timeout_s:.0f} s{_tail(log)}")
        time.sleep(0.1)


def _listening(pid: int) -> set[int]:
    """The loopback TCP ports the process and its descendants listen on (none if they have gone)."""
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return set()
    ports = set()
    for member in family:
        try:
            sockets = member.net_connections(kind="tcp4")
        except psutil.NoSuchProcess:
            continue
        ports |= {s.laddr.port for s in sockets if s.status == psutil.CONN_LISTEN and s.laddr.ip == LOOPBACK}
    return ports


def _tail(log: Path | None, chars: int = 4000) -> str:
    return f":\n{log.read_text(errors='replace')[-chars:]}" if log is not None and log.exists() else ""
