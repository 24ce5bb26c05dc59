"""``deepcite eval …``: retrieval, multi-hop and practitioner evaluations."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from deepcite.cli.common import console, user_errors

eval_app = typer.Typer(help="Measure quality on real benchmarks.", no_args_is_help=True)


@eval_app.command("retrieval")
def eval_retrieval(
    beir: Path = typer.Option(..., "--beir", help="A BEIR directory (corpus.jsonl, queries.jsonl, qrels/)."),
    modes: str = typer.Option("bm25,dense,hybrid", "--modes", help="Comma-separated: bm25,dense,hybrid"),
    fusions: str = typer.Option(
        None, "--fusions", help="Hybrid fusions to run, e.g. rrf,dbsf (default: setting)"
    ),
    split: str = typer.Option("test", "--split", help="qrels split: test, dev or train"),
    collection: str = typer.Option(
        None, "--collection", help="Scratch collection (default: beir-<dir name>)"
    ),
    json_out: Path = typer.Option(None, "--json", help="Write the results as JSON to this file."),
) -> None:
    """Ingest (or reuse) a BEIR corpus and report nDCG@10, Recall@100 and MRR@10 per mode."""
    from deepcite.config import get_settings
    from deepcite.evaluation.beir import evaluate_modes, load_beir
    from deepcite.models import FusionMethod, SearchMode
    from deepcite.retrieval.collection import open_collection

    with user_errors():
        settings = get_settings()
        data = load_beir(beir, split)
        name = collection or f"eval-{beir.resolve().name}".replace("_", "-")
        col = open_collection(name, settings)
        console.print(f"[bold]{name}[/]: ingesting (or reusing) {beir / 'corpus.jsonl'} …")
        report = col.ingest(beir, fmt="beir", on_error="skip")
        console.print(
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
        results = evaluate_modes(col, data, runs, on_run=lambda label: console.print(f"  running {label} …"))
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
    console.print(table)
    if json_out:
        json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        console.print(f"wrote {json_out}")


from deepcite.cli.practitioners import eval_practitioners  # noqa: E402

eval_app.command("practitioners")(eval_practitioners)
