"""``explorer export``: a session archive (two PNG maps, a text summary, the full JSON) in a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from explorer.cli.common import DbOption, JsonOption, print_json, runtime_for


def export(
    session_id: Annotated[
        str, typer.Argument(metavar="SESSION", help="Session id (see `explorer wander list`).", show_default=False)
    ],
    png: Annotated[
        Path,
        typer.Option(
            "--png", metavar="DIR", help="Folder to write the archive into (created if missing).", show_default=False
        ),
    ],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write a session's archive: the map at 1024 and 512 px, a summary (.md) and the full session (.json)."""
    from explorer.export import export_session

    archive = export_session(runtime_for(db, create=False), session_id, png)
    if as_json:
        print_json(archive.to_json())
    else:
        for path in archive.to_json().values():
            typer.echo(path)
