"""``deepcite eval …``: retrieval, multi-hop, answer and practitioner evaluations."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from deepcite.cli.common import (
    EVAL_DATA_DIR_OPTION,
    JSON_OPTION,
    console,
    emit,
    err_console,
    print_json,
    state,
    user_errors,
)

eval_app = typer.Typer(help="Measure quality on real benchmarks.", no_args_is_help=True)


@eval_app.command("retrieval")
def eval_retrieval(
    ctx: typer.Context,
    beir: Path = typer.Option(..., "--beir", help="A BEIR directory (corpus.jsonl, queries.jsonl, qrels/)."),
    modes: str = typer.Option(
        "bm25,dense,hybrid", "--modes", help="Comma-separated: bm25,dense,hybrid,graph"
    ),
    fusions: str = typer.Option(
        None, "--fusions", help="Hybrid fusions to run, e.g. rrf,dbsf (default: setting)"
    ),
    split: str = typer.Option("test", "--split", help="qrels split: test, dev or train"),
    collection: str = typer.Option(
        None, "--collection", help="Scratch collection (default: beir-<dir name>)"
    ),
    json_out: bool = JSON_OPTION,
    out: Path = typer.Option(None, "--out", help="Write the results as JSON to this file."),
) -> None:
    """Ingest (or reuse) a BEIR corpus and report nDCG@10, Recall@100 and MRR@10 per mode."""
    from deepcite.evaluation.beir import evaluate_modes, load_beir
    from deepcite.models import FusionMethod, SearchMode

    shown = err_console if json_out else console  # stdout carries the JSON alone
    with user_errors():
        engine = state(ctx).engine
        settings = engine.settings
        data = load_beir(beir, split)
        name = collection or f"eval-{beir.resolve().name}".replace("_", "-")
        shown.print(f"[bold]{name}[/]: ingesting (or reusing) {beir / 'corpus.jsonl'} …")
        report = engine.ingest(name, beir, fmt="beir", on_error="skip")
        col = engine.corpus.collection(name)
        shown.print(
            f"  {report.documents} documents, {report.written} chunks written, {report.unchanged} reused "
            f"in {report.seconds:.1f}s"
        )
        fusion_list = [FusionMethod.from_str(f) for f in (fusions or settings.search.fusion).split(",")]
        runs: list[tuple[SearchMode, FusionMethod | None]] = []
        for mode in (SearchMode.from_str(m) for m in modes.split(",")):
            if mode is SearchMode.HYBRID:
                runs.extend((mode, f) for f in fusion_list)
            else:
                runs.append((mode, None))
        results = evaluate_modes(col, data, runs, on_run=lambda label: shown.print(f"  running {label} …"))
    table = Table(title=f"{beir.name} · {split} · {len(data.queries)} queries")
    for column in ("mode", "nDCG@10", "Recall@100", "MRR@10", "ms/query"):
        table.add_column(column, justify="right" if column != "mode" else "left")
    for label, row in results.items():
        table.add_row(
            label,
            f"{row['ndcg@10']:.4f}",
            f"{row['recall@100']:.4f}",
            f"{row['mrr@10']:.4f}",
            f"{row['ms_per_query']:.2f}",
        )
    emit(results, json_out=json_out, out=out)
    if not json_out:
        console.print(table)


@eval_app.command("answers")
def eval_answers(
    ctx: typer.Context,
    pubmedqa: Path = typer.Option(
        None, "--pubmedqa", help="PubMedQA PQA-L folder (ori_pqal.json, test_ground_truth.json)."
    ),
    hotpotqa: Path = typer.Option(None, "--hotpotqa", help="IRCoT's HotpotQA 500 file (JSON Lines)."),
    split: str = typer.Option("test", "--split", help="PubMedQA split: train (tune here) or test (report)."),
    limit: int = typer.Option(None, "--limit", help="Answer only the first N questions of each set."),
    data_dir: Path = EVAL_DATA_DIR_OPTION,
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Also answer with the configured LLM (DEEPCITE_LLM_BASE_URL, DEEPCITE_LLM_MODEL), side by side "
        "with the offline writer on the same research context.",
    ),
    json_out: bool = JSON_OPTION,
    out: Path = typer.Option(None, "--out", help="Write the figures as JSON to this file."),
) -> None:
    """Answers against PubMedQA conclusions and HotpotQA answers (offline, and with --llm the configured
    model's), with baselines from the same run."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from deepcite.errors import ConfigError
    from deepcite.evaluation.answer_tables import figure_tables
    from deepcite.evaluation.hotpotqa import evaluate_hotpotqa
    from deepcite.evaluation.pubmedqa import load_pubmedqa, pubmedqa_collection
    from deepcite.evaluation.pubmedqa_run import evaluate_pubmedqa

    if pubmedqa is None and hotpotqa is None:
        console.print("[red]error:[/] give --pubmedqa FOLDER, --hotpotqa FILE or both")
        raise typer.Exit(2)
    results: dict[str, object] = {}
    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with user_errors(), Progress(*columns, console=console, disable=json_out) as bar:
        cli = state(ctx)
        cli.use_data_dir(data_dir)
        engine = cli.engine
        if llm and not engine.settings.llm.configured:
            raise ConfigError("--llm needs a model: set DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL")
        if pubmedqa is not None:
            items = load_pubmedqa(pubmedqa, split, limit)
            collection = pubmedqa_collection(pubmedqa, engine)
            task = bar.add_task(f"pubmedqa {split}", total=len(items))
            results[f"pubmedqa_{split}"] = evaluate_pubmedqa(
                engine, collection, items, llm=llm, progress=lambda done, _: bar.update(task, completed=done)
            )
        if hotpotqa is not None:
            task = bar.add_task("hotpotqa", total=limit or 500)
            results["hotpotqa"] = evaluate_hotpotqa(
                engine,
                hotpotqa,
                limit=limit,
                llm=llm,
                progress=lambda done, n: bar.update(task, completed=done, total=n),
            )
    for name, systems in results.items():
        assert isinstance(systems, dict)
        if not json_out:
            for table in figure_tables(name, systems):
                console.print(table)
    emit(results, json_out=json_out, out=out)


from deepcite.cli.practitioners import eval_practitioners  # noqa: E402

eval_app.command("practitioners")(eval_practitioners)


@eval_app.command("documents")
def eval_documents(
    ctx: typer.Context,
    files: Path = typer.Option(..., "--files", help="The folder of documents the questions are about."),
    questions: Path = typer.Option(
        ..., "--questions", help="Check set: JSON Lines of file, question, answer, page."
    ),
    collection: str = typer.Option("real-docs-eval", "--collection", "-c", help="Collection to ingest into."),
    k: int = typer.Option(5, "-k", help="Hits looked at per question."),
    research: bool = typer.Option(
        True, "--research/--no-research", help="Also score the research evidence pack."
    ),
    quotes: bool = typer.Option(
        True, "--quotes/--no-quotes", help="Also answer each question and check its citations' quotes."
    ),
    json_out: bool = JSON_OPTION,
) -> None:
    """Phrase hit-rate on the right page per format, then (after ingesting the folder) hybrid-search and
    research evidence hit@k with page correctness, on a check set of verbatim answer phrases; with
    ``--quotes``, each question is answered and every cited passage's quote checked: the chunk text at its
    offsets, and for PDFs on the cited page."""
    from deepcite.evaluation.documents_run import evaluate_documents

    with user_errors():
        engine = state(ctx).engine
        summary = evaluate_documents(
            engine, files, questions, collection, k=k, research=research, quotes=quotes
        )
    scores: dict[str, dict[str, float]] = summary["retrieval"]
    kinds: dict[str, dict[str, float]] = summary[f"hit@{k}_per_kind"]
    if json_out:
        print_json(summary)
        return
    table = Table(title=f"phrase on the right page · {summary['questions']} questions")
    table.add_column("format")
    table.add_column("hit-rate", justify="right")
    for fmt, (hit, total) in summary["phrase_on_page_counts"].items():  # type: ignore[union-attr]
        table.add_row(fmt, f"{hit}/{total} ({hit / total:.0%})")
    console.print(table)
    for label, values in scores.items():
        console.print(f"[bold]{label}[/]: " + ", ".join(f"{key} {value}" for key, value in values.items()))
        console.print(
            f"  hit@{k} per kind: " + ", ".join(f"{kind} {value}" for kind, value in kinds[label].items())
        )
    if quotes:
        console.print(
            "[bold]quotes[/]: " + ", ".join(f"{key} {value}" for key, value in summary["quotes"].items())
        )
        for part, rates in summary["states_answer"].items():
            console.print(
                f"[bold]states the answer, {part}[/]: " + ", ".join(f"{k} {v}" for k, v in rates.items())
            )
        console.print(
            "[bold]summary contract[/]: "
            + ", ".join(f"{k} {v}" for k, v in summary["summary_contract"].items())  # type: ignore[union-attr]
        )
