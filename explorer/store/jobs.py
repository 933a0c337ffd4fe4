"""The jobs table: queue, claim, progress, cancel and end of long runs (see migration 010)."""

from __future__ import annotations

import json
from typing import Any

from explorer.records.jobs import Job, JobStatus
from explorer.store.database import Connection
from explorer.store.ids import full_id

_COLUMNS = (
    'id, kind, params, status, done, total, "current", result, error, cancel_requested, worker, created_at, '
    "started_at, finished_at, heartbeat_at, phase"
)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _job(row: tuple[Any, ...]) -> Job:
    (id_, kind, params, status, done, total, current, result, error, cancel, worker, created, started, finished,
     heartbeat, phase) = row  # fmt: skip
    return Job(
        str(id_), kind, _json(params) or {}, JobStatus(status), done, total, current, _json(result), error,
        bool(cancel), worker, created, started, finished, heartbeat, phase,
    )  # fmt: skip


def insert_job(con: Connection, job_id: str, kind: str, params: dict[str, Any]) -> Job:
    """Queue a job; the stored row."""
    row = con.execute(
        f"INSERT INTO jobs (id, kind, params) VALUES (?, ?, ?) RETURNING {_COLUMNS}",
        [job_id, kind, json.dumps(params, default=str)],
    ).fetchone()
    assert row is not None
    return _job(row)


def get_job(con: Connection, job_id: str) -> Job | None:
    """The job with this id or short id (:func:`~explorer.store.ids.full_id`), or None (a mistyped id is simply
    not found).
    """
    found_id = full_id(con, "jobs", job_id, "job")
    if found_id is None:
        return None
    row = con.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", [found_id]).fetchone()
    return None if row is None else _job(row)


def list_jobs(
    con: Connection, statuses: tuple[str, ...] = (), limit: int = 50, offset: int = 0, kind: str | None = None
) -> list[Job]:
    """Jobs, newest first, narrowed to some statuses and to one kind."""
    conditions: list[str] = []
    params: list[object] = []
    if statuses:
        conditions.append("status = ANY(?::VARCHAR[])")
        params.append(list(statuses))
    if kind is not None:
        conditions.append("kind = ?")
        params.append(kind)
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    rows = con.execute(
        f"SELECT {_COLUMNS} FROM jobs {where} ORDER BY created_at DESC, id LIMIT ? OFFSET ?", [*params, limit, offset]
    ).fetchall()
    return [_job(row) for row in rows]


_CLAIM = "UPDATE jobs SET status = 'running', worker = ?, started_at = now(), heartbeat_at = now() "


def claim_next(con: Connection, worker: str, kinds: tuple[str, ...]) -> Job | None:
    """Set the oldest queued job of a kind this worker runs running, as this worker's; None when none waits."""
    row = con.execute(
        f"{_CLAIM} WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND kind = ANY(?::VARCHAR[]) "
        f"ORDER BY created_at, id LIMIT 1) RETURNING {_COLUMNS}",
        [worker, list(kinds)],
    ).fetchone()
    return None if row is None else _job(row)


def claim(con: Connection, job_id: str, worker: str) -> Job | None:
    """Set this queued job running, as this worker's (a shared queue hands a worker its job by id); None when it
    is queued no longer (cancelled before it started).
    """
    row = con.execute(f"{_CLAIM} WHERE id = ? AND status = 'queued' RETURNING {_COLUMNS}", [worker, job_id]).fetchone()
    return None if row is None else _job(row)


def link_queue_job(con: Connection, job_id: str, queue_job_id: int) -> None:
    """Record which entry of the shared task queue carries the job out (migration 014)."""
    con.execute("UPDATE jobs SET queue_job_id = ? WHERE id = ?", [queue_job_id, job_id])


def queue_job_of(con: Connection, job_id: str) -> int | None:
    """The shared task queue's entry carrying the job out; None on the file, whose jobs are queued here alone."""
    row = con.execute("SELECT queue_job_id FROM jobs WHERE id = ?", [job_id]).fetchone()
    return None if row is None else row[0]


def install_queue(con: Connection, schema: str, lock: int) -> bool:
    """PostgreSQL only: create the shared task queue's tables (procrastinate's ``schema``) unless they exist;
    whether it did. Under the advisory ``lock``, so processes opening the queue at once create them once.
    """
    con.execute("SELECT pg_advisory_xact_lock(?)", [lock])
    if con.execute("SELECT to_regclass('procrastinate_jobs')").fetchone() != (None,):
        return False
    con.execute(schema)
    return True


def report_progress(con: Connection, job_id: str, done: int, total: int, current: str, phase: str = "") -> bool:
    """Record how far a running job got, in which phase (and that its worker lives); whether someone asked to
    cancel it.
    """
    row = con.execute(
        'UPDATE jobs SET done = ?, total = ?, "current" = ?, phase = ?, heartbeat_at = now() WHERE id = ? '
        "RETURNING cancel_requested",
        [max(0, done), max(0, total), current, phase, job_id],
    ).fetchone()
    return bool(row and row[0])


def beat(con: Connection, job_id: str) -> tuple[str, bool] | None:
    """Record that the job's worker lives (its run may be waiting on a model, writing nothing else); the job's
    status and cancel flag, or None when it is gone.
    """
    row = con.execute(
        "UPDATE jobs SET heartbeat_at = now() WHERE id = ? AND status = 'running' RETURNING status, cancel_requested",
        [job_id],
    ).fetchone()
    return (str(row[0]), bool(row[1])) if row is not None else state_of(con, job_id)


def state_of(con: Connection, job_id: str) -> tuple[str, bool] | None:
    """The job's status and cancel flag as stored now (None: no such job), by its full id."""
    row = con.execute("SELECT status, cancel_requested FROM jobs WHERE id = ?", [job_id]).fetchone()
    return None if row is None else (str(row[0]), bool(row[1]))


def request_cancel(con: Connection, job_id: str) -> None:
    """Ask a job to stop: a queued one is cancelled now, a running one by its worker at the next item."""
    con.execute(
        "UPDATE jobs SET cancel_requested = true, status = CASE WHEN status = 'queued' THEN 'cancelled' "
        "ELSE status END, finished_at = CASE WHEN status = 'queued' THEN now() ELSE finished_at END, "
        "error = CASE WHEN status = 'queued' THEN 'cancelled before it started' ELSE error END WHERE id = ?",
        [job_id],
    )


def finish(con: Connection, job_id: str, status: JobStatus, result: dict[str, Any] | None, error: str | None) -> None:
    """End a running job (only a running one: a job that was ended meanwhile keeps how it ended)."""
    con.execute(
        "UPDATE jobs SET status = ?, result = ?, error = ?, finished_at = now() WHERE id = ? AND status = 'running'",
        [status.value, None if result is None else json.dumps(result, default=str), error, job_id],
    )


def fail_orphans(con: Connection, orphans: dict[str, str]) -> None:
    """End running jobs whose worker is gone, each with the reason given."""
    for job_id, reason in orphans.items():
        con.execute(
            "UPDATE jobs SET status = 'failed', error = ?, finished_at = now() WHERE id = ? AND status = 'running'",
            [reason, job_id],
        )


_SILENT = "status = 'running' AND coalesce(heartbeat_at, started_at) < now() - CAST(? AS INTERVAL)"


def silent_jobs(con: Connection, silent_s: float) -> list[Job]:
    """Running jobs whose worker has written no heartbeat for ``silent_s`` seconds, by the database's clock (the
    one that wrote the heartbeats).
    """
    rows = con.execute(f"SELECT {_COLUMNS} FROM jobs WHERE {_SILENT}", [f"{silent_s} seconds"]).fetchall()
    return [_job(row) for row in rows]


def fail_silent(con: Connection, job_id: str, silent_s: float, reason: str) -> bool:
    """Fail a running job whose worker has written no heartbeat for ``silent_s`` seconds; whether it did. One
    update, so a heartbeat written since the job was found silent keeps it running.
    """
    row = con.execute(
        f"UPDATE jobs SET status = 'failed', error = ?, finished_at = now() WHERE id = ? AND {_SILENT} RETURNING id",
        [reason, job_id, f"{silent_s} seconds"],
    ).fetchone()
    return row is not None


def server_up_for(con: Connection, seconds: float) -> bool:
    """PostgreSQL only: whether the server started more than ``seconds`` ago (after a restart every heartbeat is
    old, the living workers' too, until they reconnect). Its own clock, as the heartbeats'.
    """
    row = con.execute(
        "SELECT pg_postmaster_start_time() < now() - CAST(? AS INTERVAL)", [f"{seconds} seconds"]
    ).fetchone()
    return bool(row and row[0])


def live_queue_workers(con: Connection, within_s: float) -> int:
    """PostgreSQL only: the shared queue's workers that beat in the last ``within_s`` seconds (none before the
    queue's tables exist).
    """
    if con.execute("SELECT to_regclass('procrastinate_workers')").fetchone() == (None,):
        return 0
    row = con.execute(
        "SELECT count(*) FROM procrastinate_workers WHERE last_heartbeat > now() - make_interval(secs => ?)",
        [within_s],
    ).fetchone()
    return int(row[0]) if row else 0
