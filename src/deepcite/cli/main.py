"""The ``deepcite`` command line: each area registers its commands here."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="deepcite",
    help="Answer hard questions from a corpus you own, every sentence tied to a passage you can check.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)

from deepcite.cli import corpus  # noqa: E402

app.command()(corpus.ingest)
app.command()(corpus.search)
app.add_typer(corpus.collections_app, name="collections")

from deepcite.cli.eval import eval_app  # noqa: E402

app.add_typer(eval_app, name="eval")

from deepcite.cli import serve as serve_cli  # noqa: E402

app.command()(serve_cli.ask)
app.command()(serve_cli.serve)

from deepcite.cli.practitioners import practitioners_app  # noqa: E402

app.add_typer(practitioners_app, name="practitioners")

from deepcite.cli.mcp import mcp  # noqa: E402

app.command(name="mcp")(mcp)

from deepcite.cli.research import eval_multihop, research  # noqa: E402

app.command()(research)
eval_app.command("multihop")(eval_multihop)
