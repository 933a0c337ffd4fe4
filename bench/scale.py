"""The shared store at scale: walks carried out by several workers, a large corpus, a worker killed.

    python -m bench.scale [--sessions 8] [--steps 3] [--nodes 100000] [--latency 1.0] [--json]

1. Workers. The sample corpus's Python release notes (``sample_data/python-whatsnew``), read offline with the
   hashing embedder into a database file, are copied (``explorer db copy``'s code) into a fresh PostgreSQL
   database for each run, and into a fresh file for the contrast. Each run creates ``--sessions`` sessions, each
   with its own seed concept, and queues one ``wander.run`` job of ``--steps`` steps per session
   (:func:`explorer.jobs.submit`, what ``explorer wander run ID --background`` does), carried out by ``explorer
   worker`` processes started beforehand (on the file, ``explorer jobs worker``: one at a time) against the test
   model server answering every request after ``--latency`` seconds, so the model's time dominates as with a real
   one. The workers first walk one step for each job they can run at once, untimed (:func:`warm_up` says why).
   Steps a second = the trace rows the walks stored / the seconds from the first job's start to the last one's
   end (the jobs' own times, so starting Python is not counted). It runs 1, 2 and 4 processes, then 1 process
   carrying out 4 jobs at once (``--concurrency 4``): on this 2-core machine each process's own work (imports, the
   walk's in-memory stages, the database) competes for the cores, which threads of one process share better.
2. A large corpus. ``--nodes`` synthetic nodes whose vectors lie where all-MiniLM-L6-v2 puts the sample corpus's
   chunks (``bench/scale_corpus.py`` says how and why), loaded into a file and copied into PostgreSQL (which
   builds its HNSW index, with the server's ``maintenance_work_mem`` raised to :data:`BUILD_MEMORY`). On each, a
   walk of ``--large-steps`` steps with the offline provider; the time of a step with the time spent in the model
   and the embedder left out, median over the steps after the first two (which load the corpus's vectors and the
   session's). Then the ten nearest nodes of ``--queries`` new vectors (drawn
   like the nodes), by the SQL the store uses for search by meaning (ordered by the dialect's distance alone): on
   PostgreSQL the HNSW index at the store's ``hnsw.ef_search``, whose recall@10 against exact NumPy search is
   printed; on the file an exact scan.
3. A worker killed. Three workers walk the sessions as in 1; once a job has taken a step and has another to take,
   its worker is killed with SIGKILL. The others end its job (failed, with the reason: a walk is not run again, as
   its steps would be taken twice) and carry out the rest; every session's step count must equal its trace rows.

The default run takes about 9 minutes on a quiet 2-core machine (12 under load); ``--sessions 2 --steps 2
--nodes 2000`` about 4.
Everything runs on this machine: PostgreSQL is the tests' own (``explorer.testing.postgres_server``), the model
the tests' server on 127.0.0.1. The tables are printed in the form docs/team-server.md holds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from bench.scale_corpus import Corpus, row_of, sample_chunks, synthetic, write_file
from bench.wander_step import Timed
from explorer import jobs
from explorer.providers.embeddings import Embedder, make_embedder
from explorer.reading.ingest import ingest_paths
from explorer.records.jobs import Job, JobStatus
from explorer.runtime import Runtime, open_runtime
from explorer.settings import DEFAULT_EMBEDDING_MODEL, Settings
from explorer.store import jobs as jobs_store
from explorer.store.copying import copy_database
from explorer.store.dialect import dialect
from explorer.store.postgres import EF_SEARCH
from explorer.testing.model_server import SERVED_MODEL, ModelServer
from explorer.testing.postgres_server import PostgresServer, wait_for_workers
from explorer.wander import service
from explorer.wander.config import SessionConfig

WALKED = Path(__file__).resolve().parents[1] / "sample_data" / "python-whatsnew"
SEEDS = (
    "garbage collection",
    "unicode strings and text",
    "generators and iterators",
    "type hints",
    "asynchronous programming",
    "decorators",
    "the import system",
    "dictionaries and ordering",
)
K = 10
# The memory PostgreSQL may use to build an index: with its default (64 MB) a 100k-node HNSW graph does not fit and
# the build took 581 s on this machine; pgvector's documentation advises raising it for a build, as a deployment would.
BUILD_MEMORY = "1GB"
JOBS_TIMEOUT_S = 1800.0  # a bound on waiting for the jobs on a loaded machine, not a measure
START_TIMEOUT_S = 120.0
Db = str  # a file's path or a PostgreSQL URL


@dataclass(frozen=True)
class Workers:
    """Who carries the walks out: ``processes`` workers, each running ``concurrency`` jobs at once."""

    backend: str  # "PostgreSQL" or "DuckDB file"
    processes: int
    concurrency: int = 1

    @property
    def label(self) -> str:
        if self.backend != "PostgreSQL":
            return f"{self.backend}, its one worker"
        plural = "es" if self.processes > 1 else ""
        return f"{self.processes} process{plural}" + (f", --concurrency {self.concurrency}" * (self.concurrency > 1))


@dataclass(frozen=True)
class Walked:
    """What one run of the walks did: steps stored, seconds from the first job's start to the last one's end."""

    workers: Workers
    steps: int
    seconds: float
    failed: int

    @property
    def rate(self) -> float:
        return self.steps / self.seconds


def stamp() -> str:
    """The time of day, for the progress lines on stderr."""
    return time.strftime("%H:%M:%S")


# -- processes -----------------------------------------------------------------------------------------------


def worker_env(model: ModelServer) -> dict[str, str]:
    """A worker's environment: the model server, the hashing embedder the corpus was read with, nothing else of
    the caller's settings.
    """
    environ = {name: value for name, value in os.environ.items() if not name.startswith("EXPLORER_")}
    return {**environ, "EXPLORER_EMBEDDING_MODEL": "hashing", **model.env(SERVED_MODEL)}


@contextmanager
def started(workers: Workers, db: Db, model: ModelServer, logs: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """The worker processes, stopped (SIGTERM, then SIGKILL) after the block; their output in ``logs``."""
    if workers.backend == "PostgreSQL":
        command = ["worker", "--db", db, "--concurrency", str(workers.concurrency)]
    else:
        command = ["jobs", "worker", "--db", db]
    processes = []
    for number in range(workers.processes):
        with (logs / f"worker-{time.monotonic_ns()}-{number}.log").open("wb") as log:
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "explorer", *command],
                    env=worker_env(model),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
    try:
        if workers.backend == "PostgreSQL":
            wait_for_workers(db, workers.processes, START_TIMEOUT_S)
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# -- walks ---------------------------------------------------------------------------------------------------


def walk_runtime(db: Db, model: ModelServer) -> Runtime:
    """This process's runtime on ``db``: it creates the sessions, queues the jobs and reads what they did."""
    settings = replace(Settings(), db_path=db, embedding_model="hashing", local_model=SERVED_MODEL, api_base=model.url)
    return open_runtime(settings)


def read_corpus(folder: Path) -> Path:
    """The release notes read offline into a file, once: every run's database is copied from it."""
    path = folder / "walked.duckdb"
    runtime = open_runtime(replace(Settings(), db_path=path, embedding_model="hashing"))
    report = ingest_paths(runtime, [WALKED])
    runtime.flush()
    runtime.db.close()
    print(f"{stamp()} walked corpus: {report.documents_added} documents", file=sys.stderr, flush=True)
    return path


def new_sessions(runtime: Runtime, count: int) -> list[str]:
    """``count`` sessions, each with a seed concept and random seed of its own, never paused for a person."""
    return [
        service.create_session(
            runtime,
            SessionConfig(seed_concept=SEEDS[number % len(SEEDS)], random_seed=number, human_checkpoint_frequency=0),
        ).id
        for number in range(count)
    ]


def queue_walks(runtime: Runtime, sessions: list[str], steps: int) -> list[str]:
    """One ``wander.run`` job a session; the jobs' ids."""
    return [
        jobs.submit(runtime, "wander.run", {"session_id": session, "steps": steps}, start_worker=False).id
        for session in sessions
    ]


def wait_for(runtime: Runtime, job_ids: list[str], ready: Callable[[list[Job]], bool]) -> list[Job]:
    """The jobs' rows, once ``ready`` says so of them; read as they stand, without the readers' check of a worker's
    process on this machine (:func:`explorer.jobs.get` would end a killed worker's job at once, where a worker on
    another machine is ended by the surviving workers' recovery): what the workers themselves did.
    """
    deadline = time.monotonic() + JOBS_TIMEOUT_S
    while True:
        with runtime.db.connect() as con:
            found = [job for job_id in job_ids if (job := jobs_store.get_job(con, job_id)) is not None]
        if ready(found):
            return found
        if time.monotonic() > deadline:
            raise SystemExit(f"the jobs never got there: {[job.summary for job in found]}")
        time.sleep(0.5)


def all_ended(found: list[Job]) -> bool:
    return all(job.status.ended for job in found)


def warm_up(runtime: Runtime, workers: Workers) -> None:
    """A one-step walk for each job a worker can run at once, waited for: a worker's first step in a runtime
    pays for importing the model client and building the corpus's caches (25 s on this machine, on both cores),
    which the steps after it never pay again; timed with them, it hid what more workers do in a short run.
    """
    sessions = new_sessions(runtime, workers.processes * workers.concurrency)
    wait_for(runtime, queue_walks(runtime, sessions, 1), all_ended)


def span(ended: list[Job]) -> float:
    """Seconds from the first job's start to the last one's end, by the jobs' own records."""
    starts = [job.started_at for job in ended if job.started_at]
    ends = [job.finished_at for job in ended if job.finished_at]
    return (max(ends) - min(starts)).total_seconds()


def walked(runtime: Runtime, sessions: list[str]) -> list[tuple[int, int]]:
    """Each session's step count and its trace rows."""
    return [
        (service.get_session(runtime, session).step_count, len(service.session_view(runtime, session).trace))
        for session in sessions
    ]


def fresh_copy(template: Path, workers: Workers, server: PostgresServer, folder: Path) -> Db:
    """A database of its own for a run, the corpus copied in."""
    destination: Db
    if workers.backend == "PostgreSQL":
        destination = server.new_database()
    else:
        destination = str(folder / f"walks-{time.monotonic_ns()}.duckdb")
    copy_database(template, destination)
    return destination


def run_walks(
    workers: Workers, template: Path, server: PostgresServer, model: ModelServer, args: argparse.Namespace, logs: Path
) -> Walked:
    """The sessions' walks carried out by ``workers``; what they did and how fast."""
    db = fresh_copy(template, workers, server, logs)
    runtime = walk_runtime(db, model)
    sessions = new_sessions(runtime, args.sessions)
    with started(workers, db, model, logs):
        warm_up(runtime, workers)
        ended = wait_for(runtime, queue_walks(runtime, sessions, args.steps), all_ended)
    seconds = span(ended)
    steps = sum(trace for _, trace in walked(runtime, sessions))
    runtime.flush()
    runtime.db.close()
    result = Walked(workers, steps, seconds, sum(job.status != "succeeded" for job in ended))
    print(f"{stamp()} {workers.label}: {steps} steps in {seconds:.1f} s", file=sys.stderr, flush=True)
    return result


# -- a worker killed -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Killed:
    """What the surviving workers did with a killed worker's walk and the rest."""

    workers: int
    trace_at_kill: int
    trace_after: int
    succeeded: int
    failed: list[str]
    ended_after_s: float  # from the kill to the killed worker's job being failed
    whole: int
    sessions: int


def midway(job: Job, steps: int) -> bool:
    """Whether a walk job is under way with a step behind it and one ahead (a walk of one step: under way)."""
    return job.status is JobStatus.RUNNING and job.done >= min(1, steps - 1)


def kill_one(
    template: Path, server: PostgresServer, model: ModelServer, args: argparse.Namespace, logs: Path
) -> Killed:
    """Three workers walk the sessions; the first one seen to have taken a step is killed with SIGKILL."""
    workers = Workers("PostgreSQL", 3)
    db = fresh_copy(template, workers, server, logs)
    runtime = walk_runtime(db, model)
    sessions = new_sessions(runtime, args.sessions)
    with started(workers, db, model, logs):
        job_ids = queue_walks(runtime, sessions, args.steps)
        stepping = wait_for(runtime, job_ids, lambda found: any(midway(job, args.steps) for job in found))
        victim = next(job for job in stepping if midway(job, args.steps)).worker_pid
        trace_at_kill = sum(trace for _, trace in walked(runtime, sessions))
        os.kill(victim or 0, signal.SIGKILL)
        killed_at = datetime.now(UTC)
        ended = wait_for(runtime, job_ids, all_ended)
    counts = walked(runtime, sessions)
    print(
        f"{stamp()} a worker killed: {trace_at_kill} trace rows then, {sum(t for _, t in counts)} now", file=sys.stderr
    )
    runtime.flush()
    runtime.db.close()
    return Killed(
        workers=workers.processes,
        trace_at_kill=trace_at_kill,
        trace_after=sum(trace for _, trace in counts),
        succeeded=sum(job.status == "succeeded" for job in ended),
        failed=[job.error or "" for job in ended if job.status != "succeeded"],
        ended_after_s=max(
            ((job.finished_at - killed_at).total_seconds() for job in ended if job.error and job.finished_at),
            default=0.0,
        ),
        whole=sum(steps == trace for steps, trace in counts),
        sessions=len(sessions),
    )


# -- a large corpus ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Large:
    """One backend's figures on the large corpus."""

    backend: str
    step_ms: float
    first_steps_s: float
    nearest_ms: float
    recall: float


def step_times(runtime: Runtime, steps: int) -> tuple[float, float]:
    """Median milliseconds of a step without model time (after the first two), and the first two's seconds."""
    model = Timed()
    runtime.gateway.ask = model.wrap(runtime.gateway.ask)  # type: ignore[method-assign]
    runtime.embedder.embed = model.wrap(runtime.embedder.embed)  # type: ignore[method-assign]
    session = service.create_session(
        runtime, SessionConfig(seed_concept=SEEDS[0], random_seed=1, human_checkpoint_frequency=0)
    )
    marks = [(time.perf_counter(), 0.0)]
    service.run(runtime, session.id, steps, progress=lambda *_: marks.append((time.perf_counter(), model.seconds)))
    spent = [(after[0] - before[0]) - (after[1] - before[1]) for before, after in zip(marks, marks[1:], strict=False)]
    return statistics.median(spent[2:]) * 1000, sum(spent[:2])


def nearest(runtime: Runtime, queries: np.ndarray) -> tuple[list[set[int]], float]:
    """The ten nearest nodes of each query by the store's SQL (ordered by the distance alone, which the HNSW index
    serves), and the median milliseconds a query took.
    """
    found, times = [], []
    with runtime.db.connect() as con:
        backend = dialect(con)
        distance = backend.distance("embedding", f"?::{backend.vector(queries.shape[1])}")
        for query in queries:
            started_at = time.perf_counter()
            rows = con.execute(f"SELECT id FROM nodes ORDER BY {distance} LIMIT ?", [query.tolist(), K]).fetchall()
            times.append(time.perf_counter() - started_at)
            found.append({row_of(row[0]) for row in rows})
    return found, statistics.median(times) * 1000


def exact(corpus: Corpus, queries: np.ndarray) -> list[set[int]]:
    """The true ten nearest nodes of each query, by NumPy."""
    sims = queries @ corpus.vectors.T
    return [set(np.argpartition(-row, K)[:K].tolist()) for row in sims]


def large_corpus(args: argparse.Namespace, server: PostgresServer, folder: Path) -> tuple[list[Large], float]:
    """Both backends on the large corpus; and the seconds the copy into PostgreSQL took (HNSW index built)."""
    embedder: Embedder = make_embedder(DEFAULT_EMBEDDING_MODEL)
    chunks = sample_chunks(embedder)
    corpus = synthetic(chunks, args.nodes)
    queries = synthetic(chunks, args.queries, seed=1).vectors
    truth = exact(corpus, queries)
    path = folder / "large.duckdb"
    write_file(path, corpus, embedder)
    url = server.new_database()
    copied_s = copy_database(path, url).seconds
    print(f"{stamp()} large corpus: {args.nodes} nodes, copied into PostgreSQL in {copied_s:.0f} s", file=sys.stderr)
    results = []
    for backend, db in (("PostgreSQL", url), ("DuckDB file", str(path))):
        runtime = open_runtime(replace(Settings(), db_path=db, embedding_model=embedder.name), embedder=embedder)
        step_ms, first_s = step_times(runtime, args.large_steps)
        found, query_ms = nearest(runtime, queries)
        recall = statistics.fmean(len(f & t) / K for f, t in zip(found, truth, strict=True))
        runtime.flush()
        runtime.db.close()
        results.append(Large(backend, step_ms, first_s, query_ms, recall))
        print(f"{stamp()} {backend}: step {step_ms:.0f} ms", file=sys.stderr, flush=True)
    return results, copied_s


# -- the tables ----------------------------------------------------------------------------------------------


def print_tables(
    args: argparse.Namespace, runs: list[Walked], large: list[Large], copied_s: float, killed: Killed
) -> None:
    """The figures, as the tables of docs/team-server.md."""
    one = runs[0].rate
    print(
        f"\n| Walks on one PostgreSQL ({args.sessions} sessions × {args.steps} steps, "
        f"model answering after {args.latency:g} s) | steps/s | × 1 process |"
    )
    print("|---|---:|---:|")
    for run in runs:
        failed = f" ({run.failed} jobs failed)" if run.failed else ""
        print(f"| {run.workers.label}{failed} | {run.rate:.2f} | {run.rate / one:.2f} |")
    pg, duck = large
    print(f"\n| {args.nodes:,} nodes (MiniLM-like vectors) | PostgreSQL | DuckDB file |")
    print("|---|---:|---:|")
    print(f"| wander step, model time left out (median) | {pg.step_ms:.0f} ms | {duck.step_ms:.0f} ms |")
    print(f"| first two steps (the corpus's vectors loaded) | {pg.first_steps_s:.1f} s | {duck.first_steps_s:.1f} s |")
    queries = f"nearest 10 by SQL (median of {args.queries})"
    print(f"| {queries} | {pg.nearest_ms:.1f} ms (HNSW) | {duck.nearest_ms:.1f} ms (scan) |")
    print(f"| recall@10 against exact search (ef_search {EF_SEARCH}) | {pg.recall:.3f} | {duck.recall:.3f} |")
    print(f"| copied from the file (`explorer db copy`, index built) | {copied_s:.0f} s | |")
    reasons = sorted(set(killed.failed))
    print(f"\n| A worker killed with SIGKILL mid-walk ({killed.workers} workers, {killed.sessions} walks) | |")
    print("|---|---|")
    print(f"| jobs succeeded / failed | {killed.succeeded} / {len(killed.failed)} |")
    for reason in reasons:
        print(f"| failed because | {reason} |")
    if killed.failed:
        print(f"| the killed worker's job failed by the others | {killed.ended_after_s:.0f} s after the kill |")
    print(f"| trace rows at the kill / at the end | {killed.trace_at_kill} / {killed.trace_after} |")
    print(f"| sessions whole (step count = trace rows) | {killed.whole} of {killed.sessions} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=8, help="Sessions walked at once, one job each.")
    parser.add_argument("--steps", type=int, default=3, help="Steps each walk job takes.")
    parser.add_argument("--latency", type=float, default=1.0, help="Seconds the model server takes to answer.")
    parser.add_argument("--nodes", type=int, default=100_000, help="Nodes of the large corpus.")
    parser.add_argument("--large-steps", type=int, default=12, help="Steps walked on the large corpus.")
    parser.add_argument("--queries", type=int, default=200, help="Nearest-neighbour queries for recall@10.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON instead of tables.")
    args = parser.parse_args()
    setups = [
        Workers("PostgreSQL", 1),
        Workers("PostgreSQL", 2),
        Workers("PostgreSQL", 4),
        Workers("PostgreSQL", 1, concurrency=4),
        Workers("DuckDB file", 1),
    ]
    with tempfile.TemporaryDirectory() as folder, PostgresServer() as server, ModelServer(args.latency) as model:
        logs = Path(folder)
        with psycopg.connect(server.admin_url, autocommit=True) as con:
            con.execute(f"ALTER SYSTEM SET maintenance_work_mem = '{BUILD_MEMORY}'")
            con.execute("SELECT pg_reload_conf()")
        template = read_corpus(logs)
        runs = [run_walks(setup, template, server, model, args, logs) for setup in setups]
        killed = kill_one(template, server, model, args, logs)
        large, copied_s = large_corpus(args, server, logs)
    if args.json:
        figures: dict[str, Any] = {
            "walks": [{**asdict(run), "label": run.workers.label, "rate": run.rate} for run in runs],
            "large": [asdict(row) for row in large],
            "copied_s": copied_s,
            "killed": asdict(killed),
        }
        print(json.dumps(figures, indent=2))
    else:
        print_tables(args, runs, large, copied_s, killed)


if __name__ == "__main__":
    main()
