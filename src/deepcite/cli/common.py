"""Helpers every CLI module shares: the invocation's Engine, one console, JSON output, error reporting,
filter parsing."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import ValidationError
from rich.console import Console

from deepcite.errors import DeepciteError, InputError
from deepcite.models import Filters
from deepcite.public_errors import public_error

if TYPE_CHECKING:
    from deepcite.config import Settings
    from deepcite.engine import Engine

LOG_WIDTH = 200  # columns of a console writing to a file or a pipe, so a table in a log is not cut


def _console(stderr: bool = False) -> Console:
    """A rich console; one that writes to a file or a pipe (a log, CI) and has no ``COLUMNS`` to go by is
    :data:`LOG_WIDTH` wide instead of rich's 80, so tables keep their headers and figures whole."""
    stream = sys.stderr if stderr else sys.stdout
    wide = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=LOG_WIDTH if wide else None)


console = _console()
err_console = _console(stderr=True)


class CliState:
    """What one ``deepcite`` invocation shares (Typer's ``ctx.obj``): its settings and its Engine, each
    built on first use, so ``deepcite --help`` loads nothing and a command builds the Engine once."""

    def __init__(self, config: Path | None = None) -> None:
        self.config = config
        self._settings: Settings | None = None
        self._engine: Engine | None = None

    @property
    def settings(self) -> Settings:
        """The settings: ``--config`` (else ``DEEPCITE_CONFIG``) under the environment."""
        if self._settings is None:
            from deepcite.config import Settings

            self._settings = Settings.load(self.config)
        return self._settings

    def override(self, settings: Settings) -> None:
        """Use ``settings`` (a command's own options applied) for the Engine this invocation builds."""
        if self._engine is not None:
            raise RuntimeError("the Engine of this invocation is built already")
        self._settings = settings

    def use_data_dir(self, data_dir: Path | None) -> None:
        """Keep this invocation's collections under ``data_dir`` when given (an evaluation's cache)."""
        if data_dir is not None:
            self.override(self.settings.model_copy(update={"data_dir": data_dir}))

    @property
    def engine(self) -> Engine:
        """The Engine of this invocation (closed when the command ends)."""
        if self._engine is None:
            from deepcite.engine import Engine

            self._engine = Engine(self.settings)
        return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None


def state(ctx: typer.Context) -> CliState:
    """The invocation's :class:`CliState` (made by the root callback; made here when a command runs alone)."""
    found = ctx.find_object(CliState)
    if found is None:
        found = ctx.ensure_object(CliState)
        ctx.call_on_close(found.close)
    return found


def print_json(data: Any) -> None:
    """Write ``data`` as JSON to stdout (pydantic models are dumped)."""
    sys.stdout.write(to_json(data) + "\n")


def to_json(data: Any) -> str:
    """``data`` as indented JSON (pydantic models, and lists of them, are dumped)."""
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json")
    elif isinstance(data, list):
        data = [d.model_dump(mode="json") if hasattr(d, "model_dump") else d for d in data]
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def emit(data: Any, *, json_out: bool, out: Path | None) -> bool:
    """``--json`` prints ``data`` as JSON to stdout; ``--out PATH`` writes it there too. True when printed."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(to_json(data) + "\n", encoding="utf-8")
        err_console.print(f"wrote {out}")
    if json_out:
        print_json(data)
    return json_out


JSON_OPTION = typer.Option(False, "--json", help="Print the result as JSON to stdout.")
OUT_OPTION = typer.Option(None, "--out", help="Also write the result as JSON to this file.")
# the options of the commands that take a question (ask, research): one declaration each
COLLECTION_OPTION = typer.Option(..., "--collection", "-c", help="Collection to search.")
MAX_HOPS_OPTION = typer.Option(
    None, "--max-hops", help="At most this many research hops (default: the setting)."
)
FILTER_OPTION = typer.Option(
    None, "--filter", help="field=value, year>=2015, year<=2020, source=a,b (repeatable)"
)
GROUP_OPTION = typer.Option(None, "--group", help="Your ACL groups (repeatable); default: no restriction.")
# the evaluations that ingest their data sets keep them here (see CliState.use_data_dir)
EVAL_DATA_DIR_OPTION = typer.Option(
    None, "--data-dir", help="Where the evaluation's collections are cached (default: DEEPCITE_DATA_DIR)."
)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn deepcite's own errors into a red one-line message and exit code 2, without a traceback."""
    try:
        yield
    except DeepciteError as exc:
        err_console.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(code=2) from None


def parse_filters(items: list[str] | None) -> Filters | None:
    """``field=value`` pairs into :class:`Filters`: ``year>=2015``, ``year<=2020``, ``source=a,b``, ``x=y``.

    The caller's ACL groups are not filters: commands pass ``--group`` to the Engine, which narrows them.
    """
    if not items:
        return None
    filters = Filters()
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
    try:  # the checks a request's filters get (field names, values)
        return Filters.model_validate(filters.model_dump())
    except ValidationError as exc:
        raise InputError(public_error(exc).message) from None


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
