"""``explorer db``: move a whole database (:mod:`explorer.store.copying`).

SRC and DST name the databases themselves, a file path or a ``postgresql://`` URL each, so this command takes no
``--db``: a team moves its file into the shared server with ``explorer db copy explorer.duckdb postgresql://…``,
and takes it home again the other way.
"""

from __future__ import annotations

from typing import Annotated

import typer

from explorer.cli.common import JsonOption, print_json, progress_callback

app = typer.Typer(no_args_is_help=True, help="Move a whole database: a file into PostgreSQL, or back.")


@app.command()
def copy(
    source: Annotated[
        str, typer.Argument(metavar="SRC", help="The database to copy: a DuckDB file or a postgresql:// URL.")
    ],
    destination: Annotated[
        str,
        typer.Argument(
            metavar="DST",
            help="A new, empty database to copy into (a file is created; a server's database must exist).",
        ),
    ],
    as_json: JsonOption = False,
) -> None:
    """Copy every table of SRC into DST, which is created with SRC's embedding model and refused if it has rows.

    Row counts are checked table by table afterwards; a copy that fails leaves DST empty.
    """
    from explorer.settings import load_settings
    from explorer.store.copying import copy_database

    with progress_callback("copying", "rows", enabled=not as_json) as progress:
        report = copy_database(source, destination, progress=progress, lock_wait_s=load_settings().lock_wait_s)
    if as_json:
        print_json(report.to_json())
        return
    typer.echo(
        f"copied {report.rows} rows in {len(report.tables)} tables from {report.source} to {report.destination} "
        f"in {report.seconds:.1f} s (embeddings: {report.embedding_model}, {report.embedding_dim} dims)"
    )
    for table in report.tables:
        if table.copied:
            typer.echo(f"  {table.name}: {table.copied}")
    if report.skipped:
        typer.echo(f"not copied (not tables of the product): {', '.join(report.skipped)}")
