"""Corpus commands: ingest files, count what the database holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from explorer.cli.choices import MAX_MB
from explorer.cli.common import (
    BudgetOption,
    DbOption,
    JsonOption,
    MaxMbOption,
    echo_load_errors,
    print_json,
    runtime_for,
    spent_line,
)
from explorer.cli.jobs import BackgroundOption, run_kind

if TYPE_CHECKING:
    from explorer.reading.ingest import IngestReport


def ingest(
    paths: Annotated[
        list[Path], typer.Argument(help="Files (.txt, .md, .jsonl) or folders to read.", show_default=False)
    ],
    domain: Annotated[str | None, typer.Option(help="Domain for documents that do not name one.")] = None,
    year: Annotated[
        # the years explorer.reading.loaders accepts in a file, so a .txt cannot be given one a .md would refuse
        int | None,
        typer.Option(min=1, max=2999, help="Year for documents that do not name one."),
    ] = None,
    max_mb: MaxMbOption = MAX_MB,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Read documents into the knowledge base (the READING cycle)."""
    from explorer.jobs.kinds import INGEST

    # a worker reads the files where they are: give it paths that do not depend on our folder
    given = [str(p.resolve() if background else p) for p in paths]
    values = {"paths": given, "domain": domain, "year": year, "max_mb": max_mb, "budget_cents": budget_cents}
    report = run_kind(
        INGEST,
        values,
        db=db,
        background=background,
        as_json=as_json,
        bar=("reading", "doc"),
        summary=lambda report: _summary(report.reading),
    )
    if report is None:
        return
    echo_load_errors(report.reading.errors)
    if report.reading.failed:
        raise typer.Exit(1)


def _summary(report: IngestReport) -> list[str]:
    return [
        f"{report.documents_added} documents added, {report.documents_skipped} already present; "
        f"{report.chunks_added} chunks, {report.syntheses_added} syntheses, "
        f"{report.entity_insights_added} entity insights",
        spent_line(report.spent_cents, report.budget_exhausted),
    ]


def stats(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Count documents, nodes by type, relations and the wander records."""
    from explorer.views import store_counts

    counts = store_counts(runtime_for(db, create=False))
    if as_json:
        print_json(counts)
        return
    for key, value in counts.items():
        if isinstance(value, dict):
            for sub, number in value.items():
                typer.echo(f"  {sub:<16} {number}")
        else:
            typer.echo(f"{key:<18} {value}")
