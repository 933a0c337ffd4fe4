"""The remote (litellm) embedder runs each attempt to the whole-request deadline, retries as model calls do, is
interrupted by the gateway's cancel, and gives up with the engine's own error, so an ingest ends.

Against the scripted server's ``/v1/embeddings`` (the hashing embedder's vectors). Calls that could hang run in a
thread, or a process, the test waits for with a bound, so a hang fails the test instead of holding it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from explorer.providers.deadline import CallCancelled
from explorer.providers.embeddings import EmbeddingError, HashingEmbedder, LiteLLMEmbedder
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.store import corpus
from explorer.testing.model_server import EMBEDDINGS, SERVED_EMBEDDING_MODEL, ModelServer, Reply, Request
from tests.providers.test_deadlines import in_thread, wait_until

TRICKLE = Reply(trickle_s=0.05)  # 384 floats trickled: about five minutes to send in full
TEXTS = ["Cats purr when they are content.", "Dogs wag their tails."]
NOTE = "Cats purr when they are content, and a purring cat is a content one.\n\nDogs wag their tails when glad.\n"


def after_warm_up(reply: Reply) -> Callable[[Request], Reply | None]:
    """A script answering the first embedding request at once and ``reply`` to every later one: litellm's first
    request sets itself up lazily (seconds on a loaded machine), which is this process's doing, not the server's,
    and would eat a short deadline.
    """
    seen: list[Request] = []

    def script(request: Request) -> Reply | None:
        if request.route != EMBEDDINGS:
            return None
        seen.append(request)
        return reply if len(seen) > 1 else None

    return script


def warmed(server: ModelServer, **options: float) -> LiteLLMEmbedder:
    """An embedder asking ``server``, its first request (the warm-up) made."""
    embedder = LiteLLMEmbedder(SERVED_EMBEDDING_MODEL, server.url, **options)  # type: ignore[arg-type]
    embedder.embed(["warm up"])
    return embedder


def embedding_requests(server: ModelServer) -> list[Request]:
    return [r for r in server.requests if r.route == EMBEDDINGS]


def served_runtime(server: ModelServer, db: Path, **settings: float) -> Runtime:
    """A runtime embedding (and asking its models) through ``server``, as the settings name them."""
    overrides = {"embedding_model": SERVED_EMBEDDING_MODEL, "api_base": server.url, **settings}
    return open_runtime(replace(Settings(), db_path=db, **overrides))  # type: ignore[arg-type]


def test_a_served_embedder_gives_the_servers_vectors_in_order(model_server) -> None:
    server = model_server()
    vectors = LiteLLMEmbedder(SERVED_EMBEDDING_MODEL, server.url, batch_size=1).embed(TEXTS)
    np.testing.assert_allclose(vectors, HashingEmbedder().embed(TEXTS), atol=1e-6)
    assert [r.inputs for r in embedding_requests(server)] == [[text] for text in TEXTS]


def test_a_trickling_embedding_times_out_at_the_deadline_of_each_attempt(model_server) -> None:
    server = model_server(script=after_warm_up(TRICKLE))
    embedder = warmed(server, timeout_s=1.0, retries=1)
    started = time.perf_counter()
    thread, outcome = in_thread(lambda: embedder.embed(TEXTS))
    thread.join(timeout=1.0 * 2 + 8.0)  # timeout × (retries + 1), and generous slack for a loaded machine
    assert not thread.is_alive(), "the embedding outlived its deadline"
    error = outcome.get("raised")
    assert isinstance(error, EmbeddingError)
    assert str(error) == f"embedding model {SERVED_EMBEDDING_MODEL} timed out after 1 s"
    assert len(embedding_requests(server)) == 1 + 2
    assert time.perf_counter() - started >= 2.0  # each attempt had its whole second
    wait_until(lambda: server.in_flight == 0, timeout_s=5)  # the abandoned requests' connections were closed


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(status=500), "scripted status 500"),
        (Reply(body=b"not json"), ""),
        (Reply(body=b'{"object": "list", "data": []}'), "0 vectors for 2 texts"),
        (Reply(body=b'{"data": [{"embedding": [1, 2]}, {"embedding": [1]}]}'), "vectors of different widths"),
    ],
    ids=["status-500", "not-json", "no-vectors", "ragged"],
)
def test_a_failing_embedding_is_asked_again_then_given_up(model_server, reply: Reply, reason: str) -> None:
    server = model_server(script=after_warm_up(reply))
    embedder = warmed(server, retries=2)
    with pytest.raises(EmbeddingError, match=f"^embedding model {SERVED_EMBEDDING_MODEL} failed: .*{reason}"):
        embedder.embed(TEXTS)
    assert len(embedding_requests(server)) == 1 + 3


def test_an_embedding_that_fails_once_is_answered_by_the_next_attempt(model_server) -> None:
    server = model_server(script=[Reply(), Reply(status=500)])
    embedder = warmed(server, retries=1)
    np.testing.assert_allclose(embedder.embed(TEXTS), HashingEmbedder().embed(TEXTS), atol=1e-6)
    assert len(embedding_requests(server)) == 1 + 2


def test_the_gateways_cancel_interrupts_an_embedding_in_flight(model_server, tmp_path: Path) -> None:
    server = model_server(script=after_warm_up(TRICKLE))
    runtime = served_runtime(server, tmp_path / "explorer.duckdb", timeout_s=600.0)  # its dimension probe warms up
    thread, outcome = in_thread(lambda: runtime.embedder.embed(TEXTS))
    wait_until(lambda: server.in_flight == 1)
    runtime.gateway.cancel()
    thread.join(timeout=3.0)
    assert not thread.is_alive(), "the cancel did not interrupt the embedding"
    assert isinstance(outcome.get("raised"), CallCancelled)
    wait_until(lambda: server.in_flight == 0, timeout_s=5)


def test_an_ingest_through_a_served_embedder_works_end_to_end(model_server, tmp_path: Path) -> None:
    server = model_server()
    (tmp_path / "note.txt").write_text(NOTE, encoding="utf-8")
    runtime = served_runtime(server, tmp_path / "explorer.duckdb")
    report = ingest_paths(runtime, [tmp_path / "note.txt"])
    assert report.documents_added == 1 and report.chunks_added > 0 and not report.errors, report.errors
    with runtime.db.connect() as con:
        nodes = corpus.list_nodes(con, with_vectors=True)
    chunk = next(node for node in nodes if node.type == "raw_chunk")
    assert runtime.db.embedding_model == SERVED_EMBEDDING_MODEL
    np.testing.assert_allclose(chunk.embedding, HashingEmbedder().embed([chunk.text])[0], atol=1e-6)
    assert any(chunk.text in r.inputs for r in embedding_requests(server))


def test_an_ingest_through_a_trickling_embedder_ends_with_one_clear_line(model_server, tmp_path: Path) -> None:
    # once, with EXPLORER_TIMEOUT=2 EXPLORER_RETRIES=0, ingest hung as long as the server trickled.
    server: ModelServer = model_server(script=after_warm_up(TRICKLE))  # the warm-up: the dimension probe
    (tmp_path / "note.txt").write_text(NOTE, encoding="utf-8")
    env = {**os.environ, **server.embedding_env(), "EXPLORER_TIMEOUT": "2", "EXPLORER_RETRIES": "1"}
    command = [sys.executable, "-m", "explorer", "ingest", str(tmp_path / "note.txt"), "--db", str(tmp_path / "db")]
    try:
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail("the ingest outlived the deadlines of its embedding requests")
    ended = time.time()
    assert out.returncode == 1, out.stderr
    *progress, last = out.stderr.strip().splitlines()  # a run past 2 s says its phases first, then the one error
    assert last == f"error: embedding model {SERVED_EMBEDDING_MODEL} timed out after 2 s"
    assert all(line.startswith("reading") for line in progress), out.stderr
    first_trickled = embedding_requests(server)[1].received_at
    assert ended - first_trickled < 2 * 2 + 0.5 + 10  # timeout × (retries + 1) + backoff, and slack for the exit
    assert len(embedding_requests(server)) == 1 + 2
