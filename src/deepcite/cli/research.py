"""``deepcite research`` (hops shown live, then the evidence pack) and ``deepcite eval multihop``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from deepcite.cli.common import (
    COLLECTION_OPTION,
    EVAL_DATA_DIR_OPTION,
    FILTER_OPTION,
    GROUP_OPTION,
    JSON_OPTION,
    MAX_HOPS_OPTION,
    OUT_OPTION,
    console,
    emit,
    err_console,
    parse_filters,
    state,
    user_errors,
)
from deepcite.cli.sources import source_label
from deepcite.errors import InputError
from deepcite.models import CoverageReport, EvidencePack, coverage_percent

if TYPE_CHECKING:
    from deepcite.service import HopEvent


def research(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question to research."),
    collection: str = COLLECTION_OPTION,
    max_hops: int = MAX_HOPS_OPTION,
    min_hops: int = typer.Option(None, "--min-hops", help="Fewest hops (default: the setting)."),
    filters: list[str] = FILTER_OPTION,
    group: list[str] = GROUP_OPTION,
    no_llm: bool = typer.Option(False, "--no-llm", help="Use the offline heuristics even if an LLM is set."),
    json_out: bool = JSON_OPTION,
    out: Path = OUT_OPTION,
) -> None:
    """Plan a question into aspects, retrieve over hops until they are covered, show the evidence pack.

    The same path as the API's: one Engine, one checked request, the caller's groups applied.
    """
    from deepcite.config import LLMSettings
    from deepcite.service import QuestionRequest

    with user_errors():
        cli = state(ctx)
        settings = cli.settings
        if min_hops is not None:
            stopping = settings.research.stopping.model_copy(update={"min_hops": min_hops})
            research = settings.research.model_copy(update={"stopping": stopping})
            settings = settings.model_copy(update={"research": research})
        if no_llm:
            settings = settings.model_copy(update={"llm": LLMSettings()})
        cli.override(settings)
        console_out = err_console if json_out else console

        def on_hop(hop: HopEvent) -> None:
            _print_hop(console_out, hop)

        request = QuestionRequest(
            query=question, collection=collection, max_hops=max_hops, filters=parse_filters(filters)
        )
        result = asyncio.run(cli.engine.research(request, group or None, on_hop))
    emit(
        {
            "question": result.question,
            "hops": result.hops,
            "seconds": round(result.seconds, 3),
            "subquestions": result.subquestions,
            "coverage": result.coverage.model_dump(mode="json"),
            "pack": result.pack.model_dump(mode="json"),
        },
        json_out=json_out,
        out=out,
    )
    if json_out:
        return
    _print_pack(result.pack)
    _print_coverage(result.coverage)
    console.print(
        f"[bold]stopped:[/] {result.pack.stop_reason} · {result.hops} hops in {result.seconds:.2f}s"
    )
    for line in result.pack.warnings + result.pack.errors:
        console.print(f"[yellow]note:[/] {line}")


def _print_hop(out, hop: HopEvent) -> None:  # noqa: ANN001 - a rich Console
    colour = "green" if hop.decision == "stop" else "blue"
    out.print(f"[bold]hop {hop.hop}[/] {hop.subquestion}")
    covered = hop.coverage.total_aspects - hop.coverage.uncovered_count
    out.print(
        f"  {len(hop.selected)} selected ({hop.new_evidence} new, {hop.evidence_total} in evidence) · coverage "
        f"{coverage_percent(hop.weighted_coverage)}% ({covered} of {hop.coverage.total_aspects} aspects covered)"
    )
    if hop.uncovered_aspects:
        out.print(f"  uncovered: {'; '.join(hop.uncovered_aspects)}")
    for skipped in hop.skipped_queries:
        out.print(f"  not run: {skipped.text} ({skipped.reason})", markup=False)
    out.print(f"  [{colour}]{hop.decision}[/]: {hop.reason}")


def _print_pack(pack: EvidencePack) -> None:
    table = Table(title=f"evidence pack · {len(pack.final_evidence)} passages")
    for column in ("#", "score", "title", "passage", "found by"):
        table.add_column(column, overflow="fold")
    for i, cand in enumerate(pack.final_evidence, start=1):
        rounds = sorted({p.round for p in cand.provenance})
        found_by = "hop " + ",".join(map(str, rounds))
        if cand.link is not None:  # what lifted it in the pack's final order
            found_by += (
                f" · linked to {cand.link.via} ({cand.link.edge.replace('_', ' ')}: {cand.link.entity})"
            )
        if cand.llm_read_rounds:  # an LLM choosing next hops read a fact the answer needs from it
            found_by += " · read by the LLM after hop " + ",".join(map(str, cand.llm_read_rounds))
        table.add_row(
            str(i),
            f"{cand.score:.4f}",
            " · ".join(filter(None, (cand.chunk.title or cand.chunk.doc_id, source_label(cand.chunk)))),
            cand.chunk.text[:160] + ("…" if len(cand.chunk.text) > 160 else ""),
            found_by,
        )
    console.print(table)


def _print_coverage(coverage: CoverageReport) -> None:
    covered = coverage.total_aspects - coverage.uncovered_count
    table = Table(
        title=f"coverage {coverage_percent(coverage.weighted_coverage)}% · "
        f"{covered} of {coverage.total_aspects} aspects covered"
    )
    for column in ("aspect", "type", "importance", "coverage", "covered at hop"):
        table.add_column(column)
    for a in coverage.aspects:
        table.add_row(
            a.aspect,
            str(a.type),
            f"{a.importance:.1f}",
            f"{coverage_percent(a.coverage_score)}%",
            str(a.covered_at_hop or "-"),
        )
    console.print(table)


def eval_multihop(
    ctx: typer.Context,
    data: Path = typer.Option(
        ..., "--data", help="A multi-hop QA file (JSON Lines, whatever its suffix, or a JSON list)."
    ),
    fmt: str = typer.Option("auto", "--format", "-f", help="auto | ircot | musique | hotpot | 2wiki"),
    limit: int = typer.Option(
        None, "--limit", help="Evaluate only the first N questions (all paragraphs are pooled)."
    ),
    systems: str = typer.Option(
        None,
        "--systems",
        help="Comma-separated: single_shot (one hybrid search) and settings profiles, each a shipped name "
        "(default, before_graph, graph_list, llm_hops) or a .toml file. Default: single_shot,default,before_graph.",
    ),
    data_dir: Path = EVAL_DATA_DIR_OPTION,
    collection: str = typer.Option(
        None, "--collection", help="Pool collection name (default: derived from the file's content)."
    ),
    json_out: bool = JSON_OPTION,
    out: Path = typer.Option(None, "--out", help="Write the figures per system as JSON to this file."),
) -> None:
    """Pool every paragraph, then score single-shot hybrid retrieval and each settings profile's research
    through the Engine (``default`` is what users run) in one run."""
    from deepcite.evaluation.multihop import (
        DEFAULT_SYSTEMS,
        evaluate,
        ingest_pool,
        load_questions,
        systems_for,
    )

    with user_errors():
        cli = state(ctx)
        cli.use_data_dir(data_dir)
        engine = cli.engine
        loaded = load_questions(data, fmt, limit)
        shown = err_console if json_out else console  # stdout carries the JSON alone
        if loaded.skipped:
            shown.print(
                f"skipped {loaded.skipped} record(s) without a question or supporting labels; "
                f"first: {loaded.reasons[0]}"
            )
        chosen = tuple(x.strip() for x in systems.split(",") if x.strip()) if systems else DEFAULT_SYSTEMS
        shown.print(
            f"pooling the paragraphs of {data.name} into a collection under {engine.settings.data_dir} …"
        )
        runs, skipped = systems_for(engine, chosen, lambda e: ingest_pool(e, data, loaded.format, collection))
        for message in skipped:
            shown.print(message)
        if not runs:
            raise InputError(f"no system left to run: {'; '.join(skipped)}")
        columns = [TextColumn("[bold]questions"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
        with Progress(*columns, console=shown) as bar:
            task = bar.add_task("eval", total=len(loaded.questions))
            try:
                results: dict[str, object] = dict(
                    evaluate(
                        runs, loaded.questions, progress=lambda done, _: bar.update(task, completed=done)
                    )
                )
            finally:
                for run in runs:
                    if run.engine is not engine:
                        run.engine.close()
    results["skipped_records"] = loaded.skipped
    title = f"{data.name} · {len(loaded.questions)} questions ({loaded.skipped} skipped) · pooled, {loaded.format}"
    table = Table(title=title)
    keys = ("recall@5", "recall@10", "all_recall@10", "hops_mean", "seconds_per_question")
    table.add_column("system")
    for key in keys:
        table.add_column(key, justify="right")
    for name, row in results.items():
        if isinstance(row, dict):
            table.add_row(name, *(f"{row[k]:.3f}" for k in keys))
    emit(results, json_out=json_out, out=out)
    if not json_out:
        console.print(table)
