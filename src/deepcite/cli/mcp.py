"""``deepcite mcp``: serve deepcite's tools to MCP clients over stdio or streamable HTTP."""

from __future__ import annotations

import typer

from deepcite.cli.common import state, user_errors


def mcp(
    ctx: typer.Context,
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio."),
    port: int = typer.Option(None, "--port", "-p", help="HTTP port (default: setting mcp.port, 8765)."),
) -> None:
    """Run the MCP server: tools search, research, ask, find_practitioners and list_collections.

    Without --http it speaks MCP on stdin/stdout (what desktop clients start); logs go to stderr.
    """
    from deepcite.errors import InputError
    from deepcite.mcp_server.transport import run

    with user_errors():
        if port is not None and not (http and 0 < port < 65536):
            raise InputError("--port needs --http and a number from 1 to 65535, e.g. --http --port 8765")
        run(state(ctx).engine, http=http, port=port)
