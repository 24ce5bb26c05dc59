"""prepare_round_queries: start a round with the planner's next sub-question and its query variants."""

from __future__ import annotations

from dataclasses import replace

from deepcite.models import SkippedQuery
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState, RoundQuery


def skipped_note(skipped: list[SkippedQuery], round_: int) -> str:
    """The follow-ups skipped as noise for the hop of ``round_``, as a clause of a stop reason ("" if none)."""
    shown = [f"{s.text!r} ({s.reason})" for s in skipped if s.round == round_]
    return f"; follow-ups skipped as noise: {', '.join(shown)}" if shown else ""


@node(
    reads=(
        "plan",
        "asked",
        "coverage",
        "evidence",
        "used_entities",
        "used_parents",
        "chain",
        "graph_bridges",
        "hop_choices",
        "skipped_queries",
        "beam",
    ),
    writes=(
        "round",
        "subquestion",
        "asked",
        "queries",
        "results",
        "candidates",
        "selected",
        "counts",
        "done",
        "stop_reason",
        "errors",
        "used_entities",
        "used_parents",
        "chain",
        "graph_bridges",
        "skipped_queries",
        "beam",
    ),
)
def prepare_round_queries(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """The planner's next sub-question, plus must-preserve and HyDE variants; done when nothing is left.

    Must-preserve terms reach at least one query verbatim (a BM25 query: literal terms need literal
    matching). HyDE runs only when enabled and the user did not ask for exact matching; a failing HyDE
    adapter is recorded and the round goes on.
    """
    settings = adapters.settings
    hop = adapters.planner.next_hop(state)
    if hop is None:
        state.done = True
        state.stop_reason = (
            "nothing new to ask: every planned sub-question ran and no new entities were found"
            + skipped_note(state.skipped_queries, state.round + 1)
        )
        return state
    sub, queries = hop
    state.round += 1
    state.subquestion = sub
    state.asked.append(sub)
    intake = state.plan.intake
    terms = intake.must_preserve_terms
    if terms and not any(all(t.lower() in q.text.lower() for t in terms) for q in queries):
        queries.append(RoundQuery(" ".join(terms) + " " + sub, sub, kind="must_preserve", modes=["bm25"]))
    if adapters.hyde is not None and settings.planning.hyde_enabled and not intake.must_match_exactly:
        try:
            queries.append(RoundQuery(adapters.hyde.generate(sub), sub, kind="hyde"))
        except Exception as exc:  # noqa: BLE001 - HyDE is optional: record and go on
            state.errors.append(f"round {state.round}: HyDE failed ({type(exc).__name__}: {exc}); skipped")
    unique: dict[str, RoundQuery] = {}
    for q in queries:
        text = q.text.strip()[: settings.planning.max_query_chars]
        if text and text.lower() not in unique:
            unique[text.lower()] = replace(q, text=text)
    state.queries = list(unique.values())[: settings.planning.max_queries_per_round]
    state.results, state.candidates, state.selected, state.counts = [], [], [], {}
    return state
