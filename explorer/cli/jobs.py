"""``explorer jobs …``: follow, cancel and carry out background jobs (``--background`` on a long command)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from explorer.cli.choices import NICENESS
from explorer.cli.common import DbOption, JsonOption, R, print_json, run_reported, runtime_for

if TYPE_CHECKING:
    from explorer.jobs.kinds import Kind
    from explorer.records.jobs import Job

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Background jobs: long runs a worker process carries out (start one with --background).",
)

JobArg = Annotated[
    str, typer.Argument(help="The job's id, or its first digits (from --background or `explorer jobs list`).")
]
BackgroundOption = Annotated[
    bool,
    typer.Option(
        "--background",
        help="Queue the run as a job for a worker process and return at once with its id (on a database file a "
        "worker is started if none runs; on PostgreSQL, `explorer worker` processes carry it out).",
    ),
]


def run_kind(
    kind: Kind[Any, R],
    values: dict[str, Any],
    *,
    db: str | None,
    background: bool,
    as_json: bool,
    bar: tuple[str, str],
    summary: Callable[[R], list[str]],
) -> R | None:
    """What a command with a job kind does: ``--background`` queues the kind for a worker; otherwise this process
    carries out the very same kind (:meth:`Kind.report`) with a progress bar on stderr (``bar``: its label and
    unit) and prints its report as JSON or as summary lines. ``values`` left ``None`` are left to the kind's
    defaults either way. Returns the report (``None`` when queued) for the command's warnings and exit status.
    """
    if background:
        from explorer import jobs

        runtime = runtime_for(db)
        job = jobs.submit(runtime, kind.name, {k: v for k, v in values.items() if v is not None})
        if as_json:
            print_json({"job_id": job.id, "kind": job.kind, "status": job.status.value})
        else:
            typer.echo(f"job {job.id} queued ({job.kind}); follow it with: explorer jobs show {job.id}")
        if jobs.workers_alive(runtime) == 0:
            typer.echo(
                "warning: no worker takes this database's jobs now; it waits until one is started (explorer worker)",
                err=True,
            )
        return None
    return run_reported(db, as_json, bar, lambda runtime, progress: kind.report(runtime, values, progress), summary)


def _line(job: Job) -> str:
    return f"{job.id}  {job.created_at:%Y-%m-%d %H:%M}  {job.summary}" + (f"  ({job.error})" if job.error else "")


@app.command(name="list")
def list_(
    status: Annotated[
        str | None,
        typer.Option("--status", help="active (queued or running), queued, running, succeeded, failed, cancelled."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000, help="How many, newest first.")] = 20,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List jobs, newest first."""
    from explorer import jobs

    found = jobs.list_jobs(runtime_for(db, create=False), status=status, limit=limit)
    if as_json:
        print_json([job.to_json() for job in found])
    elif not found:
        typer.echo("no jobs")
    for job in found if not as_json else ():
        typer.echo(_line(job))


@app.command()
def show(
    job_id: JobArg,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the job has ended, then show it.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a job: status, progress, and its result or error once it has ended."""
    from explorer import jobs

    runtime = runtime_for(db, create=False)
    job = jobs.get(runtime, job_id)
    while wait and not job.status.ended:
        time.sleep(0.5)
        job = jobs.get(runtime, job_id)
    if as_json:
        print_json(job.to_json())
        return
    typer.echo(_line(job))
    if job.result is not None:
        print_json(job.result)


@app.command()
def cancel(job_id: JobArg, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Cancel a job: a queued one at once, a running one after the item it is on (what it finished stands)."""
    from explorer import jobs

    job = jobs.cancel(runtime_for(db), job_id)
    if as_json:
        print_json(job.to_json())
    else:
        typer.echo(f"job {job.id}: " + ("cancelled" if job.status.ended else "will stop after its current item"))


NiceOption = Annotated[
    int,
    typer.Option(
        "--nice",
        min=0,
        max=19,
        help="Lower the worker's CPU priority by this much, so the app and commands stay quick while it works.",
    ),
]


def _serve(db: str | None, concurrency: int, niceness: int, idle_exit: float | None = None) -> None:
    from explorer import jobs

    os.nice(niceness)
    carried = jobs.serve(lambda: runtime_for(db), concurrency, idle_exit_s=idle_exit)
    if carried is not None:
        typer.echo(f"worker done: {carried} jobs carried out", err=True)


def worker(
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", min=1, max=64, help="How many jobs to carry out at once (a PostgreSQL database only)."
        ),
    ] = 1,
    niceness: NiceOption = NICENESS,
    db: DbOption = None,
) -> None:
    """Carry out queued jobs until stopped (Ctrl-C or SIGTERM end the jobs under way as failed). On a PostgreSQL
    database, start as many workers as you like, on any machine that reaches it; a worker that dies has its jobs
    ended by the others within seconds. On a database file, one worker at a time (--background starts it).
    """
    _serve(db, concurrency, niceness)


@app.command(name="worker")
def worker_(
    idle_exit: Annotated[
        float | None,
        typer.Option("--idle-exit", min=0.0, help="End after this many seconds with nothing to do (default: never)."),
    ] = None,
    niceness: NiceOption = NICENESS,
    db: DbOption = None,
) -> None:
    """Carry out queued jobs (one worker per database file; a second one exits at once). Started on demand by
    --background; run it yourself to keep one waiting. On a PostgreSQL database it is `explorer worker`.
    """
    _serve(db, 1, niceness, idle_exit)
