"""``explorer serve``: the REST API (:mod:`explorer.api`) on this machine, or, with a token, on the network.

The single ``--token`` names nobody; the named tokens of a shared deployment are a setting (``EXPLORER_TOKENS``,
read with the others), so the same file names a team's people for every server started from it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from explorer.cli.common import DbOption


def serve(
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on; any but a loopback one (127.0.0.1, ::1) needs --token or EXPLORER_TOKENS."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65_535, help="Port to listen on (0: any free one).")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="EXPLORER_API_TOKEN",
            help="Every request must then carry `Authorization: Bearer TOKEN` (default: EXPLORER_API_TOKEN).",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Serve the REST API under /api/v1/ (its OpenAPI document at /openapi.json, browsable at /docs)."""
    import uvicorn  # here, not at the top: FastAPI and uvicorn would add half a second to every other command

    from explorer.api import create_app
    from explorer.api.auth import needs_token
    from explorer.settings import load_settings

    settings = load_settings().with_db(db)
    if needs_token(host) and not (token or settings.tokens):
        raise typer.BadParameter(
            f"serving on {host}, beyond this machine, needs a token (--token or EXPLORER_API_TOKEN, or the named "
            "tokens of EXPLORER_TOKENS)",
            param_hint="--token",
        )
    app = create_app(settings, token=token or None)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    bound = config.bind_socket()  # bound first, so the line below names the port even when the system chose it
    typer.echo(f"serving the API on http://{host}:{bound.getsockname()[1]}/api/v1/ (documents at /docs)", err=True)
    uvicorn.Server(config).run(sockets=[bound])
