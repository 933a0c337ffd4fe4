"""What every command shares: the --db and --json options, the runtime, output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from explorer.runtime import Runtime, open_runtime
from explorer.settings import load_settings

DbOption = Annotated[
    Path | None,
    typer.Option("--db", envvar="EXPLORER_DB", help="DuckDB file to use (created on first use).", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]


def runtime_for(db: Path | None) -> Runtime:
    return open_runtime(load_settings().with_db(db))


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")


@contextmanager
def progress_callback(label: str, unit: str, enabled: bool = True) -> Iterator[Callable[[int, int, str], None]]:
    """A ``(done, total, note)`` callback drawing a tqdm bar on stderr, so --json output stays clean.

    The bar is made on the first call, when the engine knows the total.
    """
    from tqdm import tqdm

    bars: list[Any] = []

    def update(done: int, total: int, note: str) -> None:
        if not bars:
            bars.append(
                tqdm(
                    total=total,
                    desc=label,
                    unit=unit,
                    file=sys.stderr,
                    dynamic_ncols=True,
                    disable=not enabled or total == 0,
                )
            )
        bars[0].total = total
        bars[0].n = done
        bars[0].set_postfix_str(note[:40], refresh=True)

    try:
        yield update
    finally:
        if bars:
            bars[0].close()
