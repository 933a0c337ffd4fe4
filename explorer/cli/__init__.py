"""The ``explorer`` command. Each area of the product has its own module here,
with the same names as the engine functions it calls.
"""

from __future__ import annotations

import sys

import typer

from explorer.cli import corpus, demo, dream, export, projection, wander
from explorer.errors import ExplorerError

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Dream Explorer: wander and dream over a body of knowledge, then review what was found.",
)
app.command()(corpus.ingest)
app.command()(corpus.stats)
app.command()(demo.demo)
app.command()(export.export)
app.command(name="map")(projection.map_)
app.add_typer(dream.app, name="dream")
app.add_typer(wander.app, name="wander")


def main() -> None:
    """Entry point: user errors become one line on stderr and exit status 1."""
    try:
        # Without standalone mode click returns an Exit's code instead of raising it.
        status = app(standalone_mode=False)
        if isinstance(status, int) and status:
            sys.exit(status)
    except ExplorerError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        sys.exit(130)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as exc:
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
