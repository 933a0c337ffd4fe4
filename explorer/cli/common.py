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
    """A ``(done, total, note)`` callback drawing a tqdm bar on stderr, so --json output stays clean.

    The bar is made on the first call that gives a total, when the engine knows it.
    """
    from tqdm import tqdm

    from explorer.text import shorten

    bars: list[Any] = []

    def update(done: int, total: int, note: str) -> None:
        if not bars:
            if total == 0:  # a note before the engine knows how much there is ("the model loads"): no bar yet
                return
            bars.append(
                tqdm(total=total, desc=label, unit=unit, file=sys.stderr, dynamic_ncols=True, disable=not enabled)
            )
        bars[0].total = total
        bars[0].n = done
        bars[0].set_postfix_str(shorten(note, chars=40), refresh=True)  # a dream's title, cut between words

    try:
        yield update
    finally:
        if bars:
            bars[0].close()


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
