"""``deepcite ingest``, ``deepcite search`` and ``deepcite collections``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from deepcite.cli.common import (
    COLLECTION_OPTION,
    FILTER_OPTION,
    GROUP_OPTION,
    JSON_OPTION,
    console,
    parse_filters,
    print_json,
    state,
    user_errors,
)
from deepcite.cli.sources import source_label
from deepcite.errors import InputError
from deepcite.ingest.report import FileStage, FileStatus, IngestProgress, IngestReport
from deepcite.models import FusionMethod, SearchMode

SERVER_OPTION = typer.Option(
    None,
    "--server",
    help="Go through this running `deepcite serve` (e.g. http://127.0.0.1:8000); default: the server of this "
    "data dir when it holds the collection, else the data dir directly.",
)
collections_app = typer.Typer(help="List, inspect and drop collections.", no_args_is_help=True)


def ingest(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="A file or folder to ingest."),
    collection: str = typer.Option(..., "--collection", "-c", help="Collection to write into."),
    fmt: str = typer.Option(
        "auto", "--format", "-f", help="auto|files|jsonl|beir|pubmedqa|hotpotqa|musique|text"
    ),
    on_error: str = typer.Option(
        "fail", "--on-error", help="fail: write nothing on bad input; skip: skip it"
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the ingest report as JSON."),
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Drop the collection first (e.g. a damaged one), then ingest it anew."
    ),
    server: str = SERVER_OPTION,
    ray: str = typer.Option(
        None,
        "--ray",
        metavar="ADDRESS",
        help="Read, chunk and embed on Ray (the ray extra): 'local' starts Ray on this machine; "
        "else a cluster's address (auto, host:6379, ray://host:10001). This process writes the store.",
    ),
) -> None:
    """Read, chunk, embed and index a corpus file or a folder of documents (PDF, DOCX, PPTX, HTML, EPUB,
    Markdown, text, JSON/JSON Lines: each file's type found by its content). Every file is reported:
    ingested, unchanged, or skipped with its reason. Re-running is idempotent. When `deepcite serve` holds
    the collection (or with --server), the files are uploaded to the server, which ingests them."""
    from deepcite.cli.remote import remote_ingest, server_for

    with user_errors():
        if on_error not in ("skip", "fail"):
            raise InputError(f"--on-error must be skip or fail, not {on_error!r}")
        settings = state(ctx).settings
        url = server_for(settings, collection, server)
        if url and ray:
            raise InputError(
                f"--ray cannot go through the server at {url}: stop `deepcite serve`, then run it again"
            )
        if url and rebuild:
            raise InputError(
                f"--rebuild cannot go through the server at {url}: stop `deepcite serve`, then run it again"
            )
        columns = [
            TextColumn("[bold]ingest[/] {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("docs · {task.fields[rate]:.1f} docs/s · {task.fields[written]} chunks written"),
            TimeElapsedColumn(),
        ]
        with Progress(*columns, console=console, disable=json_out, transient=False) as bar:
            task = bar.add_task(collection, total=None, rate=0.0, written=0)

            def on_progress(docs: int, written: int) -> None:
                elapsed = bar.tasks[task].elapsed or 1e-9
                bar.update(task, completed=docs, rate=docs / elapsed, written=written)

            def on_file(event: IngestProgress) -> None:
                stage = "" if event.stage is FileStage.DONE else f" ({event.stage.value})"
                bar.update(
                    task, description=f"{collection} · file {event.done}/{event.total} {event.name}{stage}"
                )

            if url:
                report = remote_ingest(
                    url, collection, path, fmt=fmt, on_error=on_error, settings=settings, on_file=on_file
                )
            else:
                report = state(ctx).engine.ingest(
                    collection,
                    path,
                    fmt=fmt,
                    on_error=on_error,  # type: ignore[arg-type]
                    rebuild=rebuild,
                    progress=on_progress,
                    on_progress=on_file,
                    ray=ray,
                )
    if json_out:
        print_json(report.to_dict())
        return
    print_ingest_report(report)


def print_ingest_report(report: IngestReport) -> None:
    """The end-of-ingest report: counts, then every file that was not simply ingested, with its reason."""
    by_status = Counter(f.status.value for f in report.files)
    files = ", ".join(f"{n} {status}" for status, n in sorted(by_status.items()))
    console.print(
        f"[green]done[/]: {report.documents} documents → {report.chunks} chunks "
        f"({report.written} written, {report.unchanged} unchanged) in {report.seconds:.1f}s "
        f"({report.docs_per_s:.1f} docs/s; reading {report.read_seconds:.1f}s, embedding "
        f"{report.embed_seconds:.1f}s, indexing {report.index_seconds:.1f}s)"
        + (f"\nfiles: {len(report.files)} ({files})" if report.files else "")
    )
    if (t := report.triples) is not None:  # graph.llm_triples
        failed = ", ".join(f"{n} {reason}" for reason, n in sorted(t.failed.items())) or "none"
        console.print(
            f"LLM triples: {t.extracted} passages read ({t.triples} triples) in {t.requests} requests, "
            f"{t.cached} from the cache; kept offline entities: {failed}"
        )
    if report.files:
        table = Table(title="files")
        for name in ("file", "type", "status", "pages", "chunks", "note"):
            table.add_column(name, overflow="fold")
        for f in report.files:
            note = f.message or (f"OCR: {f.ocr_pages} of {f.pages} pages" if f.ocr_pages else "")
            style = "yellow" if f.status is FileStatus.SKIPPED else ""
            table.add_row(
                f.file,
                f.kind or "?",
                f"[{style}]{f.status.value}[/]" if style else f.status.value,
                str(f.pages or ""),
                str(f.chunks),
                note,
            )
        console.print(table)
    if report.skipped:
        console.print(f"[yellow]skipped {len(report.skipped)} records:[/]")
        for problem in report.skipped[:20]:
            where = f"{problem.path}:{problem.line}" if problem.line else str(problem.path)
            console.print(f"  {where}: {problem.reason}")
        if len(report.skipped) > 20:
            console.print(f"  … and {len(report.skipped) - 20} more (use --json for all)")


def remove(
    ctx: typer.Context,
    document: str = typer.Argument(
        ..., help="The document id: the file's path relative to the ingested folder."
    ),
    collection: str = typer.Option(..., "--collection", "-c", help="Collection to remove it from."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Remove a document (a file's chunks and its stored original) from a collection."""
    from deepcite.errors import NotFoundError

    engine = state(ctx).engine
    with user_errors():
        doc_id = document
        try:
            chunks = engine.corpus.remove(collection, doc_id)
        except NotFoundError:
            doc_id = Path(document).name  # a path given: a file ingested on its own has its name as id
            try:
                chunks = engine.corpus.remove(collection, doc_id)
            except NotFoundError:
                raise InputError(
                    f"no document {document!r} in collection {collection!r}; give the id shown by "
                    "`deepcite search` (the file's path relative to the ingested folder)"
                ) from None
    if json_out:
        print_json({"collection": collection, "document": doc_id, "chunks_removed": chunks})
        return
    console.print(f"removed {doc_id} ({chunks} chunks) from {collection}")


def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to search for."),
    collection: str = COLLECTION_OPTION,
    mode: str = typer.Option("hybrid", "--mode", "-m", help="bm25|dense|hybrid|graph"),
    k: int = typer.Option(10, "-k", help="How many results."),
    filters: list[str] = FILTER_OPTION,
    groups: list[str] = GROUP_OPTION,
    fusion: str = typer.Option(None, "--fusion", help="rrf|dbsf (hybrid only; default from settings)"),
    json_out: bool = JSON_OPTION,
    server: str = SERVER_OPTION,
) -> None:
    """Search a collection by BM25, dense vectors, both fused, or the entity graph (the API's search: same
    checks, same result).
    When `deepcite serve` holds the collection (or with --server), the server answers."""
    from deepcite.cli.remote import remote_search, server_for
    from deepcite.service import SearchRequest, restrict_filters

    with user_errors():
        request = SearchRequest(
            query=query,
            collection=collection,
            mode=SearchMode.from_str(mode),
            k=k,
            filters=parse_filters(filters),
            fusion=FusionMethod.from_str(fusion) if fusion else None,
        )
        settings = state(ctx).settings
        url = server_for(settings, collection, server)
        if url:
            filters = restrict_filters(request.filters, groups or None)
            found = remote_search(url, request.model_copy(update={"filters": filters}), settings)
        else:
            found = state(ctx).engine.search(request, groups or None)
    if json_out:
        print_json(found)
        return
    hits = found.hits
    table = Table(title=f"{mode} · {collection} · “{query}”")
    labels = [source_label(hit) for hit in hits]
    with_files = any(labels)  # a "source" column (file and page) when any hit comes from a file
    columns = [("rank", "dim"), ("score", "cyan"), ("id", "magenta"), ("title", "bold")]
    columns += [("source", "green")] if with_files else []
    via_graph = any(hit.graph for hit in hits)  # a "via" column: the entity and edge the graph came by
    columns += [("via", "yellow")] if via_graph else []
    for name, style in [*columns, ("snippet", "")]:
        table.add_column(name, style=style, overflow="fold")
    for hit, label in zip(hits, labels, strict=True):
        snippet = hit.text[:160] + ("…" if len(hit.text) > 160 else "")
        where = (label,) if with_files else ()
        if via_graph:
            link = hit.graph
            via = (f"{link.entity} ({link.edge})" if link.entity else link.edge) if link else ""
            where += (f"{via}, by: {link.relation}" if link and link.relation else via,)
        about = escape(hit.title[:60]) + (f"\n[dim]{escape(hit.byline())}[/]" if hit.byline() else "")
        table.add_row(str(hit.rank), f"{hit.score:.4f}", hit.doc_id, about, *where, snippet)
    console.print(table)
    if not hits:
        console.print("[yellow]no results[/]: try another mode, fewer filters, or check the collection name")


@collections_app.command("list")
def collections_list(ctx: typer.Context, json_out: bool = typer.Option(False, "--json")) -> None:
    """List collections with their chunk counts, read from their metadata: no collection is opened, so this
    works while `deepcite serve` or an ingest holds one. An unreadable collection is listed with the reason."""
    with user_errors():
        rows = state(ctx).engine.corpus.collections()
    if json_out:
        print_json(rows)
        return
    table = Table(title="collections")
    table.add_column("name", style="bold")
    table.add_column("chunks", justify="right")
    table.add_column("status", overflow="fold")
    for row in rows:
        status = "ok" if row.problem is None else f"[yellow]unreadable[/]: {row.problem}"
        table.add_row(row.name, "" if row.chunks is None else str(row.chunks), status)
    console.print(table)


@collections_app.command("check")
def collections_check(ctx: typer.Context, name: str, json_out: bool = typer.Option(False, "--json")) -> None:
    """Read a whole collection back (metadata, point count, every payload and dense vector, a BM25 search)
    and report what is damaged; exit code 1 when anything is."""
    with user_errors():
        report = state(ctx).engine.corpus.check(name)
    if json_out:
        print_json({**report.model_dump(mode="json"), "ok": report.ok})
    else:
        console.print(
            f"[bold]{name}[/]: {report.points if report.points is not None else '?'} points, "
            f"{report.payloads_read} payloads and {report.vectors_read} dense vectors read"
        )
        for warning in report.warnings:
            console.print(f"[yellow]warning[/]: {warning}")
        for problem in report.problems:
            console.print(f"[red]problem[/]: {problem}")
        if report.ok:
            console.print("[green]ok[/]")
        else:
            console.print(
                f"[bold red]collection {name!r} is damaged[/]; restore it from a backup, or re-ingest it with "
                f"`deepcite ingest <path> --collection {name} --rebuild`"
            )
    if not report.ok:
        raise typer.Exit(code=1)


@collections_app.command("stats")
def collections_stats(ctx: typer.Context, name: str, json_out: bool = typer.Option(False, "--json")) -> None:
    """Counts for one collection: chunks, documents, sources; what made its vectors, and the precision this
    machine's embedder runs in now (``embedder.precision``)."""
    with user_errors():
        stats = state(ctx).engine.corpus.stats(name)
    if json_out:
        print_json(stats)
        return
    for key, value in stats.model_dump().items():
        console.print(f"[bold]{key}[/]: {value}")


@collections_app.command("drop")
def collections_drop(
    ctx: typer.Context,
    name: str,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a collection, its stored originals and its graph."""
    with user_errors():
        engine = state(ctx).engine
        engine.corpus.name(name)  # 404 naming the known ones before asking
        if not yes:
            typer.confirm(f"drop collection {name!r} and all its chunks?", abort=True)
        engine.corpus.drop(name)
    console.print(f"dropped {name}")
