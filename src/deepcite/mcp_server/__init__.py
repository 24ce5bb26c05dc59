"""deepcite as an MCP server: any MCP client (a desktop assistant, an agent) can search, research, ask and
find practitioners over the user's own collections.

Usage::

    deepcite mcp                      # stdio, for desktop clients that start the server themselves
    deepcite mcp --http --port 8765   # streamable HTTP on http://127.0.0.1:8765/mcp

    from deepcite import Engine, Settings
    from deepcite.mcp_server.server import build_server
    build_server(Engine(Settings.load())).run("stdio")

Each tool is a module-level function returning a pydantic model, so clients get its output schema
(structured output). The tools are thin: each takes the :class:`~deepcite.engine.Engine` from the
server's lifespan context and calls it; limits are checked by the shared request models. A failed call
(unknown collection, bad filter, empty question, ``k`` out of range, invalid arguments) comes back as a tool
error whose text is the message the HTTP API gives for the same failure
(:func:`deepcite.public_errors.public_error`). What a caller may read:
:func:`~deepcite.mcp_server.callers.caller_groups` (over HTTP, the API's bearer tokens; never every group by
default).

Modules: ``schemas`` (the tools' inputs and outputs), ``callers`` (what a caller may read), ``tools`` (the
tool functions), ``server`` (the MCP server over an Engine), ``transport`` (stdio, or streamable HTTP behind
the bearer tokens).
"""
