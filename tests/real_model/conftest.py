"""The real local model server (llama.cpp's, serving SmolLM2-135M-Instruct), started once for the test run.

Tests that need it are marked ``real_model``; where ``scripts/setup_local_model.sh`` could not install it they are
skipped with a reason that names what is missing and the command that installs it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from explorer.testing.llama_server import LlamaServer, missing


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A started server (its log in the run's temp folder), stopped after the last test that uses it."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    with LlamaServer(log=tmp_path_factory.mktemp("llama_server") / "server.log") as server:
        yield server
