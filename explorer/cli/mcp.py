"""``explorer mcp``: the MCP tools (:mod:`explorer.mcp_server`) for an agent, on stdio."""

from __future__ import annotations

from explorer.cli.common import DbOption, runtime_for


def mcp(db: DbOption = None) -> None:
    """Serve the MCP tools on stdio, for an agent that starts this command (see docs/api.md#mcp).

    Stdout carries only the protocol; logs go to stderr. The database is opened (and checked) once, before
    serving, so a wrong --db fails here in one line rather than in every tool call.
    """
    runtime = runtime_for(db)
    with runtime.db.connect():
        pass
    from explorer import mcp_server  # the SDK loads a web stack: only this command pays for it

    mcp_server.serve(runtime)
