"""Optional bearer-token access: each token maps to the ACL groups its caller may read (the HTTP API's and the
MCP server's; no web framework here, the server's dependency is in ``deepcite.server.auth``).

``Settings.api_keys`` is a comma-separated list of ``token`` or ``token:group1|group2`` entries.

- ``token:g1|g2`` may read public chunks and chunks shared with ``g1`` or ``g2``;
- ``token`` (no groups) may read public chunks only;
- ``token:*`` may read everything (no ACL restriction).

With no keys configured the API is open and a request's own ``filters.acl_groups`` (if any) apply as given.
With keys, a request may narrow its groups but never widen them past its token's.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from deepcite.errors import ConfigError, DeepciteError

ALL_GROUPS = "*"


class UnauthorizedError(DeepciteError):
    """The request carries no bearer token, or one the server does not know."""

    http_status = 401


@dataclass(frozen=True)
class Caller:
    """Who is asking: ``groups`` is None for unrestricted access, else the groups the caller may read."""

    authenticated: bool
    groups: tuple[str, ...] | None


OPEN_ACCESS = Caller(authenticated=False, groups=None)


def parse_api_keys(raw: str) -> dict[str, tuple[str, ...] | None]:
    """``"t1,t2:a|b,t3:*"`` → ``{"t1": (), "t2": ("a", "b"), "t3": None}``; raises ConfigError when malformed."""
    keys: dict[str, tuple[str, ...] | None] = {}
    for entry in (part.strip() for part in raw.split(",")):
        if not entry:
            continue
        token, _, spec = entry.partition(":")
        token = token.strip()
        if not token:
            raise ConfigError(
                f"api key entry {entry!r} has an empty token; write token or token:group1|group2"
            )
        if token in keys:
            raise ConfigError(
                f"api key {token[:4]}… is listed twice in DEEPCITE_API_KEYS; list each token once"
            )
        groups = tuple(g.strip() for g in spec.split("|") if g.strip())
        keys[token] = None if ALL_GROUPS in groups else groups
    return keys


class Authenticator:
    """Resolves a request's ``Authorization: Bearer <token>`` header to a :class:`Caller`."""

    def __init__(self, api_keys: str) -> None:
        self._keys = parse_api_keys(api_keys)

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def caller(self, authorization: str | None) -> Caller:
        """The caller for this header value; raises UnauthorizedError when auth is on and it does not match."""
        if not self.enabled:
            return OPEN_ACCESS
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UnauthorizedError(
                "this server requires a bearer token: send 'Authorization: Bearer <token>'"
            )
        token = token.strip()
        for known, groups in self._keys.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return Caller(authenticated=True, groups=groups)
        raise UnauthorizedError("unknown bearer token; use one of the tokens configured in DEEPCITE_API_KEYS")
