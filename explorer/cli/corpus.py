"""Corpus commands: ingest files, list the documents read (by tag), count what the database holds."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from explorer.cli.choices import ENRICH_AT_ONCE, MAX_MB, Enrich
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
    from explorer.reading.ingest import IngestReport, ReadingOptions


def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Files or folders to read: .md, .rst, .adoc, .html, .pdf, .txt, .json (a chat export), .jsonl.",
            show_default=False,
        ),
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option(
            help="Domain for documents that do not name one; documents already present take it too, unless one "
            "was given before (by the file, --domain or `explorer domains rename`)."
        ),
    ] = None,
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
    enrich: Annotated[
        Enrich,
        typer.Option(
            help="When the model's steps (syntheses, entities and their insights) of what is read are asked: now; "
            "later, leaving the notes placed, linked, searchable and walkable at the embedding model's speed "
            f"(`explorer enrich` asks them); auto: now for at most {ENRICH_AT_ONCE:,} new chunks, later for more."
        ),
    ] = "auto",
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="After reading, keep the folders in step while this runs: each batch of changes is read (a "
            "deleted note retires its documents) and summed up in one line. Ctrl-C stops.",
        ),
    ] = False,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Read documents into the knowledge base (the READING cycle), in step with the files: reading a folder
    again reads what changed, retires the documents of notes edited or deleted, and skips unchanged files.

    Exit status 1 when nothing could be ingested, 3 when documents were stored but some of the model's steps
    failed: they are kept pending, and `explorer ingest --retry-failed` completes them.
    """
    from explorer.jobs.kinds import INGEST

    if not paths and not retry_failed:
        raise typer.BadParameter("give files or folders to read, or --retry-failed", param_hint="PATHS")
    if watch:
        _check_watchable(paths or [], background)
    # a worker reads the files where they are: give it paths that do not depend on our folder
    given = [str(p.resolve() if background else p) for p in paths or []]
    values = {
        "paths": given,
        "domain": domain,
        "year": year,
        "max_mb": max_mb,
        "budget_cents": budget_cents,
        "retry_failed": retry_failed,
        "enrich": enrich,
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
    if watch:
        from explorer.reading.ingest import ReadingOptions

        _watch(paths or [], db, ReadingOptions(year, domain, max_mb, enrich=enrich), budget_cents, as_json)
        return
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


def enrich(
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Ask the model for every step of reading still pending: the syntheses, entities and insights a fast
    ingest left for later (`explorer ingest --enrich later`, or a large folder), and the steps that failed.

    Exit status 3 when some of them failed again: they stay pending for the next run.
    """
    from explorer.jobs.kinds import INGEST

    report = run_kind(
        INGEST,
        {"retry_failed": True, "budget_cents": budget_cents},
        db=db,
        background=background,
        as_json=as_json,
        bar=("reading", "doc"),
        summary=lambda report: _summary(report.reading),
    )
    if report is not None and report.reading.items_failed:
        typer.echo(f"error: {counted(report.reading.items_failed, 'step')} failed again, kept pending", err=True)
        raise typer.Exit(PARTLY_DONE)


def _check_watchable(paths: list[Path], background: bool) -> None:
    if background:
        raise typer.BadParameter("--watch follows the folders from here; it cannot run in the background")
    for path in paths:
        if not path.expanduser().is_dir():
            raise typer.BadParameter(f"--watch follows folders: {path} is not one", param_hint="PATHS")


def _watch(
    folders: list[Path], db: str | None, options: ReadingOptions, budget_cents: float | None, as_json: bool
) -> None:
    """Read each batch of changes under ``folders`` (watchfiles waits until they settle) until Ctrl-C, one summary
    line (or JSON object) a batch; each batch has the budget a run of ingest would.
    """
    import watchfiles

    from explorer.providers.budget import Budget
    from explorer.reading.discovery import in_notes
    from explorer.reading.ingest import sync_changes
    from explorer.reading.sync import file_key

    runtime = runtime_for(db)
    roots = [Path(file_key(folder)) for folder in folders]  # as the files read were stored: links not resolved
    typer.echo(f"watching {', '.join(map(str, folders))} (Ctrl-C stops)", err=True)
    try:
        for changes in watchfiles.watch(*roots, watch_filter=lambda _, path: in_notes(Path(path), roots)):
            budget = Budget(runtime.settings.cloud_budget_cents if budget_cents is None else budget_cents)
            report = sync_changes(runtime, roots, [path for _, path in changes], options=options, budget=budget)
            if all(f.status == "skipped" for f in report.files) and not report.errors:
                continue  # nothing read: an editor's swap file, a .DS_Store, an attachment saved
            if as_json:
                print_json(report.to_json(), indent=None)
            else:
                typer.echo(f"{datetime.now():%H:%M:%S} " + "; ".join(_summary(report)[:-1]))
            echo_load_errors(report.errors)
    except KeyboardInterrupt:  # Ctrl-C: what was written stands; a batch cut short is read again next time
        pass
    typer.echo("stopped watching", err=True)


def _summary(report: IngestReport) -> list[str]:
    from explorer.reading.sync import describe_files

    documents = {
        "added": report.documents_added,
        "changed": report.documents_changed,
        "unchanged": report.documents_unchanged,
        "removed": report.documents_removed,
        "already read under another name": report.documents_skipped,
    }
    done = ", ".join(f"{count} {what}" for what, count in documents.items() if count) or "none read"
    lines = [
        *describe_files(report.files),
        f"documents: {done}; {counted(report.chunks_added, 'chunk')}, "
        f"{counted(report.syntheses_added, 'synthesis', 'syntheses')}, "
        f"{counted(report.entity_insights_added, 'entity insight')}",
    ]
    if report.domains_set:
        lines.append(f"{counted(report.domains_set, 'document')} already present took the domain given now")
    if report.topics:
        lines.append(f"topics of the documents without a domain: {', '.join(report.topics)}")
    if report.items_deferred:
        lines.append(
            f"{counted(report.items_deferred, 'step')} of enrichment (syntheses, entities) left for later: "
            "`explorer enrich` asks them (--background: in a worker)"
        )
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


def documents(
    tag: Annotated[
        str | None,
        typer.Option(help="Only documents with this tag, or a tag nested under it (`project` finds `project/alpha`)."),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the documents read, with their year, domain and tags (a vault note's tags and aliases too)."""
    from explorer.views import find_documents

    found = find_documents(runtime_for(db, create=False), tag=tag)
    if as_json:
        print_json(
            [
                {
                    "id": d.id,
                    "title": d.title,
                    "path": d.path,
                    "year": d.year,
                    "domain": d.domain,
                    "tags": list(d.tags),
                    "aliases": list(d.aliases),
                    "links": list(d.links),
                }
                for d in found
            ]
        )
        return
    for d in found:
        tags = " ".join(f"#{t}" for t in d.tags)
        typer.echo(f"{d.year or '—':>4}  {d.domain or '—':<12} {d.title}" + (f"  {tags}" if tags else ""))
    typer.echo(f"{counted(len(found), 'document')}" + (f" tagged #{tag.lstrip('#')}" if tag else ""))
