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
from explorer.wording import counted

PARTLY_DONE = 3  # exit status: stored, but some of the model's steps failed (kept pending)

if TYPE_CHECKING:
    from explorer.reading.ingest import IngestReport


def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Files or folders to read: .md, .rst, .adoc, .html, .pdf, .txt, .json (a chat export), .jsonl.",
            show_default=False,
        ),
    ] = None,
    domain: Annotated[str | None, typer.Option(help="Domain for documents that do not name one.")] = None,
    year: Annotated[
        # the years explorer.reading.loaders accepts in a file, so a .txt cannot be given one a .md would refuse
        int | None,
        typer.Option(min=1, max=2999, help="Year for documents that do not name one."),
    ] = None,
    max_mb: MaxMbOption = MAX_MB,
    budget_cents: BudgetOption = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Ask the model again for every step an earlier ingest left pending (it failed, or the budget "
            "refused it). Ingesting the same files again does it for theirs.",
        ),
    ] = False,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Read documents into the knowledge base (the READING cycle).

    Exit status 1 when nothing could be ingested, 3 when documents were stored but some of the model's steps
    failed: they are kept pending, and `explorer ingest --retry-failed` completes them.
    """
    from explorer.jobs.kinds import INGEST

    if not paths and not retry_failed:
        raise typer.BadParameter("give files or folders to read, or --retry-failed", param_hint="PATHS")
    # a worker reads the files where they are: give it paths that do not depend on our folder
    given = [str(p.resolve() if background else p) for p in paths or []]
    values = {
        "paths": given,
        "domain": domain,
        "year": year,
        "max_mb": max_mb,
        "budget_cents": budget_cents,
        "retry_failed": retry_failed,
    }
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
    if report.reading.items_failed:
        typer.echo(
            f"error: {counted(report.reading.items_failed, 'step')} of the model failed and "
            f"{'is' if report.reading.items_failed == 1 else 'are'} kept pending; "
            "`explorer ingest --retry-failed` completes them",
            err=True,
        )
        raise typer.Exit(PARTLY_DONE)


def _summary(report: IngestReport) -> list[str]:
    lines = [
        f"{counted(report.documents_added, 'document')} added, {report.documents_skipped} already present; "
        f"{counted(report.chunks_added, 'chunk')}, {counted(report.syntheses_added, 'synthesis', 'syntheses')}, "
        f"{counted(report.entity_insights_added, 'entity insight')}",
    ]
    if report.items_completed or report.items_failed:
        lines.append(
            f"{counted(report.items_completed, 'pending step')} completed, "
            f"{report.items_failed} failed and kept pending"
        )
    return [*lines, spent_line(report.spent_cents, report.budget_exhausted)]


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
