"""``explorer map``: fit the stable map, place new points on it, or refit it."""

from __future__ import annotations

from typing import Annotated

import typer

from explorer.cli.common import DbOption, JsonOption, print_json, progress_callback, runtime_for


def map_(
    refit: Annotated[
        bool, typer.Option("--refit", help="Fit the whole map again (points move; the version goes up).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Fit the map once (UMAP over every node), then place new nodes, loci, crystals and resonances without
    refitting.
    """
    from explorer.projection import projection_status, update_projection

    runtime = runtime_for(db)
    with progress_callback("map", "stage", enabled=not as_json) as progress:
        report = update_projection(runtime, refit=refit, progress=progress)
    status = projection_status(runtime)
    if as_json:
        print_json({**report.to_json(), "status": status.to_json()})
        return
    placed = ", ".join(f"{n} {kind}" for kind, n in report.placed.items()) or "nothing new"
    typer.echo(f"map version {report.version}: fitted {report.fitted} nodes, placed {placed} ({report.seconds:.1f} s)")
    if report.mean_displacement is not None:
        typer.echo(
            f"the nodes already on the map moved {report.mean_displacement:.3g} on average, aligned to the old map "
            f"({report.mean_displacement_unaligned:.3g} as fitted)"
        )
    if status.stale:
        typer.echo(
            f"{status.placed_nodes} nodes arrived after the fit of {status.fitted_nodes}: "
            "`explorer map --refit` redraws the map around them",
            err=True,
        )
