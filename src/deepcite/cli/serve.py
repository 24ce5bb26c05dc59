"""``deepcite ask`` (one cited answer in the terminal) and ``deepcite serve`` (the HTTP API and web UI)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table

from deepcite.cli.common import (
    COLLECTION_OPTION,
    FILTER_OPTION,
    GROUP_OPTION,
    JSON_OPTION,
    MAX_HOPS_OPTION,
    console,
    emit,
    err_console,
    parse_filters,
    state,
    user_errors,
)
from deepcite.cli.sources import source_label
from deepcite.models import coverage_percent

if TYPE_CHECKING:
    from deepcite.service import AskResponse


def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question to research and answer."),
    collection: str = COLLECTION_OPTION,
    max_hops: int = MAX_HOPS_OPTION,
    filters: list[str] = FILTER_OPTION,
    groups: list[str] = GROUP_OPTION,
    json_out: bool = JSON_OPTION,
    report_format: str = typer.Option(
        None,
        "--format",
        help="Print a report instead: markdown, the references as bibtex or ris, the evidence table as csv.",
    ),
    out: Path = typer.Option(
        None, "--out", help="Write to this file: the --format report (default markdown), or JSON with --json."
    ),
) -> None:
    """Research a question in a collection and print a cited summary, answer and sources."""
    from deepcite.answer.report import ReportFormat, render_report
    from deepcite.service import HopEvent, QuestionRequest

    def on_hop(hop: HopEvent) -> None:
        if not json_out:
            err_console.print(
                f"[dim]hop {hop.hop}: {hop.subquestion} · {hop.new_evidence} new, {hop.evidence_total} in "
                f"evidence · coverage {coverage_percent(hop.weighted_coverage)}% · {hop.decision}[/]"
            )

    with user_errors():
        fmt = ReportFormat.from_str(report_format) if report_format else None
        engine = state(ctx).engine
        request = QuestionRequest(
            query=question, collection=collection, max_hops=max_hops, filters=parse_filters(filters)
        )
        response = asyncio.run(engine.ask(request, groups or None, on_hop))
    if json_out and fmt is None:
        emit(response, json_out=True, out=out)
    elif out is not None:
        fmt = fmt or ReportFormat.from_str("markdown")
        out.write_text(render_report(response, fmt), encoding="utf-8")
        err_console.print(f"wrote the {fmt.value} report to {out}")
    elif fmt is not None:
        sys.stdout.write(render_report(response, fmt))
    else:
        print_response(response)


def print_response(response: AskResponse) -> None:
    """The summary, the long answer, each sub-answer, the sources table and the coverage, with rich."""
    console.print(Panel(Markdown(response.summary), title="Summary", border_style="green"))
    console.print(Panel(Markdown(response.answer), title="Answer", border_style="cyan"))
    for sub in response.subanswers:
        console.print(f"[bold]{sub.subquestion}[/]\n{sub.answer}\n")
    if response.citations:
        table = Table(title="Sources", show_lines=False)
        labels = [source_label(c) for c in response.citations]
        with_files = any(labels)  # a "source" column (file and page) when any citation comes from a file
        columns = [
            "id",
            "title",
            *(["source"] if with_files else []),
            "PMID / DOI",
            "section",
            "score",
            "quote",
        ]
        for column in columns:
            table.add_column(column, overflow="fold")
        for c, label in zip(response.citations, labels, strict=True):
            where = (label,) if with_files else ()
            table.add_row(
                f"[{c.id}]",
                c.title,
                *where,
                c.pmid or c.doi or "",
                c.section or "",
                f"{c.score:.3f}",
                c.quote,
            )
        console.print(table)
    coverage = response.coverage
    covered, total, weighted = (
        (
            coverage.total_aspects - coverage.uncovered_count,
            coverage.total_aspects,
            coverage.weighted_coverage,
        )
        if coverage
        else (0, 0, 0.0)
    )
    check = response.citation_check
    console.print(
        f"coverage {coverage_percent(weighted)}% ({covered} of {total} aspects covered) · citation check: {check.sentences} sentences, "
        f"{check.cited} cited, {check.repaired} repaired, {check.dropped} dropped, {check.invalid_ids} invalid ids, "
        f"{check.removed} unsupported citations removed "
        f"· retrieval {response.retrieval_latency_ms or 0:.0f} ms, summary {response.summary_latency_ms:.0f} ms, "
        f"answer {response.answer_latency_ms:.0f} ms · request {response.request_id}"
    )
    if response.degraded is not None:
        console.print(
            f"[yellow]degraded: {response.degraded.reason} ({', '.join(response.degraded.parts)})[/]"
        )


def serve(
    ctx: typer.Context,
    host: str = typer.Option(None, "--host", help="Interface to bind (default: server.host, 127.0.0.1)."),
    port: int = typer.Option(None, "--port", help="Port (default: server.port, 8000)."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level."),
) -> None:
    """Run the HTTP API (/api/…, /docs) and the web UI with uvicorn."""
    import uvicorn

    from deepcite.retrieval.shared_dir import announced_server
    from deepcite.server.app import create_app

    with user_errors():
        engine = state(ctx).engine
        app = create_app(engine)
    settings = engine.settings
    host, port = host or settings.server.host, port or settings.server.port
    with announced_server(
        settings.data_dir, host, port
    ):  # lets a CLI command on its collections go through it
        uvicorn.run(app, host=host, port=port, log_level=log_level)
