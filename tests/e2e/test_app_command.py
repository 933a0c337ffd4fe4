"""How the app is started (``explorer demo`` and the browser tests share ``app_command``): on this machine only
unless a host is given, and with no error details for viewers, wherever it is started from.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import typer
from streamlit.config import ShowErrorDetailsConfigOptions

import explorer.cli
from explorer.cli.demo import app_command

REPO = Path(__file__).resolve().parents[2]


def option(command: list[str], name: str) -> str:
    """The value given to ``name`` on a command line (it must be given once)."""
    assert command.count(name) == 1, command
    return command[command.index(name) + 1]


def test_the_app_listens_on_loopback_unless_a_host_is_given() -> None:
    assert option(app_command(8501), "--server.address") == "127.0.0.1"
    wide = app_command(8502, "--server.maxUploadSize", "50", host="0.0.0.0")
    assert option(wide, "--server.address") == "0.0.0.0" and option(wide, "--server.port") == "8502"
    assert option(wide, "--server.maxUploadSize") == "50"


def test_the_app_watches_no_files() -> None:
    """The app is not being edited where people use it: a watcher over a folder that holds a virtualenv overflowed
    the inotify queue (thousands of warnings an hour under `explorer demo`).
    """
    command = app_command(8501)
    assert option(command, "--server.fileWatcherType") == "none" and option(command, "--server.runOnSave") == "false"


def test_explorer_demo_takes_a_host_and_defaults_to_loopback() -> None:
    demo = typer.main.get_command(explorer.cli.app).commands["demo"]  # type: ignore[attr-defined]
    (host,) = [p for p in demo.params if p.name == "host"]
    assert host.opts == ["--host"] and host.default == "127.0.0.1"


def test_viewers_never_see_error_details() -> None:
    hidden = ShowErrorDetailsConfigOptions.NONE.value
    assert option(app_command(8501), "--client.showErrorDetails") == hidden
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["showErrorDetails"] == hidden  # `streamlit run app.py` from the repository
