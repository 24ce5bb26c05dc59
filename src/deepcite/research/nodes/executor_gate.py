"""executor_gate: validate the plan and the hard caps before any round runs."""

from __future__ import annotations

from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState


@node(reads=("plan",), writes=("done", "skip_reason", "stop_reason", "errors"))
def executor_gate(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Mark the state done when the plan needs no retrieval, or refuse a plan the caps cannot run."""
    plan, settings = state.plan, adapters.settings
    if not plan.needs_retrieval:
        state.done = True
        state.skip_reason = "the plan needs no retrieval (the question has no searchable words)"
        state.stop_reason = state.skip_reason
        return state
    problems = []
    if not plan.question.strip():
        problems.append("the plan has an empty question")
    if not plan.aspects:
        problems.append("the plan has no aspects")
    if not settings.retrieval.modes:
        problems.append("no retrieval modes are configured (research.retrieval.modes)")
    if (
        settings.retrieval.k_per_query < 1
        or settings.selection.max_docs_per_round < 1
        or settings.selection.max_total_docs < 1
    ):
        problems.append("k_per_query, max_docs_per_round and max_total_docs must be at least 1")
    if problems:
        state.done = True
        state.skip_reason = "; ".join(problems)
        state.stop_reason = state.skip_reason
        state.errors.append(f"executor gate refused the plan: {state.skip_reason}")
    return state
