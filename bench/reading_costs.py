"""What reading costs in model calls per 1,000 chunks, and what enriching it later takes with a real model.

    python -m bench.reading_costs [--vault /tmp/vault-1k] [--notes 40] [--model-notes 6]

Each step is the CLI as a person runs it, on copies of the first notes of a vault (:mod:`bench.vault_corpus`):

- **offline**: ``explorer ingest --enrich now`` of ``--notes`` notes with the built-in provider (no server);
- **SmolLM2** (llama.cpp's server, :mod:`explorer.testing.llama_server`), on ``--model-notes`` notes (a real model
  takes seconds a call): ``explorer ingest --enrich later`` (no model call), then ``explorer wander new`` and one
  step on a copy of that base (walkable before any enrichment), then ``explorer enrich --background`` carried out
  by a worker (``explorer jobs worker``), at the default concurrency and again at ``EXPLORER_CONCURRENCY=1`` on a
  copy of the same fast read.

For each: seconds, model calls by prompt kind per 1,000 chunks read (``form refused``: a request the server refused
for its answer form, asked again at once in a weaker one), answers refused (parsed to nothing, or failed), and the
most requests in flight at once, counted by a proxy between the product and the server. llama-cpp-python's server
answers one request at a time whatever the client sends (a lock around its one model), so requests in flight at
once wait in its queue: compare the seconds at both concurrencies to see what a server gains from it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from explorer.jobs.worker import worker_running
from explorer.records.calls import FORM_REFUSED
from explorer.runtime import Runtime, open_runtime
from explorer.settings import load_settings
from explorer.testing.llama_server import LlamaServer, missing

EXPLORER = [sys.executable, "-m", "explorer"]
KINDS = {"implant": "implant", "entities": "entities", "entity_synthesis": "insight"}  # prompt kind → column
SEED_CONCEPT = "reporting a bug in the documentation"  # the first notes of the vault are the Python docs' own
TIMEOUT_S = 300.0  # per model call: at concurrency 8 a call waits behind seven others in the server's queue


@dataclass
class Row:
    """One measured run: what it read, its seconds, its calls by prompt kind and outcome."""

    label: str
    chunks: int
    seconds: float
    calls: Counter[str] = field(default_factory=Counter)
    refused: int = 0  # answers the product refused (unparsable) or calls that failed
    peak_in_flight: int | None = None
    pending: int | None = None  # steps still pending after the run (failed again: kept for the next)

    def per_thousand(self, count: float) -> str:
        return f"{1000 * count / self.chunks:,.0f}" if self.chunks else "-"


class CountingProxy:
    """Forward requests to ``target`` and count how many are in flight at once: what the product sends together,
    whether or not the server behind computes them together.
    """

    def __init__(self, target: str) -> None:
        self.target = target.rstrip("/")
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=TIMEOUT_S)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def reset(self) -> None:
        with self._lock:
            self.peak = self.in_flight

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

    def _forward(self, method: str, path: str, body: bytes | None) -> httpx.Response:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            headers = {"Content-Type": "application/json"}
            return self._client.request(method, self.target + path.removeprefix("/v1"), content=body, headers=headers)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._answer(proxy._forward("GET", self.path, None))

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", 0))
                self._answer(proxy._forward("POST", self.path, self.rfile.read(length)))

            def _answer(self, response: httpx.Response) -> None:
                self.send_response(response.status_code)
                self.send_header("Content-Type", response.headers.get("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(response.content)))
                self.end_headers()
                self.wfile.write(response.content)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def copy_notes(vault: Path, count: int, folder: Path) -> Path:
    """The first ``count`` notes of ``vault`` (by name: the vault's own order), copied under ``folder``."""
    notes = sorted(vault.rglob("*.md"), key=lambda note: note.name)[:count]
    if len(notes) < count:
        raise SystemExit(f"{vault} holds {len(notes)} notes, fewer than {count}: python -m bench.vault_corpus")
    for note in notes:
        copy = folder / note.relative_to(vault)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, copy)
    return folder


def explorer(args: list[str], env: dict[str, str]) -> tuple[float, dict]:
    """Run ``explorer ARGS --json``: its seconds and the JSON it printed (exit 3, steps kept pending, is fine)."""
    started = time.perf_counter()
    done = subprocess.run([*EXPLORER, *args, "--json"], env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):
        raise SystemExit(f"explorer {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return time.perf_counter() - started, json.loads(done.stdout)


def on(db: Path) -> Runtime:
    """A runtime on ``db`` with the embedding model it was read with (the default: loaded only if asked to embed)."""
    return open_runtime(replace(load_settings({}), db_path=db), create=False)


def call_log(db: Path) -> tuple[Counter[str], int]:
    """The calls the database logged, by prompt kind (and ``form refused``), and those that failed or were refused."""
    with on(db).db.connect() as con:
        rows = con.execute("SELECT purpose, outcome, count(*) FROM model_calls GROUP BY purpose, outcome").fetchall()
    calls: Counter[str] = Counter()
    refused = 0
    for purpose, outcome, count in rows:
        calls["form refused" if outcome == FORM_REFUSED else KINDS.get(purpose, purpose)] += count
        refused += count if outcome not in ("ok", FORM_REFUSED) else 0
    return calls, refused


def read_offline(notes: Path, db: Path) -> Row:
    seconds, report = explorer(["ingest", str(notes), "--enrich", "now", "--db", str(db)], dict(os.environ))
    calls, refused = call_log(db)
    return Row("offline: ingest --enrich now", report["chunks_added"], seconds, calls, refused, None)


def enrich_in_background(db: Path, env: dict[str, str], proxy: CountingProxy, chunks: int, label: str) -> Row:
    """``explorer enrich --background`` carried out by a worker this starts and stops (one started on demand would
    stay a minute once idle): seconds from the job queued to its end, the calls made, the steps left pending.
    """
    worker = subprocess.Popen(
        [*EXPLORER, "jobs", "worker", "--db", str(db)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while not worker_running(on(db)):
            time.sleep(0.2)
        proxy.reset()
        started = time.perf_counter()
        _, queued = explorer(["enrich", "--background", "--db", str(db)], env)
        _, job = explorer(["jobs", "show", queued["job_id"], "--wait", "--db", str(db)], env)
        seconds = time.perf_counter() - started
    finally:
        worker.terminate()  # idle now: SIGTERM ends it at once
        worker.wait()
    if job["status"] != "succeeded":
        raise SystemExit(f"the enrichment job ended {job['status']}: {job.get('error')}")
    calls, refused = call_log(db)
    return Row(label, chunks, seconds, calls, refused, proxy.peak, job["result"]["items_failed"])


def walk(db: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds to start a walk, and to take its first step (the model asked as it dwells), as a person would."""
    new_s, session = explorer(["wander", "new", "--seed-concept", SEED_CONCEPT, "--db", str(db)], env)
    step_s, _ = explorer(["wander", "step", session["session_id"], "--db", str(db)], env)
    return new_s, step_s


def with_smollm2(notes: Path, folder: Path, server: LlamaServer) -> tuple[list[Row], tuple[float, float]]:
    """The fast read, a walk on it, and its enrichment at the default concurrency and at one."""
    proxy = CountingProxy(server.url)
    try:
        env = {**os.environ, **server.env(), "EXPLORER_API_BASE": proxy.url, "EXPLORER_TIMEOUT": str(TIMEOUT_S)}
        fast = folder / "fast.duckdb"
        seconds, report = explorer(["ingest", str(notes), "--enrich", "later", "--db", str(fast)], env)
        calls, refused = call_log(fast)
        chunks, deferred = report["chunks_added"], report["items_deferred"]
        read = Row("SmolLM2: ingest --enrich later", chunks, seconds, calls, refused, proxy.peak, deferred)
        for copy in ("walk", "one"):
            shutil.copy(fast, folder / f"{copy}.duckdb")
        walked = walk(folder / "walk.duckdb", env)
        label = f"SmolLM2: enrich --background, concurrency {os.environ.get('EXPLORER_CONCURRENCY', '8')}"
        many = enrich_in_background(fast, env, proxy, chunks, label)
        one_env = {**env, "EXPLORER_CONCURRENCY": "1"}
        one = enrich_in_background(folder / "one.duckdb", one_env, proxy, chunks, "SmolLM2: same, concurrency 1")
    finally:
        proxy.close()
    return [read, many, one], walked


COLUMNS = ("implant", "entities", "insight", "form refused")


def print_table(rows: list[Row], walked: tuple[float, float] | None) -> None:
    print("\nmodel calls per 1,000 chunks read, by prompt kind")
    heads = ["chunks", "s", "s/1k", *(c.split()[0] for c in COLUMNS), "all", "refused", "pending", "in flight"]
    print(f"{'run':<44}" + "".join(f" {head:>8}" for head in heads))
    for row in rows:
        calls = [row.calls[c] for c in COLUMNS] + [sum(row.calls.values()), row.refused]
        cells = [str(row.chunks), f"{row.seconds:.1f}", row.per_thousand(row.seconds)]
        cells += [row.per_thousand(count) for count in calls]
        cells += ["-" if value is None else str(value) for value in (row.pending, row.peak_in_flight)]
        print(f"{row.label:<44}" + "".join(f" {cell:>8}" for cell in cells))
    print("(form: requests refused for their answer form; refused: answers refused or failed, per 1,000 chunks;")
    print(" pending: steps left after the run, as counted; in flight: the most requests at the server at once)")
    if walked is not None:
        print(f"walk on the fast read, before enrichment: wander new {walked[0]:.1f} s, first step {walked[1]:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=Path("/tmp/vault-1k"))
    parser.add_argument("--notes", type=int, default=40, help="notes read offline")
    parser.add_argument("--model-notes", type=int, default=6, help="notes read with SmolLM2 (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reading-costs-") as temp:
        folder = Path(temp)
        rows = [read_offline(copy_notes(args.vault, args.notes, folder / "notes"), folder / "offline.duckdb")]
        walked = None
        reason = missing()
        if args.model_notes and reason is None:
            notes = copy_notes(args.vault, args.model_notes, folder / "model-notes")
            with LlamaServer(log=folder / "server.log") as server:
                real, walked = with_smollm2(notes, folder, server)
            rows += real
        elif args.model_notes:
            print(f"SmolLM2 skipped: {reason}")
        print_table(rows, walked)


if __name__ == "__main__":
    main()
