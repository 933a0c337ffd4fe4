"""What every command shares: the --db and --json options, the runtime, progress and output.

The command line starts at once because building it imports no engine: typer reads every command's options
when it starts, so the ``explorer.cli`` modules import only typer, the standard library and the light bottom
layer at their top, and each command imports the engine it calls when it runs (``tests/cli/test_startup.py``
holds them to it; ``python -m bench.cli`` measures it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

if TYPE_CHECKING:
    from explorer.jobs.kinds import Report
    from explorer.providers.budget import Budget
    from explorer.records import Progress
    from explorer.runtime import Runtime

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="EXPLORER_DB",
        help="DuckDB file, or postgresql://user:pass@host/dbname of a shared database (commands that write create "
        "it; those that only read refuse one that does not exist).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]
BudgetOption = Annotated[
    float | None,
    typer.Option(
        "--budget-cents",
        min=0.0,
        max=10_000_000.0,
        help="Most this run may spend on priced models, in cents; a call it cannot cover at its worst case is "
        "not made (default: EXPLORER_BUDGET_CENTS, 500).",
        show_default=False,
    ),
]


MaxMbOption = Annotated[float, typer.Option("--max-mb", min=0.0, help="Refuse files larger than this.")]


def budget_for(cents: float | None) -> Budget | None:
    """The run's budget from ``--budget-cents``; ``None`` leaves the engine to the settings' default."""
    from explorer.providers.budget import Budget

    return None if cents is None else Budget(cents)


def spent_line(spent_cents: float, exhausted: bool) -> str:
    """What a run spent, and whether the budget stopped it, for the summary lines."""
    return f"spent {spent_cents:.2f} ¢" + ("; the budget ran out, some calls were not made" if exhausted else "")


R = TypeVar("R", bound="Report")  # any engine report a command prints: it knows its own --json form


def runtime_for(db: str | Path | None, *, create: bool = True) -> Runtime:
    """The engine for this command, on ``--db`` (or the settings' database) with the configured models.

    A command that only reads passes ``create=False``: a mistyped path is then refused, where it would have
    made the folders and an empty database and printed zeros as if they were the answer.
    """
    from explorer.runtime import open_runtime
    from explorer.settings import load_settings

    return open_runtime(load_settings().with_db(db), create=create)


def print_json(value: Any, indent: int | None = 2) -> None:
    """One JSON object on stdout, so scripts can read a command's result (dates and ids as text); ``indent=None``
    puts it on one line, for a command that prints one object per event.
    """
    sys.stdout.write(json.dumps(value, indent=indent, default=str) + "\n")
    sys.stdout.flush()


@contextmanager
def progress_callback(label: str, unit: str, enabled: bool = True) -> Iterator[Progress]:
    """A :class:`~explorer.records.Progress` drawn on stderr, so --json output stays clean: on a terminal a rich
    line with the run's phase, a bar (a spinner while the phase cannot be counted), the item it is on and the
    time taken; elsewhere (a log, a pipe) a line when a phase starts and every few seconds within it.
    ``unit`` names what a phase counts when it gives no phase name.
    """
    from rich.console import Console

    from explorer.records import unheard

    if not enabled:
        yield unheard
        return
    console = Console(stderr=True, highlight=False)
    if console.is_terminal:
        with _drawn(console, label) as update:
            yield update
    else:
        with _logged(console, label, unit) as update:
            yield update


LOG_EVERY_S = 5.0  # how often a log (stderr not a terminal) hears how far a phase got
# A run over sooner says nothing of its progress in a log: progress is for runs longer than this, and a user error
# found at once stays the one line on stderr it must be.
QUIET_S = 2.0


def _heading(label: str, phase: str) -> str:
    """The command's label before the run's phase, once: "reading: embedding", but "dreaming", not "dreaming:
    dreaming".
    """
    if not phase or phase == label:
        return label
    return phase if phase.startswith(f"{label}: ") else f"{label}: {phase}"


@contextmanager
def _logged(console: Any, label: str, unit: str) -> Iterator[Progress]:
    """Progress as lines of text: each phase as it starts and its count at most every :data:`LOG_EVERY_S`, held
    back for the first :data:`QUIET_S` (then written at once, by a timer, as a phase may be silent for long).
    """
    import threading
    import time

    from explorer.text import shorten

    lock = threading.Lock()
    started = time.monotonic()
    held: list[tuple[str, str]] = []  # (line, phase) of each phase begun while quiet, its latest line
    shown: dict[str, Any] = {"phase": None, "at": 0.0, "quiet": True}

    def write(line: str, phase: str) -> None:
        console.print(line, markup=False, soft_wrap=True)  # a note may be a model's words: never markup
        shown.update(phase=phase, at=time.monotonic())

    def speak() -> None:
        with lock:
            shown["quiet"] = False
            for line, phase in held:
                write(line, phase)
            held.clear()

    def update(done: int, total: int, note: str, phase: str = "") -> None:
        count = f"{done}/{total} {unit if not phase else ''}".rstrip() if total else ""
        parts = [part for part in (count, shorten(note, chars=40)) if part]
        line = _heading(label, phase) + (" · " + " · ".join(parts) if parts else "…")
        with lock:
            if shown["quiet"] and time.monotonic() - started < QUIET_S:
                if held and held[-1][1] == phase:
                    held[-1] = (line, phase)  # the same phase further on: its latest line stands
                else:
                    held.append((line, phase))
                return
        if shown["quiet"]:
            speak()
        with lock:
            if phase != shown["phase"] or time.monotonic() - shown["at"] >= LOG_EVERY_S:
                write(line, phase)

    timer = threading.Timer(QUIET_S, speak)
    timer.daemon = True
    timer.start()
    try:
        yield update
    finally:
        timer.cancel()


@contextmanager
def _drawn(console: Any, label: str) -> Iterator[Progress]:
    """Progress as one live rich line: spinner, phase, bar (pulsing when uncounted), count, note, time taken."""
    from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Display

    from explorer.text import shorten

    display = Display(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}", markup=False),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )

    with display:
        task = display.add_task(label, total=None, note="")
        shown = [""]

        def update(done: int, total: int, note: str, phase: str = "") -> None:
            display.update(
                task,
                description=_heading(label, phase),
                total=total or None,
                completed=done,
                note=shorten(note, chars=40),  # a dream's title, cut between words
                refresh=phase != shown[0],  # a new phase drawn at once, before its work starts
            )
            shown[0] = phase

        yield update


def run_reported(
    db: str | None,
    as_json: bool,
    bar: tuple[str, str],
    run: Callable[[Runtime, Progress], R],
    summary: Callable[[R], list[str]],
) -> R:
    """What every long command does: open the runtime, run with a progress bar on stderr (``bar`` is its label
    and unit; silent under ``--json``), then print the report as JSON or as summary lines. Returns the report
    for the command's own warnings and exit code.
    """
    runtime = runtime_for(db)
    with progress_callback(*bar, enabled=not as_json) as progress:
        report = run(runtime, progress)
    if as_json:
        print_json(report.to_json())
    else:
        for line in summary(report):
            typer.echo(line)
    return report


def echo_load_errors(errors: list[dict[str, Any]]) -> None:
    """Each file or record that could not be read, as ``error: path:line: message`` on stderr, so a person can
    fix the input and run the command again.
    """
    for error in errors:
        where = f"{error['path']}:{error['line']}" if error["line"] else error["path"]
        typer.echo(f"error: {where}: {error['message']}", err=True)
