"""The deepcite MCP server over an Engine: its instructions, the tools registered with their annotations, and
failed calls answered with the HTTP API's message."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.mcp_server.tools import TOOLS, WRITE_TOOLS
from deepcite.public_errors import public_error
from deepcite.version import __version__

INSTRUCTIONS = """deepcite answers questions from the user's own document collections (for example PubMed
abstracts) with every sentence tied to a numbered passage. Use `ask` for a cited answer, `research` for the
evidence and how well it covers the question, `search` for a quick ranked list of passages, and
`list_collections` to see what can be searched. Every answer is saved: `saved_answers` lists a collection's
past questions, `saved_answer` reads one back, `rerun_answer` asks it again against the collection as it is
now (saying which cited passages changed) and `delete_saved_answer` removes one. `find_practitioners` matches a patient's request to
clinicians in the user's practitioner directory. Quote the [n] citations and their titles/PMIDs/URLs when you
pass an answer on; do not add claims the passages do not support."""


class _Server(MCPServer):
    """The MCP server whose failed tool calls say what the HTTP API says for the same failure
    (:func:`~deepcite.public_errors.public_error`), never a bare "Error executing tool …"."""

    def __init__(self, *args: Any, data_dir: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._data_dir = data_dir

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            while isinstance(cause, ToolError):  # the SDK wraps what a tool raised, sometimes twice
                cause = cause.__cause__
            if cause is None:  # the SDK's own refusal (an unknown tool): its message says why
                raise
            error = public_error(cause, where=f"MCP tool {name}", data_dir=self._data_dir)
            raise ToolError(error.message) from cause


def build_server(engine: Engine | Settings) -> MCPServer:
    """The deepcite MCP server over ``engine`` (or a new Engine of these settings, closed with the server)."""
    owned = not isinstance(engine, Engine)
    engine = engine if isinstance(engine, Engine) else Engine(engine)
    settings = engine.settings

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[Engine]:
        engine.start()
        try:
            yield engine
        finally:
            if owned:
                engine.close()

    server = _Server(
        "deepcite",
        title="deepcite: cited answers from your own documents",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level=settings.mcp.log_level,
        lifespan=lifespan,
        data_dir=settings.data_dir,
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=settings.web.enabled)
    for name, (title, fn) in TOOLS.items():
        server.add_tool(fn, name=name, title=title, annotations=read_only, structured_output=True)
    writes = ToolAnnotations(read_only_hint=False, open_world_hint=settings.web.enabled)
    for name, (title, fn) in WRITE_TOOLS.items():
        server.add_tool(fn, name=name, title=title, annotations=writes, structured_output=True)
    return server
