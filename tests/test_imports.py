"""The import graph of src/deepcite: no cycle between modules, and no import up (or sideways) the layer table.

Read with :mod:`ast` from the source, so nothing is imported and every import counts: at module level, inside
functions (a lazy import is still a dependency) and under ``if TYPE_CHECKING:`` (a type-only import never runs,
but it is still a dependency a reader follows, and a circle of them is still a circle). The package's facade,
``deepcite/__init__.py``, names the whole public API, so it is the top of the table, and nothing inside the
package imports it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "deepcite"

# The layers, top first: a module may import its own unit (a top-level package or module of deepcite) and the
# units of any layer below its own; never a unit of its own layer (sideways) or of a layer above (upward).
# Decided from the code: the CLI starts the server and the MCP server; the evaluation harnesses drive the Engine's
# operations as a user would; the Engine composes the services of ``app`` (which build the shared objects once
# and wire the research agent and the answer stage); ingest writes into the store and the entity graph, so it sits above retrieval, which never
# reads files; ``deepcite`` (the package's facade) names the public API of every layer, so it sits on top.
LAYERS: tuple[tuple[str, ...], ...] = (
    (ROOT,),
    ("cli",),
    ("server", "mcp_server"),
    ("evaluation",),
    ("engine",),
    ("app",),
    ("saved_answers",),
    ("service", "access"),
    ("research", "answer", "practitioners"),
    ("ingest",),
    ("retrieval",),
    ("llm",),
    ("models", "config", "names", "public_errors"),
    ("text", "front_matter", "errors", "validation", "version"),
)


@dataclass(frozen=True)
class Import:
    """One import statement's target inside deepcite."""

    source: str  # the importing module, dotted
    target: str  # the imported module, dotted
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    names = {}
    for path in (SRC / ROOT).rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:`` block."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for stmt in node.body:
                found.update(id(n) for n in ast.walk(stmt))
    return found


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    """The imports of ``module`` that name a module of deepcite (``from package import submodule`` names the
    submodule; ``from module import name`` the module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    type_only = _type_checking_nodes(tree)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            targets = subs or [base]
        for target in targets:
            if target in modules and target != module:
                yield Import(module, target, node.lineno, id(node) in type_only)


def all_imports() -> list[Import]:
    modules = module_names()
    return [imp for name, path in sorted(modules.items()) for imp in imports_of(name, path, modules)]


def unit_of(module: str) -> str:
    """The layer unit of a module: ``deepcite.retrieval.graph.ppr`` → ``retrieval``; the package → itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def layer_of(unit: str) -> int:
    for depth, units in enumerate(LAYERS):
        if unit in units:
            return depth
    raise AssertionError(f"{unit!r} is in no layer of LAYERS; add it to the table in {__file__}")


def test_every_unit_of_the_package_has_a_layer() -> None:
    listed = [unit for units in LAYERS for unit in units]
    assert len(listed) == len(set(listed)), "a unit is listed twice in LAYERS"
    present = {unit_of(m) for m in module_names()}
    assert present == set(listed), f"missing: {present - set(listed)}, gone: {set(listed) - present}"


def test_no_import_points_up_or_sideways_the_layer_table() -> None:
    wrong = [
        f"{i.source}:{i.line} imports {i.target} ({unit_of(i.source)} is not above {unit_of(i.target)})"
        for i in all_imports()
        if unit_of(i.source) != unit_of(i.target)
        and layer_of(unit_of(i.source)) >= layer_of(unit_of(i.target))
    ]
    assert not wrong, "imports against the layer table:\n" + "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    graph: dict[str, set[str]] = {}
    for i in all_imports():
        graph.setdefault(i.source, set()).add(i.target)
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        raise AssertionError(f"an import cycle: {' → '.join(exc.args[1])}") from None


def test_the_walk_sees_lazy_and_type_only_imports() -> None:
    """The checks above would pass vacuously if the walk missed imports: it finds a function-level import and
    a TYPE_CHECKING one that are known to be there."""
    found = {(i.source, i.target, i.type_only) for i in all_imports()}
    assert ("deepcite.ingest.pipeline", "deepcite.ingest.distributed", False) in found  # inside a method
    assert ("deepcite", "deepcite.engine", True) in found  # the facade's type-only names
