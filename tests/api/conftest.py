"""A real ``explorer serve`` process on a 127.0.0.1 port it chose, over a copy of the small corpus, and HTTP clients.

One server serves a whole test module (each test makes its own sessions), since starting one costs seconds;
tests of the server's start (auth, refusals) start their own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from explorer.testing.ports import listening_port

START_WAIT_S = 60.0  # a bound on waiting for the server to listen, not a measure of anything


@dataclass
class Server:
    """A started ``explorer serve`` process and where it listens."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=f"{self.url}/api/v1", headers=headers, timeout=120)

    def stop(self) -> None:
        """End the server and what it started (a job worker), by their ids."""
        with contextlib.suppress(psutil.NoSuchProcess):
            parent = psutil.Process(self.process.pid)
            family = [parent, *parent.children(recursive=True)]
            for process in family:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.terminate()
            for process in psutil.wait_procs(family, timeout=15)[1]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
        self.process.wait()


def run_serve(db: Path | str, *args: str, env: dict[str, str] | None = None, log: Path) -> subprocess.Popen[bytes]:
    """``explorer serve`` on ``db`` (given as EXPLORER_DB, as a user would set it), its output into ``log``."""
    environ = {**os.environ, "EXPLORER_DB": str(db)}
    environ.pop("EXPLORER_API_TOKEN", None)  # only the tests that mean to give one do
    environ.update(env or {})
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "explorer", "serve", *args], env=environ, stdout=out, stderr=subprocess.STDOUT
        )


def start_serving(db: Path | str, *args: str, env: dict[str, str] | None = None, log: Path) -> Server:
    """``explorer serve`` on a port the system chooses, read back from the process's own listening socket (so
    the tests talk to this server and no other), once it listens: uvicorn listens after its start-up, ready.
    """
    process = run_serve(db, "--port", "0", *args, env=env, log=log)
    try:
        port = listening_port(process, START_WAIT_S, log)
    except RuntimeError as exc:
        process.terminate()
        process.wait()
        pytest.fail(str(exc))
    return Server(process, f"http://127.0.0.1:{port}", log)


StartServer = Callable[..., Server]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """``start_server(db, *args, env=None)`` → a listening server (stopped after the test)."""
    started: list[Server] = []

    def start(db: Path | str, *args: str, env: dict[str, str] | None = None) -> Server:
        server = start_serving(db, *args, env=env, log=tmp_path / f"serve-{len(started)}.log")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def module_corpus(
    corpus_template: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, on_postgres: bool
) -> Iterator[Path | str]:
    """A copy of the small corpus (``corpus_template``, as ``corpus_copy`` copies it) for one module's server."""
    if on_postgres:
        from explorer.store.copying import copy_database

        postgres = request.getfixturevalue("postgres_server")
        url = postgres.new_database()
        copy_database(corpus_template, url)
        yield url
        postgres.drop_database(url)
        return
    target = tmp_path_factory.mktemp("api") / "corpus.duckdb"
    shutil.copy(corpus_template, target)
    yield target


@pytest.fixture(scope="module")
def server(module_corpus: Path | str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server, without a token on 127.0.0.1, over the module's copy of the corpus."""
    started = start_serving(module_corpus, log=tmp_path_factory.mktemp("api-log") / "serve.log")
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def api(server: Server) -> Iterator[httpx.Client]:
    """An HTTP client on the module's server, at /api/v1."""
    with server.client() as client:
        yield client


SEED = {"seed_concept": "unicode strings and text", "random_seed": 1, "human_checkpoint_frequency": 0}


def error_of(response: httpx.Response, status: int) -> dict[str, Any]:
    """The error body of a response that must have this status, in the API's one shape."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["message"], body
    return body["error"]


def new_session(api: httpx.Client, **fields: Any) -> dict[str, Any]:
    response = api.post("/wander/sessions", json={**SEED, **fields})
    assert response.status_code == 201, response.text
    return response.json()
