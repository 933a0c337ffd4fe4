"""Processes sharing one database file take turns in the order they asked, so none waits
behind a process that lets the file go and takes it again at once.

Each case runs real processes on a real file: a tight writer (a transaction after another, as a walk's steps),
a process whose threads keep the file in use between them (as the API under several clients), and readers (as the
CLI). Every one of them must get the file within a bounded wait, and none may fail busy.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from explorer.store import Database

WORKER = textwrap.dedent("""
    import json, sys, threading, time
    from explorer.store import Database, DatabaseBusy

    path, role, seconds, threads = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    db = Database(path, embedding_model="test-model", embedding_dim=4, lock_wait_s=float(sys.argv[5]))
    waits, busy = [], 0
    print("ready", flush=True)
    sys.stdin.readline()  # every process starts together
    end = time.monotonic() + seconds

    def loop():
        global busy
        while time.monotonic() < end:
            asked = time.monotonic()
            try:
                with db.transaction() as con:
                    waits.append(time.monotonic() - asked)
                    if role == "writer":
                        con.execute("INSERT INTO meta VALUES (?, 'x')", [f"{role}-{time.monotonic_ns()}"])
                    else:
                        con.execute("SELECT count(*) FROM meta").fetchone()
                    time.sleep(0.02 if role == "threads" else 0.002)  # the unit of work's own time
            except DatabaseBusy:
                busy += 1
            if role == "reader":
                time.sleep(0.05)  # a command now and then, not a flood

    workers = [threading.Thread(target=loop) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(json.dumps({"role": role, "units": len(waits), "max_wait": max(waits, default=0), "busy": busy}))
""")


def _share(path: Path, roles: list[tuple[str, int]], seconds: float, lock_wait_s: float) -> list[dict]:
    """Run one process per (role, threads) on ``path`` at once; what each reports."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), role, str(seconds), str(threads), str(lock_wait_s)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for role, threads in roles
    ]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready"
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        return [json.loads(proc.communicate(timeout=seconds + 120)[0]) for proc in procs]
    finally:
        for proc in procs:
            proc.kill()


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "shared.duckdb"
    Database(path, embedding_model="test-model", embedding_dim=4).schema_version()
    return path


def test_a_tight_writer_lets_every_reader_in_within_a_bounded_wait(tmp_path: Path) -> None:
    reports = _share(_file(tmp_path), [("writer", 1), ("reader", 1), ("reader", 1)], seconds=6, lock_wait_s=5)
    for report in reports:
        assert report["busy"] == 0, reports
        assert report["units"] >= 10, reports  # each made progress, the writer too
        assert report["max_wait"] < 3, reports


def test_threads_that_keep_the_file_in_use_let_the_other_process_in(tmp_path: Path) -> None:
    """The API's threads overlap, so the file never falls idle in that process: it must still take its turn."""
    reports = _share(_file(tmp_path), [("threads", 3), ("reader", 1)], seconds=6, lock_wait_s=5)
    for report in reports:
        assert report["busy"] == 0, reports
        assert report["units"] >= 10, reports
        assert report["max_wait"] < 3, reports
