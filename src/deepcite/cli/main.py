"""The ``deepcite`` command line: each area registers its commands here.

The root callback puts a :class:`~deepcite.cli.common.CliState` on Typer's context (``ctx.obj``): the
settings and the :class:`~deepcite.engine.Engine`, built lazily once per invocation and closed at its end.
"""

from __future__ import annotations

from pathlib import Path

import typer

from deepcite.cli.common import CliState

app = typer.Typer(
    name="deepcite",
    help="Answer hard questions from a corpus you own, every sentence tied to a passage you can check.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


@app.callback()
def main(
    ctx: typer.Context,
    config: Path = typer.Option(
        None,
        "--config",
        help="A TOML settings file (default: DEEPCITE_CONFIG); the environment wins over it.",
    ),
) -> None:
    """Answer hard questions from a corpus you own, every sentence tied to a passage you can check."""
    cli_state = CliState(config)
    ctx.obj = cli_state
    ctx.call_on_close(cli_state.close)


from deepcite.cli import corpus  # noqa: E402

app.command()(corpus.ingest)
app.command()(corpus.search)
app.command()(corpus.remove)
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
