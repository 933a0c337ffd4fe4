"""``explorer demo``: the sample corpus in a database, a prepared walk over it, then the app.

The first run ingests the sample corpus, fits the map, walks a seeded session to a
human checkpoint (resonances formed, crystals waiting for review), dreams a
little and consolidates what the walk and the night did, so a first-time visitor
sees every page with something on it. Each part is
done once: later runs find it in the database and go straight to the app.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from platformdirs import user_data_dir

from explorer.cli.common import progress_callback, runtime_for
from explorer.consolidation import service as consolidation
from explorer.dreaming import service as dreaming
from explorer.dreaming.service import DreamingError
from explorer.projection import place_new, update_projection
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime
from explorer.views import latest_consolidation
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPO / "sample_data"
DEMO_SESSION = SessionConfig(
    name="Demo: a language that changes and stays itself",
    seed_concept="how a programming language changes over the years while keeping its character",
    random_seed=7,
    human_checkpoint_frequency=18,  # the walk stops at step 18 and waits for a person
)
DEMO_DREAMS = 3
LOOPBACK = "127.0.0.1"  # the app serves this machine only unless told otherwise (--host)


def _say(message: str) -> None:
    typer.echo(message, err=True)


def prepare_demo(runtime: Runtime) -> dict[str, object]:
    """Fit the map, walk the demo session to its checkpoint, dream, consolidate; skip whatever is already there."""
    started = time.perf_counter()
    _say("fitting the map (the first time on a machine, UMAP compiles for a minute or so)…")
    fitted = update_projection(runtime)
    existing = [s for s in wander.list_sessions(runtime, limit=500) if s.name == DEMO_SESSION.name]
    session = existing[0] if existing else wander.create_session(runtime, DEMO_SESSION)
    if not existing:
        with progress_callback("demo walk", "step") as progress:
            result = wander.run(runtime, session.id, DEMO_SESSION.human_checkpoint_frequency, progress=progress)
        _say(
            f"walked {result.steps_completed} steps, {result.crystals_formed} crystal(s) formed"
            + (f"; {result.stopped_reason}" if result.stopped_reason else "")
        )
        waiting = [c for c in wander.list_crystals(runtime, session_id=session.id) if not c.human_approved]
        if not waiting:
            attempt = wander.crystallize(runtime, session.id)
            _say("crystallized at the last locus" if attempt.crystal else f"no crystal yet: {attempt.reason}")
    if not dreaming.recent_dreams(runtime, limit=1):
        try:
            with progress_callback("dreaming", "dream") as progress:
                report = dreaming.run_rem(runtime, dreams=DEMO_DREAMS, seed=7, progress=progress)
            _say(f"dreamt {report.dreams_stored} dream(s)")
        except DreamingError as exc:
            _say(f"no dreams: {exc}")
    if latest_consolidation(runtime) is None:
        with progress_callback("consolidating", "phase") as progress:
            ran = consolidation.run_consolidation(runtime, "all", progress=progress).to_json()
        _say(f"consolidated: {ran['status']}, {len(ran.get('patterns', []))} pattern(s)")
    place_new(runtime)
    return {"session_id": session.id, "fitted": fitted.fitted, "seconds": round(time.perf_counter() - started, 1)}


def demo(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            envvar="EXPLORER_DEMO_DB",
            help="Database for the demo (default: demo.duckdb in the user data folder).",
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="Port for the app.")] = 8501,
    host: Annotated[
        str,
        typer.Option(help="Address the app listens on: this machine only by default; 0.0.0.0 serves every interface."),
    ] = LOOPBACK,
    no_browser: Annotated[
        bool, typer.Option("--no-app", help="Prepare the database only; do not start the app.")
    ] = False,
) -> None:
    """Ingest the sample corpus and prepare a walk over it (once), then open the app, offline unless a model is
    configured.
    """
    path = db or Path(user_data_dir("dream-explorer")) / "demo.duckdb"
    runtime = runtime_for(path)
    _say(f"demo database: {path}")
    with progress_callback("sample corpus", "doc") as progress:
        report = ingest_paths(runtime, [SAMPLE_DATA], progress=progress)
    if report.documents_added:
        _say(f"ingested {report.documents_added} documents, {report.chunks_added} chunks")
    prepared = prepare_demo(runtime)
    _say(f"demo ready ({prepared['seconds']} s): session {prepared['session_id']}")
    runtime.calls.flush()
    if no_browser:
        return
    env = dict(os.environ, EXPLORER_DB=str(path))
    _say(f"Dream Explorer is at http://{'localhost' if host == LOOPBACK else host}:{port}  (Ctrl+C to stop)")
    raise typer.Exit(subprocess.call(app_command(port, host=host), env=env))


def app_command(port: int, *extra: str, host: str = LOOPBACK) -> list[str]:
    """``streamlit run app.py`` headless on ``host``:``port`` (this machine only unless ``host`` says otherwise),
    without usage statistics and with no error details for viewers (the demo and the browser tests).
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
        *extra,
    ]
