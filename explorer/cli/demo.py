"""``explorer demo``: the app at once, on the demo database, while the demo is prepared behind it; ``explorer app``:
the app on any database (a team's PostgreSQL, one's own file), nothing prepared.

The preparation (:mod:`explorer.demo`: the sample corpus, the map, a walk to a human checkpoint, dreams, a
consolidation) is a background job, so the first page answers in seconds and shows how far it got; once it is
all there, later runs go straight to the app. ``--no-app`` prepares in the foreground instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from explorer.cli.common import DbOption, progress_callback, runtime_for

REPO = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"  # the app serves this machine only unless told otherwise (--host)
LOOPBACKS = (LOOPBACK, "localhost", "::1")
PortOption = Annotated[int, typer.Option(help="Port for the app.")]
HostOption = Annotated[
    str,
    typer.Option(
        help="Address the app listens on: this machine only by default; any other (0.0.0.0: every interface) needs "
        "named tokens (EXPLORER_TOKENS)."
    ),
]


def _say(message: str) -> None:
    typer.echo(message, err=True)


def demo(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar="EXPLORER_DEMO_DB",
            help="Database for the demo (default: demo.duckdb in the user data folder).",
        ),
    ] = None,
    port: PortOption = 8501,
    host: HostOption = LOOPBACK,
    no_browser: Annotated[
        bool, typer.Option("--no-app", help="Prepare the database in the foreground only; do not start the app.")
    ] = False,
) -> None:
    """Open the app on the demo database, preparing the demo (once) in the background: the sample corpus, a walk
    over it, dreams and a consolidation, offline unless a model is configured. Beyond this machine only with
    named tokens (EXPLORER_TOKENS), as explorer app.
    """
    from platformdirs import user_data_dir

    from explorer import demo as sample
    from explorer import jobs
    from explorer.settings import shown_location

    if not no_browser:
        refuse_unnamed_network(host)  # before the demo is prepared, or even its database made
        refuse_taken_port(host, port)
    path = db or str(Path(user_data_dir("dream-explorer")) / "demo.duckdb")
    runtime = runtime_for(path)
    _say(f"demo database: {shown_location(path)}")
    if no_browser:
        with progress_callback("demo", "item") as progress:
            prepared = sample.prepare(runtime, progress=progress, say=_say)
        _say(f"demo ready ({prepared['seconds']} s): session {prepared['session_id']}")
        return
    if not sample.is_ready(runtime):
        running = jobs.list_jobs(runtime, status="active", kind=sample.JOB_KIND)
        job = running[0] if running else jobs.submit(runtime, sample.JOB_KIND)
        _say(f"preparing the demo in the background (job {job.id}); the app shows how far it got")
    _serve_app(str(path), port, host)


def app(port: PortOption = 8501, host: HostOption = LOOPBACK, db: DbOption = None) -> None:
    """Open the app on a database (--db, EXPLORER_DB, or the settings' default), as it is: a team's PostgreSQL,
    or one's own file (created, empty, when it does not exist yet). Beyond this machine only with named tokens
    (EXPLORER_TOKENS), so the app asks who you are and logs your reviews under your name.
    """
    refuse_unnamed_network(host)
    refuse_taken_port(host, port)
    runtime = runtime_for(db)
    runtime.db.schema_version()  # a database that cannot be opened is said here, in one line, not in the app
    _say(f"database: {runtime.db.location}")
    _serve_app(str(runtime.settings.db_path), port, host)


def refuse_unnamed_network(host: str) -> None:
    """Refuse to serve the app on ``host`` beyond this machine unless named tokens (``EXPLORER_TOKENS``) say who
    may use it: the app has no other door, and behind it are the settings, every job's Cancel button and every
    session. ``explorer app`` and ``explorer demo`` both ask here, before they open or prepare anything.
    """
    from explorer.settings import load_settings

    if host not in LOOPBACKS and not load_settings().tokens:
        raise typer.BadParameter(
            "the app would serve anyone who reaches this address: set EXPLORER_TOKENS to name who may use it",
            param_hint="--host",
        )


def refuse_taken_port(host: str, port: int) -> None:
    """Refuse, in one line, a port another program holds, before the app is announced: the app's server would
    only say so after the announcement, in its own words. Bound the way the server binds (``SO_REUSEADDR``, so a
    port its last run left in TIME_WAIT is free), then let go at once; port 0 (any free one) is always free.
    """
    import errno
    import socket

    if port == 0:
        return
    try:
        socket.create_server((host, port)).close()
    except OSError as exc:
        why = "in use" if exc.errno == errno.EADDRINUSE else f"not available ({os.strerror(exc.errno or 0).lower()})"
        raise typer.BadParameter(f"port {port} on {host} is {why}: choose another", param_hint="--port") from None


def _serve_app(database: str, port: int, host: str) -> None:
    """Run the app on ``database`` until it is stopped; its exit status is the command's. A SIGTERM to this
    command (a supervisor stopping it, ``kill``) is passed on to the app's server, which would otherwise outlive it
    and keep its port; Ctrl+C reaches both already, as they share the terminal's process group.
    """
    env = dict(os.environ, EXPLORER_DB=database)
    _say(f"Dream Explorer is at http://{'localhost' if host == LOOPBACK else host}:{port}  (Ctrl+C to stop)")
    server = subprocess.Popen(app_command(port, host=host), env=env)
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    try:
        raise typer.Exit(server.wait())
    except KeyboardInterrupt:
        server.terminate()
        raise typer.Exit(server.wait()) from None


def app_command(port: int, *extra: str, host: str = LOOPBACK) -> list[str]:
    """``streamlit run app.py`` headless on ``host``:``port`` (this machine only unless ``host`` says otherwise),
    without usage statistics, with no error details for viewers (the demo and the browser tests), and without
    watching the source files: the app is not being edited, and a virtualenv inside the watched folder overflowed
    the inotify queue (thousands of warnings an hour).
    """
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(REPO / "app.py"),
        "--server.headless",
        "true",
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--client.showErrorDetails",
        "none",  # wherever it is started from (.streamlit/config.toml is read from the working folder)
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        *extra,
    ]
