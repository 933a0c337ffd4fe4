"""Corpus commands: ingest files, count what the database holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from explorer.cli.common import (
    BudgetOption,
    DbOption,
    JsonOption,
    budget_for,
    echo_load_errors,
    print_json,
    run_reported,
    runtime_for,
    spent_line,
)
from explorer.cli.jobs import BackgroundOption, submit
from explorer.projection import place_new
from explorer.reading.ingest import IngestReport, ingest_paths
from explorer.reading.loaders import DEFAULT_MAX_MB
from explorer.records import Progress
from explorer.runtime import Runtime
from explorer.views import store_counts


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
    max_mb: Annotated[float, typer.Option("--max-mb", min=0.0, help="Refuse files larger than this.")] = DEFAULT_MAX_MB,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Read documents into the knowledge base (the READING cycle)."""
    if background:  # the worker reads the files where they are: give it paths that do not depend on our folder
        params = {"paths": [str(p.resolve()) for p in paths], "domain": domain, "year": year, "max_mb": max_mb}
        submit(runtime_for(db), "ingest", {**params, "budget_cents": budget_cents}, as_json)
        return

    def read(runtime: Runtime, progress: Progress) -> IngestReport:
        report = ingest_paths(
            runtime, paths, domain=domain, year=year, max_mb=max_mb, progress=progress, budget=budget_for(budget_cents)
        )
        if report.documents_added:
            place_new(runtime)  # new nodes join a fitted map where their neighbours are (cheap; never fits)
        return report

    report = run_reported(
        db,
        as_json,
        ("reading", "doc"),
        read,
        lambda report: [
            f"{report.documents_added} documents added, {report.documents_skipped} already present; "
            f"{report.chunks_added} chunks, {report.syntheses_added} syntheses, "
            f"{report.entity_insights_added} entity insights",
            spent_line(report.spent_cents, report.budget_exhausted),
        ],
    )
    echo_load_errors(report.errors)
    if report.failed:
        raise typer.Exit(1)


def stats(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Count documents, nodes by type, relations and the wander records."""
    counts = store_counts(runtime_for(db))
    if as_json:
        print_json(counts)
        return
    for key, value in counts.items():
        if isinstance(value, dict):
            for sub, number in value.items():
                typer.echo(f"  {sub:<16} {number}")
        else:
            typer.echo(f"{key:<18} {value}")
