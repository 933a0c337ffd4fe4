"""The ``explorer`` command. Each area of the product has its own module here,
with the same names as the engine functions it calls.
"""

from __future__ import annotations

import sys

import typer

from explorer.cli import corpus, demo, dream, export, projection, wander
from explorer.errors import ExplorerError, Remedy

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


# How the command line says what would fix an engine error (the app phrases the same remedies as pages).
HINTS: dict[Remedy, str] = {
    Remedy.INGEST: "read documents first: explorer ingest PATH",
    Remedy.LIST_SESSIONS: "list sessions with: explorer wander list",
    Remedy.LIST_CRYSTALS: "list crystals with: explorer wander crystals",
    Remedy.RESUME_SESSION: "resume it with: explorer wander resume {subject}",
    Remedy.NEW_SESSION: "start a new session: explorer wander new",
    Remedy.FORCE_REVIEW: "add --force to change the decision",
    Remedy.OTHER_DATABASE: "use another --db, or set EXPLORER_EMBEDDING_MODEL to the model it was built with",
}


def error_line(exc: ExplorerError) -> str:
    """The one line the CLI prints for a user error: the engine's message, then the command that would fix it."""
    hint = HINTS.get(exc.remedy) if exc.remedy else None
    return f"error: {exc}" + (f"; {hint.format(subject=exc.subject or 'ID')}" if hint else "")


def main() -> None:
    """Entry point: user errors become one line on stderr and exit status 1."""
    try:
        # Without standalone mode click returns an Exit's code instead of raising it.
        status = app(standalone_mode=False)
        if isinstance(status, int) and status:
            sys.exit(status)
    except ExplorerError as exc:
        sys.stderr.write(error_line(exc) + "\n")
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
