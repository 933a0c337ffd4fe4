"""A small OpenAI-compatible model server on 127.0.0.1, for tests and benchmarks.

Why a real server: the product reaches real models through litellm over HTTP, and
what breaks with them (latency, timeouts, 429s, malformed or enormous answers)
only shows on that path. Point the product at it with
``EXPLORER_LOCAL_MODEL=openai/<name>`` and ``EXPLORER_API_BASE=<server.url>``.

By default it answers each prompt the way the offline provider would, read back
from the rendered prompt, so a walk or a dream through it behaves like a real
one. A script overrides that per request: a fixed reply, a status code, a
delay, or a function of the request.

It embeds too (``/v1/embeddings``, for ``EXPLORER_EMBEDDING_MODEL=openai/<name>``): the hashing embedder's
vectors of the texts, so the same text gets the same vector in every process, under the same scripts.
"""

from __future__ import annotations

import json
import re
import string
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from explorer.offline import OfflineProvider, load_answers
from explorer.offline.kit import OfflineKit
from explorer.prompts import REGISTRY, Prompt
from explorer.providers.embeddings import HashingEmbedder

SERVED_MODEL = "openai/test-model"  # litellm's OpenAI-compatible route, to whatever api_base says
SERVED_EMBEDDING_MODEL = "openai/test-embedding"
CHAT, EMBEDDINGS = "chat/completions", "embeddings"  # the routes served, under /v1/


@dataclass(frozen=True)
class Reply:
    """What the server does with one request: answer ``content`` (``None``: the offline answer) with
    ``status`` after ``delay_s`` seconds on top of the server's latency, and not before ``release`` is set when
    one is given (a test holds the answer for as long as it looks at what the product does meanwhile).
    ``error`` is the message a status other than 200 carries (default: "scripted status <status>").

    ``trickle_s`` > 0 sends the headers at once, then the body one byte every ``trickle_s`` seconds (a server
    that is never silent long enough for a per-read timeout, yet never done); ``usage_factor`` multiplies the
    token counts a completion reports (a server that bills more than it answered); ``body`` is sent as it is in
    place of the answer (a malformed one: not JSON, or not the shape the route answers with).
    """

    content: str | None = None
    status: int = 200
    delay_s: float = 0.0
    release: threading.Event | None = None
    trickle_s: float = 0.0
    usage_factor: float = 1.0
    body: bytes | None = None
    error: str | None = None


@dataclass(frozen=True)
class Request:
    """One request as the server received it: a chat completion's messages and the prompt kind they were
    recognised as, the ``response_format`` it asked for (``None``: none), or (``route`` :data:`EMBEDDINGS`)
    the texts to embed, in ``inputs``.
    """

    model: str
    messages: list[dict[str, str]]
    max_tokens: int | None
    kind: str | None
    fields: dict[str, str] | None
    received_at: float
    route: str = CHAT
    inputs: list[str] = field(default_factory=list)
    response_format: dict[str, Any] | None = None

    @property
    def form(self) -> str | None:
        """The response_format's type (``json_schema``, ``json_object``), ``None`` when none was asked."""
        return None if self.response_format is None else self.response_format.get("type")

    @classmethod
    def read(cls, route: str, body: dict[str, Any]) -> Request:
        """The request a route's JSON body makes."""
        if route == EMBEDDINGS:
            texts = body.get("input") or []
            inputs = [texts] if isinstance(texts, str) else [str(text) for text in texts]
            return cls(body.get("model", ""), [], None, None, None, time.time(), route, inputs)
        messages = body.get("messages") or []
        kind, fields = recognise(messages)
        return cls(
            body.get("model", ""),
            messages,
            body.get("max_tokens"),
            kind,
            fields,
            time.time(),
            response_format=body.get("response_format"),
        )


Script = Callable[[Request], Reply | None]

# What llama.cpp's server answered (with a 500) to an OpenAI ``json_schema`` response_format before it learnt that
# form (ggml-org/llama.cpp#9527; forks such as ik_llama.cpp still did in 2025). llama-cpp-python's server, whose
# request model knows only "text" and "json_object" (with an optional "schema"), says "Input should be 'text' or
# 'json_object'".
LLAMA_CPP_REJECTION = 'response_format type must be one of "text" or "json_object", but got: json_schema'
# llama-cpp-python's server's refusal, as it words it (its pydantic error, then where it was raised).
LLAMA_CPP_PYTHON_REJECTION = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
    '  File "llama_cpp/server/app.py", line 376, in create_chat_completion\n    POST /v1/chat/completions'
)


def rejecting(*forms: str, status: int = 500, error: str = LLAMA_CPP_REJECTION) -> Script:
    """A script that refuses every request asking for one of the response_format ``forms`` (types such as
    ``json_schema``) with ``status`` and ``error``, as llama.cpp's server refuses ``json_schema``, and answers
    the others by default.
    """
    return lambda request: Reply(status=status, error=error) if request.form in forms else None


@dataclass
class ModelServer:
    """Serve ``/v1/chat/completions`` and ``/v1/embeddings`` until closed; use as a context manager.

    ``latency_s`` delays every answer; ``script`` is a list of replies used in
    order (then the default) or a function returning a reply (``None``: the default).
    """

    latency_s: float = 0.0
    script: Script | Iterable[Reply] | None = None
    requests: list[Request] = field(default_factory=list)
    peak_in_flight: int = 0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _queue: list[Reply] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    def __post_init__(self) -> None:
        if self.script is not None and not callable(self.script):
            self._queue = list(self.script)
        self._embedder = HashingEmbedder()
        self._offline = OfflineProvider(OfflineKit(self._embedder))
        self._offline_lock = threading.Lock()

    @property
    def url(self) -> str:
        """The API base to hand the product (``EXPLORER_API_BASE``)."""
        assert self._server is not None, "the server is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def env(self, model: str = SERVED_MODEL) -> dict[str, str]:
        """Environment variables that point the product (and litellm's OpenAI client) at this server."""
        return {"EXPLORER_LOCAL_MODEL": model, "EXPLORER_API_BASE": self.url, "OPENAI_API_KEY": "sk-test"}

    def embedding_env(self, model: str = SERVED_EMBEDDING_MODEL) -> dict[str, str]:
        """Environment variables that have the product embed through this server."""
        return {"EXPLORER_EMBEDDING_MODEL": model, "EXPLORER_API_BASE": self.url, "OPENAI_API_KEY": "sk-test"}

    def start(self) -> ModelServer:
        """Listen on a free port of 127.0.0.1 in a background thread."""
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        """Stop listening; requests still sleeping finish on their own threads."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def in_flight(self) -> int:
        """Requests being answered now (a client that hung up is noticed at the server's next write)."""
        with self._lock:
            return self._in_flight

    def kinds(self) -> list[str | None]:
        """The prompt kinds received so far, in arrival order."""
        return [r.kind for r in self.requests]

    def _reply(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.pop(0)
        if callable(self.script):
            return self.script(request) or Reply()
        return Reply()

    def _answer(self, request: Request, reply: Reply) -> bytes:
        """The body of a 200 answer to ``request``: the reply's own, else the route's JSON."""
        if reply.body is not None:
            return reply.body
        if request.route == EMBEDDINGS:
            return json.dumps(_embeddings(request, self._embedder.embed(request.inputs))).encode()
        return json.dumps(_completion(request, self._content(request, reply), reply.usage_factor)).encode()

    def _content(self, request: Request, reply: Reply) -> str:
        if reply.content is not None:
            return reply.content
        if request.kind is None or request.fields is None:
            return "I cannot tell what this prompt asks."
        with self._offline_lock:  # the offline provider is not made for threads (its keyphrase extractor)
            return self._offline.answer(REGISTRY[request.kind], request.fields)

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: with Nagle's algorithm the body waits for the client's delayed
        # ACK of the headers (40 ms on Linux), a stall real servers (uvicorn, vLLM) do not have.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            """Quiet: tests read ``server.requests`` instead."""

        def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            route = next((r for r in (CHAT, EMBEDDINGS) if self.path.rstrip("/").endswith(f"/{r}")), None)
            if route is None:
                self._send(404, _error(f"no route {self.path}"))
                return
            request = Request.read(route, body)
            server._enter()
            try:
                reply = server._reply(request)
                if reply.release is not None:
                    reply.release.wait()
                time.sleep(server.latency_s + reply.delay_s)
                if reply.status != 200:
                    self._send(reply.status, _error(reply.error or f"scripted status {reply.status}"))
                    return
                self._send(200, server._answer(request, reply), trickle_s=reply.trickle_s)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to answer
            finally:
                server._leave()

        def _send(self, status: int, data: bytes, trickle_s: float = 0.0) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            if not trickle_s:
                self.wfile.write(data)
                return
            self.wfile.flush()
            for byte in data:  # until the client hangs up (BrokenPipeError, caught by the caller) or it is all sent
                time.sleep(trickle_s)
                self.wfile.write(bytes((byte,)))
                self.wfile.flush()

    return Handler


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message}}).encode()


def _embeddings(request: Request, vectors: np.ndarray) -> dict[str, Any]:
    """The OpenAI shape, vectors as lists of floats (litellm asks for no other encoding)."""
    tokens = sum(len(text) // 4 + 1 for text in request.inputs)
    return {
        "object": "list",
        "model": request.model,
        "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _completion(request: Request, content: str, usage_factor: float = 1.0) -> dict[str, Any]:
    prompt_tokens = int((sum(len(m.get("content") or "") for m in request.messages) // 4 + 1) * usage_factor)
    completion_tokens = int((len(content) // 4 + 1) * usage_factor)
    return {
        "id": f"chatcmpl-{len(content)}-{int(request.received_at * 1000)}",
        "object": "chat.completion",
        "created": int(request.received_at),
        "model": request.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def recognise(messages: list[dict[str, str]]) -> tuple[str | None, dict[str, str] | None]:
    """The prompt kind a request's last message was rendered from, and the fields read back from it."""
    text = messages[-1].get("content", "") if messages else ""
    for kind, pattern in _patterns().items():
        match = pattern.fullmatch(text)
        if match:
            return kind, match.groupdict()
    return None, None


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    load_answers()
    return {kind: _pattern(prompt) for kind, prompt in REGISTRY.items()}


def _pattern(prompt: Prompt[Any]) -> re.Pattern[str]:
    """The prompt's template as a regular expression whose named groups are its fields."""
    parts, seen = [], set()
    for literal, name, _, _ in string.Formatter().parse(prompt.template):
        parts.append(re.escape(literal))
        if name:
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
            seen.add(name)
    return re.compile("".join(parts), re.DOTALL)
