"""``explorer dream …``: the night's mechanisms over the knowledge base."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from explorer.cli.choices import PAGE_MAX, RESULT_THRESHOLD
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
from explorer.cli.jobs import BackgroundOption, run_kind
from explorer.cli.run_outcome import Asked, asked_in, exit_if_nothing_came
from explorer.wording import counted

if TYPE_CHECKING:
    from explorer.records.dreaming import (
        ChronoReport,
        CycleReport,
        Dream,
        ExplorationReport,
        FusionReport,
        RemReport,
    )

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Dream over the memory graph: REM dreams, REM exploration, fusion, or a whole night; list and show what "
    "they made.",
)

SHORT_ID = 8  # the digits of an id the pages show, and each line here: `dream show` takes them

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


def _warn(errors: list[str]) -> None:
    """The items a run could not do, as warnings on stderr (its report, JSON or lines, is on stdout)."""
    for error in errors:
        typer.echo(f"warning: {error}", err=True)


def _rem_asked(report: RemReport) -> Asked:
    """A REM run's dreams: one came when it was stored or dropped as adding nothing. A run with too few pairs of
    memories counts its undreamt dreams as failures without asking the model: it had nothing to do.
    """
    return asked_in("dream", report.dreams_requested, report.dreams_stored + report.dreams_dropped, report.to_json())


def _explore_asked(report: ExplorationReport) -> Asked:
    """An exploration's seeds: one came when the judge weighed its candidates, whether it kept any or not (a seed
    with no candidates within reach asks nothing and fails nothing).
    """
    return asked_in("seed", report.seeds_explored, report.candidates_judged, report.to_json())


def _fuse_asked(report: FusionReport) -> Asked:
    """A fusion's clusters: one came when it was fused or its summary refused as not shorter than its sources."""
    return asked_in(
        "cluster", report.clusters_found, report.clusters_fused + report.clusters_rejected, report.to_json()
    )


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
    from explorer.jobs.kinds import DREAM_REM

    report = run_kind(
        DREAM_REM,
        {"dreams": dreams, "year": year, "seed": seed, "as_of": as_of, "budget_cents": budget_cents},
        db=db,
        background=background,
        as_json=as_json,
        bar=("dreaming", "dream"),
        summary=lambda report: [
            f"{counted(report.dreams_stored, 'dream')} stored, {report.dreams_dropped} dropped as adding nothing "
            f"({report.duplicates} near-duplicates), {report.failures} failed; "
            + ("" if report.current_year is None else f"year {report.current_year}, ")
            + f"{report.model_calls} model calls"
            + ("" if report.seed is None else f", seed {report.seed}"),
            spent_line(report.spent_cents, report.budget_exhausted),
        ],
    )
    if report is None:
        return
    exit_if_nothing_came(_rem_asked(report))
    if not as_json:
        _warn(report.errors)


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
    ] = RESULT_THRESHOLD,
    as_of: AsOfOption = None,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """REM exploration: look for new links between distant, fading memories."""
    from explorer.jobs.kinds import DREAM_EXPLORE

    values = {"seed": seed, "result_threshold": result_threshold, "as_of": as_of, "budget_cents": budget_cents}
    report = run_kind(
        DREAM_EXPLORE,
        values,
        db=db,
        background=background,
        as_json=as_json,
        bar=("exploring", "seed"),
        summary=lambda report: [
            f"{report.discoveries} discoveries from {report.seeds_explored} seeds "
            f"({report.candidates_judged} candidates judged, {report.candidates_kept} kept, "
            f"{report.eligible_memories} memories in the window), "
            f"{report.failures} failed; {report.model_calls} model calls"
            + ("" if report.seed is None else f", seed {report.seed}"),
            spent_line(report.spent_cents, report.budget_exhausted),
        ],
    )
    if report is None:
        return
    exit_if_nothing_came(_explore_asked(report))
    if not as_json:
        _warn(report.errors)


@app.command()
def fuse(
    as_of: AsOfOption = None,
    budget_cents: BudgetOption = None,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Memory fusion: merge clusters of fading, related memories (sources are kept, superseded)."""
    from explorer.jobs.kinds import DREAM_FUSE

    report = run_kind(
        DREAM_FUSE,
        {"as_of": as_of, "budget_cents": budget_cents},
        db=db,
        background=background,
        as_json=as_json,
        bar=("fusing", "cluster"),
        summary=lambda report: [
            f"{report.clusters_fused} of {report.clusters_found} clusters fused, {report.memories_superseded} "
            f"memories superseded, {report.clusters_rejected} summaries refused as too long, {report.failures} "
            f"failed ({report.eligible_memories} fading memories); {report.model_calls} model calls",
            spent_line(report.spent_cents, report.budget_exhausted),
        ],
    )
    if report is None:
        return
    exit_if_nothing_came(_fuse_asked(report))
    if not as_json:
        _warn(report.errors)


def _night(report: CycleReport) -> list[str]:
    """A night's summary lines: each mechanism's first numbers, then the totals."""
    e, f, r = report.exploration, report.fusion, report.rem
    return [
        f"exploration: {e.discoveries} discoveries from {e.seeds_explored} seeds, {e.failures} failed",
        f"fusion: {f.clusters_fused} of {f.clusters_found} clusters fused, {f.failures} failed",
        f"rem: {counted(r.dreams_stored, 'dream')} stored, {r.dreams_dropped} dropped, {r.failures} failed",
        f"{report.model_calls} model calls",
        spent_line(report.to_json()["spent_cents"], report.rem.budget_exhausted),
    ]


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
    from explorer.jobs.kinds import DREAM_CYCLE

    report = run_kind(
        DREAM_CYCLE,
        {"dreams": dreams, "seed": seed, "as_of": as_of, "budget_cents": budget_cents},
        db=db,
        background=background,
        as_json=as_json,
        bar=("night", "step"),
        summary=_night,
    )
    if report is None:
        return
    exit_if_nothing_came(_explore_asked(report.exploration), _fuse_asked(report.fusion), _rem_asked(report.rem))
    if not as_json:
        _warn(report.exploration.errors + report.fusion.errors + report.rem.errors)


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
    from explorer.dreaming import service as dreaming_service

    def summary(report: ChronoReport) -> list[str]:
        lines = []
        for period in report.periods:
            dreamt = (
                f"{counted(period.dreams_stored, 'dream')} stored, {period.dreams_dropped} dropped"
                if period.dreamt
                else "no dreams"
            )
            lines.append(f"{period.period}: {counted(period.documents_added, 'document')} read, {dreamt}")
        lines.append(
            f"{counted(report.documents_added, 'document')}, {counted(report.chunks_added, 'chunk')}, "
            f"{counted(report.dreams_stored, 'dream')} stored, {report.dreams_dropped} dropped, "
            f"{report.failures} failed"
        )
        lines.append(spent_line(report.spent_cents, report.budget_exhausted))
        return lines

    report = run_reported(
        db,
        as_json,
        ("reading", "doc"),
        lambda runtime, progress: dreaming_service.run_chrono(
            runtime, paths, every=every, dreams=dreams, seed=seed, progress=progress, budget=budget_for(budget_cents)
        ),
        summary,
    )
    echo_load_errors(report.errors)
    if report.errors and report.documents_added == 0 and report.documents_skipped == 0:
        raise typer.Exit(1)


def _dream_line(dream: Dream) -> str:
    """One dream as a line: its short id, kind, confidence and title."""
    return f"{dream.id[:SHORT_ID]}  {dream.kind:<11}  {dream.confidence:.2f}  {dream.title}"


@app.command("list")
def list_(
    kind: Annotated[
        Literal["rem", "exploration", "fusion"] | None,
        typer.Option(
            "--kind", help="Only dreams of this kind: rem (REM cycle), exploration (links found), fusion (merged)."
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=0, max=PAGE_MAX, help="How many, newest first.")] = 50,
    offset: Annotated[int, typer.Option("--offset", min=0, max=PAGE_MAX, help="How many of the newest to skip.")] = 0,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the dreams (REM dreams, discovered links, fused memories), newest first."""
    from explorer.dreaming import service as dreaming_service

    found = dreaming_service.list_dreams(runtime_for(db, create=False), kind=kind, limit=limit, offset=offset)
    if as_json:
        print_json([dream.to_json() for dream in found])
        return
    for dream in found:
        typer.echo(_dream_line(dream))
    if not found:
        typer.echo("no dreams yet; dream with `explorer dream rem` or `explorer dream cycle`")


@app.command()
def show(
    dream_id: Annotated[
        str, typer.Argument(help="The dream's id, or its first digits as `dream list` shows them.", show_default=False)
    ],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one dream whole: its text and the memories it came from."""
    from explorer.dreaming import service as dreaming_service

    dream = dreaming_service.dream(runtime_for(db, create=False), dream_id)
    if as_json:
        print_json(dream.to_json())
        return
    typer.echo(f"{dream.id}  {dream.kind}  confidence {dream.confidence:.2f}  {dream.created or ''}".rstrip())
    typer.echo(dream.title)
    typer.echo("")
    typer.echo(dream.text)
    typer.echo("")
    typer.echo(f"from {len(dream.sources)} memories:")
    for source in dream.sources:
        typer.echo(f"  {source.id[:SHORT_ID]}  {source.title or ''}".rstrip())
