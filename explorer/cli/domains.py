"""``explorer domains``: list the domains, rename and merge them (:mod:`explorer.reading.domains_service`).

A rename or a merge changes the stored documents and their nodes in one transaction, nothing is read again, and
the new name is a person's choice from then on: topics found later never overwrite it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from explorer.cli.common import DbOption, JsonOption, print_json, runtime_for
from explorer.wording import counted

if TYPE_CHECKING:
    from explorer.reading.domains_service import DomainChange

app = typer.Typer(no_args_is_help=True, help="List the domains, and rename or merge them without reading again.")


@app.command(name="list")
def list_(db: DbOption = None, as_json: JsonOption = False) -> None:
    """List every domain with where it came from (given, folder, tag, topic) and how many documents and nodes
    hold it.
    """
    from explorer.reading.domains_service import list_domains

    found = list_domains(runtime_for(db, create=False))
    if as_json:
        print_json([domain.to_json() for domain in found])
        return
    width = max((len(d.name) for d in found), default=0)
    for domain in found:
        typer.echo(
            f"{domain.name:<{width}}  {domain.origin or '—':<6}  {counted(domain.documents, 'document')}, "
            f"{counted(domain.nodes, 'node')}"
        )
    if not found:
        typer.echo("no domains yet: give one with `explorer ingest PATH --domain NAME`, or ingest a folder of folders")


@app.command()
def rename(
    old: Annotated[str, typer.Argument(help="The domain to rename, as `explorer domains list` shows it.")],
    new: Annotated[str, typer.Argument(help="Its new name (an existing domain's name merges the two).")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Rename a domain on its documents and nodes, without reading anything again."""
    from explorer.reading.domains_service import rename_domain

    _said(rename_domain(runtime_for(db, create=False), old, new), as_json)


@app.command()
def merge(
    names: Annotated[list[str], typer.Argument(metavar="DOMAIN...", help="The domains to merge.", show_default=False)],
    into: Annotated[
        str | None,
        typer.Option("--into", help="The name they share after (default: the first domain named).", show_default=False),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Merge domains into one, on their documents and nodes, without reading anything again."""
    from explorer.reading.domains_service import merge_domains

    if into is None and len(names) < 2:
        raise typer.BadParameter("name two domains or more, or one and --into NAME", param_hint="DOMAIN...")
    _said(merge_domains(runtime_for(db, create=False), names, into or names[0]), as_json)


def _said(change: DomainChange, as_json: bool) -> None:
    """What a rename or merge did: the domains taken in, the name they share, and the documents and nodes."""
    if as_json:
        print_json(change.to_json())
        return
    typer.echo(
        f"{', '.join(change.merged)} → {change.into}: "
        f"{counted(change.documents, 'document')}, {counted(change.nodes, 'node')}"
    )
