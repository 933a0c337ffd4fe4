"""``explorer export``: a session archive (two PNG maps, a text summary, the full JSON) in a folder, or, with
``--notes DIR``, the approved crystals and kept dreams as Markdown notes for a person's vault.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from typer._click.exceptions import UsageError

from explorer.cli.common import DbOption, JsonOption, print_json, runtime_for


def export(
    session_id: Annotated[
        str | None,
        typer.Argument(
            metavar="SESSION",
            help="Session id (see `explorer wander list`): the archive's (with --png).",
            show_default=False,
        ),
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option(
            "--png", metavar="DIR", help="Folder to write the archive into (created if missing).", show_default=False
        ),
    ] = None,
    notes: Annotated[
        Path | None,
        typer.Option(
            "--notes",
            metavar="DIR",
            help="Write each approved crystal and kept dream as a Markdown note into this folder (created if "
            "missing); a second export changes nothing, a note whose crystal is no longer approved is removed.",
            show_default=False,
        ),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", metavar="ID", help="With --notes: only this session's crystals.", show_default=False),
    ] = None,
    into_vault: Annotated[
        bool,
        typer.Option("--into-vault", help="With --notes: write even inside a folder that was ingested."),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write a session's archive (--png DIR: the map at 1024 and 512 px, a summary (.md) and the full session
    (.json)), or the findings as notes (--notes DIR).
    """
    if (png is None) == (notes is None):
        raise UsageError("give --png DIR (a session's archive) or --notes DIR (findings as notes), one of them")
    if notes is not None:
        if session_id is not None and session is not None and session_id != session:
            raise UsageError(f"two sessions given: {session_id} and --session {session}")
        _export_notes(notes, session or session_id, into_vault, db, as_json)
        return
    if session is not None or into_vault:
        raise UsageError("--session and --into-vault go with --notes; the archive takes SESSION")
    if session_id is None:
        raise UsageError("the archive needs SESSION (see: explorer wander list)")
    from explorer.export import export_session

    assert png is not None
    archive = export_session(runtime_for(db, create=False), session_id, png)
    if as_json:
        print_json(archive.to_json())
    else:
        for path in archive.to_json().values():
            typer.echo(path)


def _export_notes(directory: Path, session_id: str | None, into_vault: bool, db: str | None, as_json: bool) -> None:
    from explorer.notes.folder import IntoVault
    from explorer.notes.service import export_notes
    from explorer.wording import counted

    try:
        done = export_notes(runtime_for(db, create=False), directory, session_id=session_id, into_vault=into_vault)
    except IntoVault as exc:
        typer.echo(f"error: {exc}; add --into-vault to write there anyway", err=True)
        raise typer.Exit(1) from None
    if as_json:
        print_json(done.to_json())
    else:
        typer.echo(
            f"{counted(done.written, 'note')} written, {done.unchanged} unchanged, {done.removed} removed "
            f"in {done.directory}"
        )
