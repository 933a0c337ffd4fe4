"""``explorer demo``: the sample corpus in a database, then the app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from platformdirs import user_data_dir

from explorer.cli.common import progress_callback
from explorer.reading.ingest import ingest_paths
from explorer.runtime import open_runtime
from explorer.settings import load_settings

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPO / "sample_data"


def demo(
    db: Annotated[Path | None, typer.Option("--db", envvar="EXPLORER_DEMO_DB",
                                            help="Database for the demo (default: demo.duckdb in the user data folder).")] = None,
    port: Annotated[int, typer.Option(help="Port for the app.")] = 8501,
    no_browser: Annotated[bool, typer.Option("--no-app", help="Prepare the database only; do not start the app.")] = False,
) -> None:
    """Ingest the sample corpus (once), then open the app on it, offline unless a model is configured."""
    path = db or Path(user_data_dir("dream-explorer")) / "demo.duckdb"
    runtime = open_runtime(load_settings().with_db(path))
    typer.echo(f"demo database: {path}", err=True)
    with progress_callback("sample corpus", "doc") as progress:
        report = ingest_paths(runtime, [SAMPLE_DATA], progress=progress)
    if report.documents_added:
        typer.echo(f"ingested {report.documents_added} documents, {report.chunks_added} chunks", err=True)
    if no_browser:
        return
    env = dict(os.environ, EXPLORER_DB=str(path))
    command = [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.headless", "true",
               "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    typer.echo(f"Dream Explorer is at http://localhost:{port}  (Ctrl+C to stop)", err=True)
    raise typer.Exit(subprocess.call(command, env=env))
