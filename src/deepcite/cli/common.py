"""Helpers every CLI module shares: one console, JSON output, error reporting, filter parsing."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console

from deepcite.errors import DeepciteError, InputError
from deepcite.models import Filters

console = Console()
err_console = Console(stderr=True)


def print_json(data: Any) -> None:
    """Write ``data`` as JSON to stdout (pydantic models are dumped)."""
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json")
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn deepcite's own errors into a red one-line message and exit code 2, without a traceback."""
    try:
        yield
    except DeepciteError as exc:
        err_console.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(code=2) from None


def parse_filters(items: list[str] | None, groups: list[str] | None = None) -> Filters | None:
    """``field=value`` pairs into :class:`Filters`: ``year>=2015``, ``year<=2020``, ``source=a,b``, ``x=y``."""
    if not items and not groups:
        return None
    filters = Filters(acl_groups=groups or None)
    for item in items or []:
        for op, apply in _FILTER_OPS.items():
            if op in item:
                field, value = (part.strip() for part in item.split(op, 1))
                if not field or not value:
                    break
                apply(filters, field, value)
                break
        else:
            raise InputError(f"cannot read filter {item!r}; write field=value, year>=2015 or year<=2020")
    return filters


def _set_equals(filters: Filters, field: str, value: str) -> None:
    values = [_scalar(v) for v in value.split(",")]
    if field == "source":
        filters.sources = [str(v) for v in values]
    elif field == "doc_id":
        filters.doc_ids = [str(v) for v in values]
    else:
        filters.equals[field] = values if len(values) > 1 else values[0]


def _year_bound(attr: str) -> Callable[[Filters, str, str], None]:
    def apply(filters: Filters, field: str, value: str) -> None:
        if field != "year" or not value.isdigit():
            raise InputError(f"range filters work on year only, with a whole number: not {field!r}={value!r}")
        setattr(filters, attr, int(value))

    return apply


def _scalar(value: str) -> Any:
    value = value.strip()
    if value.lstrip("-").isdigit():
        return int(value)
    return {"true": True, "false": False}.get(value.lower(), value)


_FILTER_OPS: dict[str, Callable[[Filters, str, str], None]] = {
    ">=": _year_bound("year_from"),
    "<=": _year_bound("year_to"),
    "=": _set_equals,
}
