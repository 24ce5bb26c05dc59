"""The MCP client side of web search: call any MCP server's ``web_search``-style tool and read its links."""

from __future__ import annotations

import anyio

from deepcite.config import WebSearchSettings
from deepcite.errors import ConfigError, DeepciteError
from deepcite.research.web.links import WebResult, parse_tool_results


class WebSearchError(DeepciteError):
    """The web_search tool could not be reached or answered something unusable."""

    http_status = 502


async def call_search_tool(settings: WebSearchSettings, query: str) -> list[WebResult]:
    """Call the configured MCP server's search tool with ``query`` and return the links it found."""
    from mcp import ClientSession  # the MCP client loads only when web search is used
    from mcp.client.streamable_http import streamable_http_client

    if not settings.mcp_url:
        raise ConfigError("web search is enabled but no MCP server is set; set DEEPCITE_WEB_MCP_URL")
    arguments = {**settings.tool_arguments, settings.query_argument: query}
    try:
        with anyio.fail_after(settings.tool_timeout_s):
            async with (
                streamable_http_client(settings.mcp_url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool(settings.tool_name, arguments)
    except TimeoutError as exc:
        raise WebSearchError(
            f"the {settings.tool_name} tool at {settings.mcp_url} did not answer "
            f"within {settings.tool_timeout_s}s"
        ) from exc
    except Exception as exc:  # transport failures arrive as exception groups from the SDK's task groups
        raise WebSearchError(
            f"cannot call {settings.tool_name} at {settings.mcp_url}: {_root_message(exc)}; "
            "check DEEPCITE_WEB_MCP_URL and that the server is running"
        ) from exc
    texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
    if result.is_error:
        raise WebSearchError(f"the {settings.tool_name} tool failed: {' '.join(texts) or 'no message'}")
    return parse_tool_results(result.structured_content, texts)


def _root_message(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
