"""``explorer dream …``: the night's mechanisms over the knowledge base."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from explorer.cli.common import (
    BudgetOption,
    DbOption,
    JsonOption,
    R,
    budget_for,
    echo_load_errors,
    run_reported,
    runtime_for,
    spent_line,
)
from explorer.cli.jobs import BackgroundOption, submit
from explorer.dreaming import service
from explorer.dreaming.exploration import ExplorationConfig
from explorer.records import Progress
from explorer.runtime import Runtime

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Dream over the memory graph: REM dreams, REM exploration, fusion, or a whole night.",
)

DreamsOption = Annotated[int, typer.Option("--dreams", min=1, max=10_000, help="How many dreams to dream.")]
SeedOption = Annotated[
    int | None,
    typer.Option(
        "--seed",
        min=0,
        max=2**32 - 1,  # what numpy's generators take without complaint, and the range fresh seeds are drawn from
        help="Random seed, to repeat a run (default: a fresh one, reported).",
    ),
]
# The years a document may carry (explorer.reading.loaders refuses any other in a file).
YearOption = Annotated[
    int | None,
    typer.Option("--year", min=1, max=2999, help="The current year (default: the latest in the corpus)."),
]

AsOfOption = Annotated[
    datetime | None,
    typer.Option(
        "--as-of",
        formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"],
        help="Dream as of this date (YYYY-MM-DD, UTC): memories fade, and are used, as they would by then "
        "(default: now).",
    ),
]


def _utc(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def _background(db: DbOption, kind: str, params: dict[str, Any], as_json: bool) -> None:
    """``--background``: queue the run as a job (options left at their defaults are left to the job's)."""
    submit(runtime_for(db), kind, {k: v for k, v in params.items() if v is not None}, as_json)


def _dream(
    db: DbOption,
    as_json: bool,
    bar: tuple[str, str],
    run: Callable[[Runtime, Progress], R],
    summary: Callable[[R], list[str]],
    errors: Callable[[R], list[str]],
) -> None:
    """What every dreaming command does: run with a progress bar (``bar`` is its label and unit), then print
    the report as JSON or as summary lines, with the items that failed as warnings on stderr.
    """
    report = run_reported(db, as_json, bar, run, summary)
    if as_json:
        return
    for error in errors(report):
        typer.echo(f"warning: {error}", err=True)


@app.command()
def rem(
    dreams: DreamsOption = 10,
    year: YearOption = None,
    seed: SeedOption = None,
    as_of: AsOfOption = None,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The REM cycle: dream over three nodes at a time, one from the current year."""
    if background:
        params = {"dreams": dreams, "year": year, "seed": seed, "as_of": as_of, "budget_cents": budget_cents}
        _background(db, "dream.rem", params, as_json)
        return
    _dream(
        db,
        as_json,
        ("dreaming", "dream"),
        lambda runtime, progress: service.run_rem(
            runtime,
            dreams=dreams,
            current_year=year,
            seed=seed,
            progress=progress,
            budget=budget_for(budget_cents),
            as_of=_utc(as_of),
        ),
        lambda report: [
            f"{report.dreams_stored} dreams stored, {report.dreams_dropped} dropped as adding nothing "
            f"({report.duplicates} near-duplicates), {report.failures} failed; year {report.current_year}, "
            f"{report.model_calls} model calls, seed {report.seed}",
            spent_line(report.spent_cents, report.budget_exhausted),
        ],
        lambda report: report.errors,
    )


@app.command()
def explore(
    seed: SeedOption = None,
    result_threshold: Annotated[
        float,
        typer.Option(
            "--result-threshold",
            min=0.0,
            max=1.0,
            help="Least activation a memory needs to become a candidate. Activation is shared among a memory's "
            "relations, so a densely linked graph may need less than the default to reach beyond neighbours.",
        ),
    ] = ExplorationConfig.result_threshold,
    as_of: AsOfOption = None,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """REM exploration: look for new links between distant, fading memories."""
    if background:
        params = {"seed": seed, "result_threshold": result_threshold, "as_of": as_of, "budget_cents": budget_cents}
        _background(db, "dream.explore", params, as_json)
        return
    config = ExplorationConfig(result_threshold=result_threshold)
    _dream(
        db,
        as_json,
        ("exploring", "seed"),
        lambda runtime, progress: service.run_exploration(
            runtime, seed=seed, progress=progress, config=config, budget=budget_for(budget_cents), as_of=_utc(as_of)
        ),
        lambda report: [
            f"{report.discoveries} discoveries from {report.seeds_explored} seeds "
            f"({report.candidates_judged} candidates judged, {report.candidates_kept} kept, "
            f"{report.eligible_memories} memories in the window), "
            f"{report.failures} failed; {report.model_calls} model calls, seed {report.seed}",
            spent_line(report.spent_cents, report.budget_exhausted),
        ],
        lambda report: report.errors,
    )


@app.command()
def fuse(
    as_of: AsOfOption = None,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Memory fusion: merge clusters of fading, related memories (sources are kept, superseded)."""
    if background:
        _background(db, "dream.fuse", {"as_of": as_of, "budget_cents": budget_cents}, as_json)
        return
    _dream(
        db,
        as_json,
        ("fusing", "cluster"),
        lambda runtime, progress: service.run_fusion(
            runtime, progress=progress, budget=budget_for(budget_cents), as_of=_utc(as_of)
        ),
        lambda report: [
            f"{report.clusters_fused} of {report.clusters_found} clusters fused, {report.memories_superseded} "
            f"memories superseded, {report.clusters_rejected} summaries refused as too long, {report.failures} "
            f"failed ({report.eligible_memories} fading memories); {report.model_calls} model calls",
            spent_line(report.spent_cents, report.budget_exhausted),
        ],
        lambda report: report.errors,
    )


@app.command()
def cycle(
    dreams: DreamsOption = 10,
    seed: SeedOption = None,
    as_of: AsOfOption = None,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A whole night: exploration, then fusion, then the REM cycle."""
    if background:
        params = {"dreams": dreams, "seed": seed, "as_of": as_of, "budget_cents": budget_cents}
        _background(db, "dream.cycle", params, as_json)
        return

    def summary(report: service.CycleReport) -> list[str]:
        e, f, r = report.exploration, report.fusion, report.rem
        return [
            f"exploration: {e.discoveries} discoveries from {e.seeds_explored} seeds, {e.failures} failed",
            f"fusion: {f.clusters_fused} of {f.clusters_found} clusters fused, {f.failures} failed",
            f"rem: {r.dreams_stored} dreams stored, {r.dreams_dropped} dropped, {r.failures} failed",
            f"{report.model_calls} model calls",
            spent_line(report.to_json()["spent_cents"], report.rem.budget_exhausted),
        ]

    _dream(
        db,
        as_json,
        ("night", "step"),
        lambda runtime, progress: service.run_cycle(
            runtime, dreams=dreams, seed=seed, progress=progress, budget=budget_for(budget_cents), as_of=_utc(as_of)
        ),
        summary,
        lambda report: report.exploration.errors + report.fusion.errors + report.rem.errors,
    )


@app.command()
def chrono(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Dated documents (.md with a year in front matter, .jsonl records with a year) or folders.",
            show_default=False,
        ),
    ],
    every: Annotated[
        Literal["year", "month"], typer.Option("--every", help="Dream at the end of each year or month.")
    ] = "year",
    dreams: DreamsOption = 10,
    seed: SeedOption = None,
    budget_cents: BudgetOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Read a dated corpus in date order, dreaming at each year (or month) boundary."""

    def summary(report: service.ChronoReport) -> list[str]:
        lines = []
        for period in report.periods:
            dreamt = (
                f"{period.dreams_stored} dreams stored, {period.dreams_dropped} dropped"
                if period.dreamt
                else "no dreams"
            )
            lines.append(f"{period.period}: {period.documents_added} documents read, {dreamt}")
        lines.append(
            f"{report.documents_added} documents, {report.chunks_added} chunks, {report.dreams_stored} "
            f"dreams stored, {report.dreams_dropped} dropped, {report.failures} failed"
        )
        lines.append(spent_line(report.spent_cents, report.budget_exhausted))
        return lines

    report = run_reported(
        db,
        as_json,
        ("reading", "doc"),
        lambda runtime, progress: service.run_chrono(
            runtime, paths, every=every, dreams=dreams, seed=seed, progress=progress, budget=budget_for(budget_cents)
        ),
        summary,
    )
    echo_load_errors(report.errors)
    if report.errors and report.documents_added == 0 and report.documents_skipped == 0:
        raise typer.Exit(1)
