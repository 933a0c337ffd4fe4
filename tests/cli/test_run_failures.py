"""A run that did none of what was asked ends non-zero: ``dream rem`` whose every dream failed (a model server
answering 500) exits 1 with one line on stderr naming the first failure, and ``--json`` still prints the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from explorer.cli import app
from explorer.testing.model_server import Reply


def test_rem_whose_every_dream_failed_exits_1(corpus_copy: Path, model_server: Callable[..., Any]) -> None:
    server = model_server(script=lambda request: Reply(status=500))
    env = {"EXPLORER_DB": str(corpus_copy), "EXPLORER_RETRIES": "0"}
    out = CliRunner().invoke(app, ["dream", "rem", "--dreams", "2", "--seed", "1", "--json"], env=env)
    assert server.requests  # the dreams were asked of the model, which refused them
    assert out.exit_code == 1, out.output
    report = json.loads(out.stdout)
    assert (report["dreams_stored"], report["dreams_dropped"], report["failures"], report["model_calls"]) == (
        0,
        0,
        2,
        2,
    )
    (line,) = out.stderr.splitlines()
    assert line == f"error: every dream failed (2 of 2): {report['errors'][0]}"
    assert "500" in line
