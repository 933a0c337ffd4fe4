"""Sharing the database file: a walk, the REST API under four clients and the CLI reading, at once.

    python -m bench.sharing [--seconds 60] [--clients 4] [--alone 20] [--keep DB]

The sample corpus (``sample_data/``) is ingested offline with the hashing embedder. ``explorer wander run`` then
walks one session in a process of its own, as a worker would (offline, no checkpoints), first alone for
``--alone`` seconds, then for ``--seconds`` beside ``explorer serve`` answering ``--clients`` threads of this
process (each a loop of reads, the session list, the walking session, its crystals and its loci, and one write in
five, pausing or resuming a session of the client's own) and ``explorer wander list --json`` run in a loop. It
prints p50/p99/max of the requests and of the commands, how many failed (a 503, an exit status), and the walk's
steps a second shared beside alone, counted afterwards from its stored ``wander.step.completed`` events, so nothing
reads the file to watch it. A command's time includes starting Python and the CLI, so that start, measured alone
before, is printed beside it. A walk its circuit breaker pauses (a loop) is started again, and its rate counts
only the time it was walking.

Goal (the app and the CLI must stay usable while a walk runs): no request or command waits more than 2 s, none fails
busy. Traffic only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import httpx

from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.store import events as events_store
from explorer.testing.ports import listening_port

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
SEED = {"seed_concept": "unicode strings and text", "random_seed": 1, "human_checkpoint_frequency": 0}
WALK = {**SEED, "max_steps": 100_000}
START_WAIT_S = 120.0  # a bound on waiting for a process to start on a loaded machine, not a measure
WRITE_EVERY = 5


@dataclass
class Timings:
    """What one kind of traffic saw: each request's or command's seconds, and how many failed and how."""

    seconds: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, failure: str | None) -> None:
        with self.lock:
            self.seconds.append(seconds)
            if failure:
                self.failures.append(failure)

    def line(self, what: str) -> str:
        ordered = sorted(self.seconds)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (
            f"{what:>16}: {len(ordered):5d}, p50 {statistics.median(ordered):6.2f} s, p99 {p99:6.2f} s, "
            f"max {ordered[-1]:6.2f} s, failed {len(self.failures)}"
        )


def _env(db: Path) -> dict[str, str]:
    """Every process on ``db``, offline (no model configured), with the hashing embedder the corpus was made with."""
    environ = {**os.environ, "EXPLORER_DB": str(db), "EXPLORER_EMBEDDING_MODEL": "hashing"}
    for name in ("EXPLORER_LOCAL_MODEL", "EXPLORER_CLOUD_MODEL", "EXPLORER_API_TOKEN", "EXPLORER_CONFIG"):
        environ.pop(name, None)
    return environ


def _runtime(db: Path) -> Runtime:
    return open_runtime(replace(Settings(), db_path=db, embedding_model="hashing"))


def prepare(db: Path) -> None:
    """The sample corpus, ingested offline."""
    runtime = _runtime(db)
    report = ingest_paths(runtime, [SAMPLE / "python-whatsnew", SAMPLE / "fortunes"])
    runtime.flush()
    print(f"corpus: {report.documents_added} documents ingested", file=sys.stderr)


def explorer(db: Path, *args: str, **popen: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "explorer", *args], env=_env(db), **popen)  # type: ignore[call-overload]


def serve(db: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``explorer serve`` on a port of the system's choosing; the process and the API's base URL."""
    with log.open("wb") as out:
        process = explorer(db, "serve", "--port", "0", stdout=out, stderr=subprocess.STDOUT)
    port = listening_port(process, START_WAIT_S, log)
    return process, f"http://127.0.0.1:{port}/api/v1"


def walk(api: httpx.Client, db: Path, session_id: str, log: Path) -> subprocess.Popen[bytes]:
    """The walk, as a worker's would run: its own process, stepping until stopped (its output into ``log``), once
    it has taken a step (its start, imports and caches behind it). A session its last walk left paused (a circuit
    breaker) is resumed first.
    """
    if api.get(f"/wander/sessions/{session_id}").json()["status"] == "paused":
        api.post(f"/wander/sessions/{session_id}/resume").raise_for_status()
    taken = api.get(f"/wander/sessions/{session_id}").json()["step_count"]
    with log.open("ab") as out:
        walking = explorer(db, "wander", "run", session_id, "--steps", "10000", stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_WAIT_S
    while api.get(f"/wander/sessions/{session_id}").json()["step_count"] == taken:
        if walking.poll() is not None or time.monotonic() > deadline:
            stop(walking)
            raise SystemExit(f"the walk took no step; its output ends:\n{_tail(log)}")
        time.sleep(0.5)
    return walking


def walk_for(url: str, db: Path, session_id: str, log: Path, until: float) -> tuple[float, int]:
    """Walk until ``until``, started again whenever its circuit breaker pauses it (a loop); its steps a second
    over the time it was walking (from its first step to its stop, each time), and how often it was started again.
    """
    walked: list[tuple[datetime, datetime]] = []
    with httpx.Client(base_url=url, timeout=120) as api:
        while time.monotonic() < until:
            walking = walk(api, db, session_id, log)
            start = datetime.now(UTC)
            while walking.poll() is None and time.monotonic() < until:
                time.sleep(0.2)
            walked.append((start, datetime.now(UTC)))
            stop(walking)
    steps = sum(steps_between(db, session_id, *span) for span in walked)
    return steps / sum((end - start).total_seconds() for start, end in walked), len(walked) - 1


def steps_between(db: Path, session_id: str, start: datetime, end: datetime) -> int:
    """Steps the walk completed between ``start`` and ``end``, from its stored events (read once it has stopped)."""
    with _runtime(db).db.connect() as con:
        done = events_store.list_events(con, session_id=session_id, subjects=["wander.step.completed"], limit=1_000_000)
    return sum(start <= event.created_at <= end for event in done)


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-600:]


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def client(url: str, walker: str, until: float, timings: Timings) -> None:
    """One API client: reads of the walking session, and every fifth request a write to a session of its own."""
    with httpx.Client(base_url=url, timeout=120) as api:
        own = api.post("/wander/sessions", json=SEED).json()["id"]
        requests = [
            ("GET", "/wander/sessions"),
            ("GET", f"/wander/sessions/{walker}"),
            ("GET", f"/wander/sessions/{walker}/crystals"),
            ("GET", f"/wander/sessions/{walker}/loci?visited=true"),
        ]
        paused = False
        for number in itertools.count():
            if time.monotonic() >= until:
                return
            if number % WRITE_EVERY == WRITE_EVERY - 1:
                method, path = "POST", f"/wander/sessions/{own}/{'resume' if paused else 'pause'}"
                paused = not paused
            else:
                method, path = requests[number % len(requests)]
            asked = time.monotonic()
            response = api.request(method, path)
            failure = None if response.is_success else f"{response.status_code} {response.text[:120]}"
            timings.add(time.monotonic() - asked, failure)


def cli_loop(db: Path, until: float, timings: Timings) -> None:
    """``explorer wander list --json``, one after another."""
    while time.monotonic() < until:
        timings.add(*cli_once(db))


def cli_once(db: Path) -> tuple[float, str | None]:
    asked = time.monotonic()
    command = explorer(db, "wander", "list", "--json", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = command.communicate(timeout=300)
    failure = err.decode(errors="replace").strip()[-200:] if command.returncode else None
    return time.monotonic() - asked, failure


def measure(db: Path, seconds: float, clients: int, alone: float, logs: Path) -> None:
    """Time the walk alone, then the walk, the API and the CLI together, and print what each saw (the server's
    and the walk's output into ``logs``).
    """
    server, url = serve(db, logs / "serve.log")
    try:
        with httpx.Client(base_url=url, timeout=120) as api:
            walker = api.post("/wander/sessions", json=WALK).json()["id"]
            starts = [cli_once(db)[0] for _ in range(3)]
            print(f"{'CLI alone':>16}: {statistics.median(starts):.2f} s (median of 3)")

            rate_alone, restarts_alone = walk_for(url, db, walker, logs / "walk.log", time.monotonic() + alone)

            requests, commands = Timings(), Timings()
            until = time.monotonic() + seconds
            threads = [threading.Thread(target=client, args=(url, walker, until, requests)) for _ in range(clients)]
            threads.append(threading.Thread(target=cli_loop, args=(db, until, commands)))
            for thread in threads:
                thread.start()
            rate_shared, restarts_shared = walk_for(url, db, walker, logs / "walk.log", until)
            for thread in threads:
                thread.join()
    finally:
        stop(server)
    print(requests.line(f"API ({clients} clients)"))
    print(commands.line("CLI wander list"))
    print(f"{'walk':>16}: {rate_shared:.1f} steps/s shared, {rate_alone:.1f} alone")
    if restarts_alone or restarts_shared:
        paused = f"{restarts_alone} + {restarts_shared}"
        print(f"{'':>16}  (the circuit breaker paused the walk {paused} times, alone + shared: started again)")
    for failure in sorted(set(requests.failures + commands.failures))[:5]:
        print(f"failure: {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="How long all of them share the file.")
    parser.add_argument("--clients", type=int, default=4, help="API client threads.")
    parser.add_argument("--alone", type=float, default=20.0, help="How long the walk is timed alone first.")
    parser.add_argument("--keep", type=Path, help="Use this (fresh) database and keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = args.keep or Path(folder) / "sharing.duckdb"
        db.parent.mkdir(parents=True, exist_ok=True)
        prepare(db)
        measure(db, args.seconds, args.clients, args.alone, Path(folder))


if __name__ == "__main__":
    main()
