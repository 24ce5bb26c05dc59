"""What a caller of the MCP server may read: its ACL groups, from ``mcp.groups`` and the API's bearer tokens."""

from __future__ import annotations

from collections.abc import Mapping

from deepcite.access import ALL_GROUPS, Authenticator
from deepcite.config import Settings
from deepcite.service import Groups


def caller_groups(settings: Settings, headers: Mapping[str, str] | None) -> Groups:
    """What a caller of the MCP server may read (``None``: everything).

    Over stdio (no headers) the caller is the data dir's own user: ``mcp.groups`` (unset: everything). Over
    HTTP with ``api_keys`` the caller is its bearer token's groups (as on the HTTP API), narrowed to
    ``mcp.groups`` when that is set; without keys (loopback only, see
    :func:`~deepcite.mcp_server.transport.http_app`) it is ``mcp.groups``, and public documents only when that
    is unset: an HTTP client never reads every group by default.
    ``mcp.groups = ["*"]`` means every group.
    """
    configured = (
        None if settings.mcp.groups is not None and ALL_GROUPS in settings.mcp.groups else settings.mcp.groups
    )
    if headers is None:
        return configured
    authenticator = Authenticator(settings.api_keys)
    if not authenticator.enabled:
        return () if settings.mcp.groups is None else configured
    groups = authenticator.caller(headers.get("authorization")).groups
    if configured is None:
        return groups
    return tuple(configured) if groups is None else tuple(sorted(set(groups) & set(configured)))
