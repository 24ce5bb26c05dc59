"""choose_next_hop: the LLM reads the question and the evidence so far and names the next hop's query
(IRCoT, Trivedi et al. 2023; HippoRAG's multi-step retrieval): the planner adds it to the next round's queries."""

from __future__ import annotations

from dataclasses import replace

from deepcite.llm.deadline import failure_reason
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState


@node(reads=("plan", "evidence", "round", "asked"), writes=("hop_choices", "warnings"))
def choose_next_hop(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """With ``research.next_hop.enabled`` and a hop chooser (an LLM is configured), and unless this is the
    last round the hop cap allows: show it the best ``next_hop.evidence_passages`` evidence passages and
    record its :class:`HopChoice` for the planner. A failed or unusable reply changes nothing but a warning."""
    settings, chooser = adapters.settings, adapters.hop_chooser
    if chooser is None or not settings.next_hop.enabled or state.round >= settings.stopping.max_hops:
        return state
    shown = state.best_evidence(settings.next_hop.evidence_passages)
    try:
        choice = chooser.choose(
            state.plan.question, [(c.chunk.title, c.chunk.text) for c in shown], state.asked
        )
    except Exception as exc:  # noqa: BLE001 - the LLM's hop is optional: the offline hops go on unchanged
        state.warnings.append(
            f"round {state.round}: the LLM did not choose a next hop ({failure_reason(exc)}); "
            "the offline hops went on"
        )
        return state
    state.hop_choices.append(replace(choice, round=state.round, shown=tuple(c.key for c in shown)))
    return state
