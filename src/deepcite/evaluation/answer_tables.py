"""The answer evaluations' figures as tables: one per set, and with an LLM one per system of who wrote each part."""

from __future__ import annotations

from rich.table import Table


def figure_tables(title: str, systems: dict[str, dict[str, object]]) -> list[Table]:
    """The figures of one set as tables that read in a log as on a terminal: one row per figure and one column
    per system (a handful of columns, never squeezed into "s…"), then, with an LLM, one row per part: how often
    the LLM's text was shipped and why the offline path wrote it otherwise."""
    names = list(systems)
    keys = list(dict.fromkeys(k for row in systems.values() for k in row if k != "written"))
    figures = Table(title=title)
    figures.add_column("figure", no_wrap=True)
    for name in names:
        figures.add_column(name, justify="right", overflow="fold")
    for key in keys:
        figures.add_row(key, *(str(systems[n].get(key, "")) for n in names))
    tables = [figures]
    for name in names:
        written = systems[name].get("written")
        if not isinstance(written, dict) or not written:
            continue
        parts = Table(title=f"{title} · {name}: who wrote each part")
        parts.add_column("part", no_wrap=True)
        parts.add_column("LLM shipped", justify="right")
        parts.add_column("offline", justify="right")
        parts.add_column("why offline", overflow="fold")
        for part, row in written.items():
            why = "; ".join(f"{reason} ×{n}" for reason, n in dict(row.get("why") or {}).items())
            parts.add_row(part, str(row.get("llm", 0)), str(row.get("offline", 0)), why)
        tables.append(parts)
    return tables
