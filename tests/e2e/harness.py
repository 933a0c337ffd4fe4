"""Run the real app for a browser: ``streamlit run app.py`` on 127.0.0.1 and a port it chose, and
Debian's Chromium driven by Playwright (never ``playwright install``).

Used by the end-to-end tests and by ``python tests/e2e/harness.py`` (the README screenshots).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from explorer import jobs
from explorer.cli.demo import app_command
from explorer.jobs.worker import is_alive
from explorer.runtime import open_runtime
from explorer.settings import DEFAULT_EMBEDDING_MODEL, Settings
from explorer.testing.ports import listening_port

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The browser tests' server embeds with the default model, whatever the other tests use, on one thread: it shares
# two cores with the test process.
TEST_ENV = {"EXPLORER_EMBEDDING_MODEL": DEFAULT_EMBEDDING_MODEL, "OMP_NUM_THREADS": "1"}
PAGES = ("corpus", "sessions", "map", "crystals", "resonances", "trace", "dreams", "consolidation", "settings")


@contextmanager
def streamlit_server(
    db: Path,
    *,
    log: Path | None = None,
    timeout_s: float = 60.0,
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """The app on ``db`` (with ``env`` added to this process's environment); yields its URL and always stops the
    server (and its children).
    """
    env = dict(os.environ, **(env or {}), EXPLORER_DB=str(db), PYTHONUNBUFFERED="1")
    command = app_command(0)  # any free port: read back once it listens
    with contextlib.ExitStack() as files:  # the log stays open as long as the server writes to it
        out = files.enter_context(open(log, "wb")) if log else subprocess.DEVNULL
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            url = f"http://127.0.0.1:{listening_port(process, timeout_s, log)}"
            wait_until_healthy(process, url, timeout_s, f"; see {log}" if log else "")
            yield url
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        if log:
            out.close()


def wait_until_healthy(process: subprocess.Popen, url: str, timeout_s: float, hint: str = "") -> None:
    """Wait until the app ``process`` serves ``url``; an error if it exits or stays silent ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the app exited with status {process.returncode}{hint}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the app did not answer on {url} within {timeout_s:.0f} s{hint}")
        time.sleep(0.1)


@contextmanager
def explorer_app(
    db: Path, command: str = "app", *, env: Mapping[str, str] | None = None, timeout_s: float = 90.0
) -> Iterator[str]:
    """``explorer app`` (or ``explorer demo``, which prepares the demo in a background job) on ``db``; yields the
    app's URL once it answers and always stops the app and the database's workers, which outlive the command that
    started them.
    """
    process = subprocess.Popen(  # on any free port, read back from the app it starts
        [sys.executable, "-m", "explorer", command, "--db", str(db), "--port", "0"],
        cwd=REPO,
        env=dict(os.environ, **(env or {}), PYTHONUNBUFFERED="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{listening_port(process, timeout_s)}"
        wait_until_healthy(process, url, timeout_s)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        if db.exists():
            runtime = open_runtime(replace(Settings(), db_path=db))
            alive = {
                (job.worker, job.worker_pid) for job in jobs.list_jobs(runtime) if job.worker and is_alive(job.worker)
            }
            workers = {worker for worker, _ in alive}
            for _, pid in alive:
                if pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while any(is_alive(worker) for worker in workers) and time.monotonic() < deadline:
                time.sleep(0.1)  # it writes its log and frees its lock as it goes: let it, before the folder goes


@contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator:
    """A Playwright page in Debian's Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
            yield context.new_page()
        finally:
            browser.close()


def settle(page, timeout_ms: float = 120_000) -> None:
    """Wait until the app has finished running its script.

    The app's own run state is the signal: its "running" widget appears only after half a second, so a script
    still running on a loaded machine looked finished to a wait on the widget alone. ``initial`` (no run yet)
    is not finished either.
    """
    page.wait_for_timeout(300)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout_ms)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=timeout_ms)
    page.wait_for_timeout(300)


def open_page(page, url: str, name: str, timeout_ms: float = 120_000) -> None:
    page.goto(url if name == "corpus" else f"{url}/{name}")
    page.wait_for_selector("h1", timeout=timeout_ms)
    settle(page, timeout_ms)


def screenshots(db: Path, folder: Path, *, width: int = 1400, height: int = 1800) -> list[Path]:
    """A PNG of every page (first session selected) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with streamlit_server(db, log=folder / "streamlit.log") as url, chromium(width, height) as page:
        for name in PAGES:
            open_page(page, url, name)
            # what the screenshot shows: charts and tables in a tab not shown are never drawn
            if page.locator('[data-testid="stPlotlyChart"]:visible').count():
                page.wait_for_selector('[data-testid="stPlotlyChart"]:visible .main-svg', timeout=60_000)
            if page.locator('[data-testid="stDataFrame"]:visible').count():
                page.wait_for_selector('[data-testid="stDataFrame"]:visible canvas', timeout=60_000)
            page.wait_for_timeout(1500)  # WebGL points and fonts
            path = folder / f"{name}.png"
            page.screenshot(path=str(path))
            written.append(path)
    (folder / "streamlit.log").unlink(missing_ok=True)
    return written


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Screenshots of every page of the app on a database.")
    parser.add_argument("db", type=Path)
    parser.add_argument("--out", type=Path, default=REPO / "assets" / "screenshots")
    args = parser.parse_args()
    for written in screenshots(args.db, args.out):
        print(written)
