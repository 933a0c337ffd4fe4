"""``explorer consolidate …``: import experiences, consolidate them into patterns, query what was learnt."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from explorer.cli.choices import MAX_MB, Source
from explorer.cli.common import (
    BudgetOption,
    DbOption,
    JsonOption,
    MaxMbOption,
    budget_for,
    print_json,
    runtime_for,
    spent_line,
)
from explorer.cli.jobs import BackgroundOption, run_kind
from explorer.cli.run_outcome import asked_in, exit_if_nothing_came
from explorer.consolidation.schedule import Trigger

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Consolidate experiences into verified patterns, an abstraction ladder and their connections.",
)


@app.command(name="import")
def import_(
    path: Annotated[Path, typer.Argument(help="A JSON-lines log of experiences.", show_default=False)],
    max_mb: MaxMbOption = MAX_MB,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import experiences (moves, strategy applications, insights); bad lines are reported and skipped."""
    from explorer.consolidation import service as consolidation_service

    report = consolidation_service.import_log(runtime_for(db), path, max_mb=max_mb)
    if as_json:
        print_json(report.to_json())
    else:
        typer.echo(f"{report.experiences_added} experiences imported, {report.experiences_known} already present")
    for error in report.errors:
        typer.echo(f"error: {report.path}:{error['line']}: {error['message']}", err=True)
    if report.errors and not report.experiences_added and not report.experiences_known:
        raise typer.Exit(1)


def summary(data: dict[str, Any]) -> list[str]:
    """A run's report as the lines a person reads (``--json`` prints the report itself)."""
    if data["status"] == "not_due":
        return [f"not due ({data['trigger']}): {data['reason']}"]
    if data["status"] == "skipped":
        return [f"nothing to consolidate from {data['source']}: no experiences"]
    check = data["verification"]
    ratio = f"{data['compression_ratio']:g}:1" if data["compression_ratio"] else "none"
    lines = [
        f"{data['experiences']} experiences, {data['triaged']} kept by triage, {len(data['patterns'])} patterns "
        f"(compression {ratio}), a ladder of {data['ladder_levels']} levels, {data['connections']} connections; "
        f"pruned {data['pruned_redundant']} redundant and {data['pruned_low_utility']} of low utility",
        f"verification: {check['status']} (score {check['score']:.2f})" if check else "verification: not run",
    ]
    lines += [f"  {p['name']}: {p['description']}" for p in data["patterns"]]
    return [*lines, spent_line(data["spent_cents"], data["budget_exhausted"])]


@app.command()
def run(
    source: Annotated[
        Source, typer.Option("--source", help="Whose experiences: wander, dreams, imported or all.")
    ] = "all",
    trigger: Annotated[
        Trigger,
        typer.Option(
            "--trigger",
            help="Why now: manual and session-complete always run; periodic runs when 30 minutes have passed since "
            "the last run, threshold when 50 new experiences wait and 10 minutes have passed.",
        ),
    ] = "manual",
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Triage, compress, abstract, integrate and verify the experiences; store what the run makes."""
    from explorer.jobs.kinds import CONSOLIDATE_RUN

    report = run_kind(
        CONSOLIDATE_RUN,
        {"source": source, "trigger": trigger, "budget_cents": budget_cents},
        db=db,
        background=background,
        as_json=as_json,
        bar=("consolidating", "phase"),
        summary=lambda report: summary(report.to_json()),
    )
    if report is None:
        return
    data = report.to_json()
    # a cluster came when the model's answer made it a pattern; a run with too few experiences to cluster asks nothing
    exit_if_nothing_came(asked_in("cluster", data["clusters"], len(data["patterns"]), data))
    if not as_json:
        for line in data["warnings"]:
            typer.echo(f"warning: {line}", err=True)


@app.command()
def schedule(
    source: Annotated[
        Source, typer.Option("--source", help="Whose experiences: wander, dreams, imported or all.")
    ] = "all",
    every: Annotated[float, typer.Option("--every", min=0.1, help="Seconds between two checks.")] = 60.0,
    checks: Annotated[
        int | None, typer.Option("--checks", min=1, help="Stop after this many checks (default: until Ctrl-C).")
    ] = None,
    budget_cents: BudgetOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Keep consolidating while it runs: every --every seconds, run when the periodic trigger (30 minutes since
    the last run) or the threshold trigger (50 new experiences, 10 minutes apart) calls for it.
    """
    from explorer.consolidation import service as consolidation_service

    runtime = runtime_for(db)
    done = 0
    while checks is None or done < checks:
        if done:
            time.sleep(every)
        report = consolidation_service.run_due(runtime, source, budget=budget_for(budget_cents))
        done += 1
        if report is None:
            continue
        if as_json:
            print_json(report.to_json(), indent=None)
        else:
            data = report.to_json()
            typer.echo(f"{data['trigger']} ({data['reason']}): {summary(data)[0]}")


@app.command()
def query(
    situation: Annotated[str, typer.Argument(help="The situation to find know-how for.", show_default=False)],
    limit: Annotated[int, typer.Option("--limit", min=1, max=100, help="Most patterns to return.")] = 5,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The patterns that apply to a situation, and the abstractions above them."""
    from explorer.consolidation import service as consolidation_service

    run_id, patterns, abstractions = consolidation_service.query_knowledge(
        runtime_for(db, create=False), situation, limit=limit
    )
    if as_json:
        print_json(consolidation_service.knowledge_json(run_id, patterns, abstractions))
        return
    if not patterns:
        typer.echo("no pattern applies to this situation")
    for hit in patterns:
        typer.echo(f"{hit.score:.2f}  {hit.item.name}: {hit.item.statement}")
        if hit.pattern:
            typer.echo(f"      if {'; '.join(hit.pattern.conditions)} → {'; '.join(hit.pattern.actions)}")
    for above in abstractions:
        typer.echo(f"level {above.item.level}: {above.item.name}: {above.item.statement}")
