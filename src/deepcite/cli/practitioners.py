"""``deepcite practitioners import|search|reindex`` and ``deepcite eval practitioners``."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.panel import Panel
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from deepcite.cli.common import JSON_OPTION, console, emit, err_console, print_json, state, user_errors

if TYPE_CHECKING:
    from deepcite.evaluation.practitioners import EvalReport

practitioners_app = typer.Typer(help="Find practitioners from a patient's own words.", no_args_is_help=True)

_PROBLEMS_SHOWN = 20


@practitioners_app.command("import")
def import_command(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="The practitioner file to import."),
    fmt: str = typer.Option(..., "--format", "-f", help="cms-national | cms-reduced | csv | jsonl"),
    json_out: bool = typer.Option(False, "--json", help="Print the import report as JSON."),
) -> None:
    """Import (or update by NPI) practitioners into the directory, in one transaction; then index them."""
    with user_errors():
        engine = state(ctx).engine
        columns = [SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()]
        with Progress(*columns, console=console, disable=json_out) as bar:
            task = bar.add_task(f"reading {path.name}", total=None)
            indexed = 0

            def on_progress(stage: str, n: int) -> None:
                nonlocal indexed
                if stage == "read":
                    bar.update(task, description=f"reading {path.name}: {n} rows")
                    return
                indexed += n
                bar.update(task, description=f"indexing profiles: {indexed}")

            report = engine.practitioners.import_file(path, fmt, on_progress)
        total = engine.practitioners.count()
    if json_out:
        print_json(report.to_dict() | {"directory_size": total})
        return
    console.print(
        f"[green]imported[/] {path}: {report.rows_read} rows → {report.inserted} new, "
        f"{report.updated} updated, {report.duplicates_merged} duplicate rows merged, {report.skipped} "
        f"skipped, {report.blank_rows} blank rows ignored ({report.seconds:.1f}s). "
        f"The directory holds {total} practitioners."
    )
    for problem in report.problems[:_PROBLEMS_SHOWN]:
        console.print(f"  [yellow]skipped[/] line {problem.line}: {problem.reason}")
    if report.skipped > _PROBLEMS_SHOWN:
        console.print(f"  … and {report.skipped - _PROBLEMS_SHOWN} more (see --json)")
    if report.unmapped_specialties:
        names = ", ".join(sorted(report.unmapped_specialties))
        console.print(
            f"  [yellow]specialties without a NUCC mapping (no definitions in profiles):[/] {names}"
        )


@practitioners_app.command("reindex")
def reindex_command(
    ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print the result as JSON.")
) -> None:
    """Rewrite every profile into the search collection (after a failed sync or a settings change)."""
    with user_errors():
        written = state(ctx).engine.practitioners.reindex()
    if json_out:
        print_json({"indexed": written})
    else:
        console.print(f"[green]indexed[/] {written} profiles")


@practitioners_app.command("search")
def search_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., help='The patient\'s request, e.g. "I need SVT ablation".'),
    city: str = typer.Option(None, "--city", help="Only practitioners in this city."),
    region: str = typer.Option(None, "--state", help="Only practitioners in this state (code or name)."),
    zip_code: str = typer.Option(None, "--zip", help="Only practitioners at this ZIP."),
    nearby: bool = typer.Option(False, "--nearby", help="Do not filter by location: list the nearest first."),
    limit: int = typer.Option(None, "--limit", "-k", min=1, max=100, help="Results (default: setting)."),
    message: list[str] = typer.Option(
        None, "--message", "-m", help="An earlier turn, oldest first: 'user: text' or 'assistant: text'."
    ),
    conversation: Path = typer.Option(
        None, "--conversation", help='JSON file: [{"role": "user"|"assistant", "content": "..."}, ...].'
    ),
    explain: bool = typer.Option(False, "--explain", help="Print each result's reasons under the table."),
    json_out: bool = typer.Option(False, "--json", help="Print the full response as JSON."),
) -> None:
    """Find practitioners for a request, with the intent analysis and every score part (and the earlier turns
    of a conversation, e.g. -m "user: my knee hurts when I run" "actually, it's for my daughter")."""
    from deepcite.practitioners.api import PractitionerQuery
    from deepcite.practitioners.location import Location

    with user_errors():
        location = Location(city=city, state=region, zip=zip_code) if (city or region or zip_code) else None
        request = PractitionerQuery(
            user_query=query,
            messages=_messages(message or [], conversation),
            location=location,
            location_mode="nearby" if nearby else "filter",
            limit=limit,
        )
        response = asyncio.run(state(ctx).engine.practitioners.find(request))
    if json_out:
        print_json(response)
        return
    _print_response(response, explain)


def _messages(turns: list[str], path: Path | None) -> list:  # type: ignore[type-arg]
    """Earlier turns from --conversation (a JSON list) and then --message ("role: text", user by default)."""
    from pydantic import TypeAdapter, ValidationError

    from deepcite.errors import InputError
    from deepcite.practitioners.api import ChatMessage

    out: list[ChatMessage] = []
    if path is not None:
        try:
            out += TypeAdapter(list[ChatMessage]).validate_json(path.read_bytes())
        except OSError as exc:
            raise InputError(f"cannot read the conversation file {path.name}: {exc.strerror}") from None
        except ValidationError as exc:
            raise InputError(
                f"{path.name} is not a conversation: expected a JSON list of {{role: user|assistant, content}} "
                f"objects ({exc.errors()[0]['msg']})"
            ) from None
    for turn in turns:
        role, sep, text = turn.partition(":")
        known = bool(sep) and role.strip().lower() in ("user", "assistant")
        out.append(
            ChatMessage(role=role.strip().lower() if known else "user", content=text if known else turn)
        )
    return out


def _print_response(response, explain: bool = False) -> None:  # type: ignore[no-untyped-def]
    if response.emergency is not None:
        console.print(Panel(response.emergency.guidance, title=f"[bold red]{response.emergency.level}[/]"))
    intent = response.intent
    used = ", ".join(
        f"{name}: {use.source}" + (f" ({use.fallback_reason})" if use.fallback_reason else "")
        for name, use in response.analysis_used.items()
    )
    lines = [
        f"[bold]patient words[/]: {intent.q_patient or '(none left after removing filler)'}",
        f"[bold]intent[/]: {intent.clinical.primary_intent} · {intent.general.specificity} · "
        f"confidence {intent.general.confidence:.2f} · clear: {intent.clear}",
        f"[bold]intent terms[/]: {', '.join(intent.intent_terms) or '-'}",
        f"[bold]anchor phrases[/]: {', '.join(intent.anchor_phrases) or '-'}",
        f"[bold]negative terms[/]: {', '.join(intent.negative_terms) or '-'}"
        + ("" if intent.clear or not intent.negative_terms else " (not applied: the query is not clear)"),
        f"[bold]urgency[/]: {intent.insights.urgency} · [bold]summary[/]: {intent.insights.summary}",
        f"[bold]analysis[/]: {used}",
        f"[bold]timings[/]: analysis {response.timings_ms.analysis:.0f} ms · stage A "
        f"{response.timings_ms.stage_a:.0f} ms · stage B {response.timings_ms.stage_b:.0f} ms",
    ]
    if response.specialties:
        lines.append(
            "[bold]specialties[/]: "
            + "; ".join(
                f"{m.specialty} ({m.source}"
                + (f", {m.similarity:.2f} to {m.matched_text!r}" if m.similarity is not None else "")
                + f", +{m.boost:.2f})"
                for m in response.specialties
            )
        )
    if response.debug.filled_from_intent:
        lines.append(f"[yellow]filled from intent[/]: {response.debug.fill_reason}")
    console.print(Panel("\n".join(lines), title="intent", expand=False))
    for note in response.notes:
        console.print(f"[bold yellow]note:[/] {note}")
    if not response.results:
        console.print(f"[red]no results[/]: {response.reason}")
        return
    table = Table(show_lines=False)
    for column in ("#", "name", "specialty", "city", "score", "matched", "from"):
        table.add_column(column, justify="right" if column in ("#", "score") else "left")
    for rank, r in enumerate(response.results, start=1):
        matched = ", ".join([*r.matched_anchor_phrases, *r.matched_intent_terms])
        if r.matched_negative_terms:
            matched += f" [red]−{', '.join(r.matched_negative_terms)}[/]"
        place = ", ".join(p for p in (r.city, r.state) if p)
        table.add_row(
            str(rank), r.name, r.primary_specialty or "", place, f"{r.score:.2f}", matched, r.source
        )
    console.print(table)
    if explain:
        for rank, r in enumerate(response.results, start=1):
            console.print(
                f"[bold]{rank}. {r.name}[/] — {r.specialty_definition or r.primary_specialty or ''}"
            )
            for line in r.explanation:
                console.print(f"   · {line}")


def eval_practitioners(
    ctx: typer.Context,
    directory: Path = typer.Option(..., "--directory", help="The practitioner file to evaluate on."),
    fmt: str = typer.Option(..., "--format", "-f", help="cms-national | cms-reduced | csv | jsonl"),
    queries: Path = typer.Option(..., "--queries", help="JSONL: {query, relevant: {specialty: grade}}"),
    systems: str = typer.Option(
        "catalogue_only=practitioners_catalogue_only,two_stage=default",
        "--systems",
        help="The evaluated systems as NAME=PROFILE (a settings profile's name or .toml path), comma-separated; "
        "recall and latency are two_stage's.",
    ),
    json_out: bool = JSON_OPTION,
    out: Path = typer.Option(None, "--out", help="Write the figures as JSON to this file."),
    per_query: bool = typer.Option(False, "--per-query", help="Also print each query's figures."),
    per_specialty: bool = typer.Option(False, "--per-specialty", help="Also print recall per specialty."),
) -> None:
    """nDCG@10 and P@10 of plain BM25 and of each system (by default the catalogue-only finder and the shipped
    two-stage finder) on a scratch copy of the directory, through the Engine; per-specialty recall,
    unreached specialties and latency (p50/p95) of the shipped finder."""
    from deepcite.evaluation.practitioners import (
        evaluate_practitioners,
        load_queries,
        parse_systems,
        scratch_settings,
    )

    shown = err_console if json_out else console  # stdout carries the JSON alone
    with user_errors(), tempfile.TemporaryDirectory(prefix="deepcite-eval-") as scratch:
        items, chosen = load_queries(queries), parse_systems(systems)
        cli = state(ctx)
        cli.override(scratch_settings(cli.settings, Path(scratch)))  # reproducible: offline, its own files
        try:
            report = cli.engine.practitioners.import_file(directory, fmt)
            shown.print(
                f"directory: {report.inserted} practitioners from {directory.name}; {len(items)} queries"
            )
            result = asyncio.run(evaluate_practitioners(cli.engine, items, systems=chosen))
        finally:
            cli.close()  # before the scratch directory goes
    _print_evaluation(result, f"{queries.name} on {directory.name}", per_query, per_specialty, shown)
    emit(result.to_dict(), json_out=json_out, out=out)


def _print_evaluation(
    result: EvalReport, title: str, per_query: bool, per_specialty: bool, shown: Console
) -> None:
    """The figures of each system, then (when asked) recall per specialty and each query's nDCG."""
    table = Table(title=title)
    for column in ("system", "profile", "nDCG@10", "P@10"):
        table.add_column(column, justify="right" if column.startswith(("nDCG", "P@")) else "left")
    for system, figures in result.summary.items():
        profile = result.profiles.get(system, "(baseline)")
        table.add_row(system, profile, f"{figures['ndcg@10']:.4f}", f"{figures['p@10']:.4f}")
    shown.print(table)
    latency = result.latency_ms
    shown.print(f"two_stage latency per request: p50 {latency['p50']:.1f} ms · p95 {latency['p95']:.1f} ms")
    if result.urgency:
        u = result.urgency
        shown.print(
            f"emergency guidance: right on {u['accuracy']:.3f} of {int(u['labelled'])} labelled requests "
            f"({int(u['missed'])} urgent missed, {int(u['false_alarms'])} false alarms); both right on "
            f"{u['pairs_right']:.3f} of {int(u['pairs'])} urgent/non-urgent pairs"
        )
    shown.print(
        f"specialties no request reaches in the top 10: {', '.join(result.unreached) or 'none'} "
        f"(of {len(result.per_specialty)} targeted)"
    )
    if per_specialty:
        recall = Table()
        for column in ("specialty", "targeted", "reached", "recall"):
            recall.add_column(column, justify="left" if column == "specialty" else "right")
        for spec, row in result.per_specialty.items():
            recall.add_row(spec, str(int(row["targeted"])), str(int(row["reached"])), f"{row['recall']:.2f}")
        shown.print(recall)
    if per_query:
        systems = list(result.summary)
        detail = Table()
        for column in ("id", "query", *(f"{s} nDCG" for s in systems), "top"):
            detail.add_column(column)
        for row in result.per_query:
            detail.add_row(
                row["id"],
                row["query"][:60],
                *(f"{row.get(f'{s}:ndcg@10', 0.0):.3f}" for s in systems),
                " | ".join(s or "" for s in row["top"]),
            )
        shown.print(detail)
