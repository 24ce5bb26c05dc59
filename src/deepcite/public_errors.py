"""What a caller is told about a failure: one function, :func:`public_error`, that the HTTP API and the MCP
tools share, so both say the same thing for the same mistake.

- A deepcite error (:class:`~deepcite.errors.DeepciteError`) keeps its message and its HTTP status.
- Invalid input (a pydantic ``ValidationError``, FastAPI's ``RequestValidationError``) is 422 with one
  ``field: problem`` per mistake (``filters.equals: 'a b' is not a field name …``).
- Anything else is a server bug: 500 with a reference id, logged with its traceback on the server; the
  caller never sees the exception's text.

Every message passes :func:`redact`, so no server path reaches a caller (the data dir reads ``<data dir>``,
any other absolute path ``<path>``).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from deepcite.errors import DeepciteError

log = logging.getLogger(__name__)

_LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})
# an absolute POSIX path of at least two parts, not inside a URL or a longer word
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:[^\s/'\"`:;,()\[\]<>]+/)+[^\s/'\"`:;,()\[\]<>]*")


@dataclass
class PublicError:
    """A failure as a caller sees it: HTTP status, error name, message and, for invalid input, each problem."""

    status: int
    error: str
    message: str
    detail: list[dict[str, Any]] | None = field(default=None)


def redact(message: str, data_dir: Path | None = None) -> str:
    """``message`` with the data dir shown as ``<data dir>`` and any other absolute path as ``<path>``."""
    if data_dir is not None:
        for form in {str(data_dir.resolve()), str(data_dir)}:
            if form not in ("", ".", "/"):
                message = message.replace(form, "<data dir>")
    return _ABSOLUTE_PATH.sub("<path>", message)


def _field(loc: Sequence[Any]) -> str:
    """``("body", "filters", "year_from")`` → ``filters.year_from``; ``("query", "max_hops")`` → ``max_hops``."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in _LOCATIONS:
        parts = parts[1:]
    return ".".join(parts) or "body"


def describe_problems(errors: Iterable[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """A one-line message and a list of ``{field, problem}`` for pydantic's (or FastAPI's) error list."""
    problems: list[dict[str, Any]] = []
    for err in errors:
        ctx = err.get("ctx") or {}
        if err.get("type") == "json_invalid":
            problem = f"the body is not valid JSON ({ctx.get('error', 'parse error')}); send a JSON object"
            problems.append({"field": "body", "problem": problem})
            continue
        problem = str(ctx["error"]) if err.get("type") == "value_error" and "error" in ctx else err.get("msg")
        problems.append({"field": _field(err.get("loc", ())), "problem": problem or "invalid"})
    message = "; ".join(f"{p['field']}: {p['problem']}" for p in problems) or "the request is invalid"
    return message, problems


def public_error(exc: BaseException, *, where: str = "", data_dir: Path | None = None) -> PublicError:
    """What to tell the caller about ``exc`` (raised while serving ``where``, for the log)."""
    if isinstance(exc, DeepciteError):
        if exc.http_status >= 500:
            log.error("%s on %s: %s", type(exc).__name__, where, exc)
        return PublicError(exc.http_status, type(exc).__name__, redact(str(exc), data_dir))
    if isinstance(exc, (ValidationError, RequestValidationError)):
        message, problems = describe_problems(exc.errors())
        detail = [{**p, "problem": redact(str(p["problem"]), data_dir)} for p in problems]
        return PublicError(422, "ValidationError", redact(message, data_dir), detail)
    ref = uuid.uuid4().hex[:12]
    log.error("unexpected error %s on %s", ref, where, exc_info=exc)
    message = f"internal error (reference {ref}); this is a server bug, not your request: see the server log"
    return PublicError(500, "InternalError", message)
