"""The research executor as data: the gate, the nodes of one round in order, and the finaliser.

    from deepcite.research.pipeline import RESEARCH_PIPELINE
    [n.name for n in RESEARCH_PIPELINE.round]
    # ['prepare_round_queries', 'run_retrieval', 'merge_candidates', 'rerank_candidates',
    #  'select_evidence', 'choose_next_hop', 'follow_chain', 'read_bridge', 'propose_bridge_queries',
    #  'add_web_evidence', 'grade_coverage', 'should_continue']

:meth:`Pipeline.run` runs the gate, then rounds until a node marks the state done (``prepare_round_queries``
when nothing is left to ask, ``should_continue`` when the stop decision says so), then the finaliser.
Swap or add a node with :meth:`Pipeline.replaced` or :meth:`Pipeline.inserted_after`; the loop never changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from deepcite.errors import ConfigError
from deepcite.models import EvidencePack
from deepcite.research.nodes import (
    Adapters,
    Node,
    add_web_evidence,
    choose_next_hop,
    executor_gate,
    finalize_evidence_pack,
    follow_chain,
    grade_coverage,
    merge_candidates,
    prepare_round_queries,
    propose_bridge_queries,
    read_bridge,
    rerank_candidates,
    run_retrieval,
    select_evidence,
    should_continue,
)
from deepcite.research.state import ExecutorState

RoundDone = Callable[[ExecutorState], None]


@dataclass(frozen=True)
class Pipeline:
    """A gate run once, the nodes of a round run in order until the state is done, and a finaliser."""

    gate: Node[ExecutorState]
    round: tuple[Node[ExecutorState], ...]
    finalize: Node[EvidencePack]

    def run(
        self, state: ExecutorState, adapters: Adapters, on_round: RoundDone | None = None
    ) -> EvidencePack:
        """Run the pipeline over ``state``; ``on_round`` is called after every round that wrote a report."""
        self.gate(state, adapters)
        while not state.done:
            reports = len(state.reports)
            for step in self.round:
                step(state, adapters)
                if state.done:
                    break
            if on_round is not None and len(state.reports) > reports:
                on_round(state)
        return self.finalize(state, adapters)

    def replaced(self, name: str, new: Node[ExecutorState]) -> Pipeline:
        """This pipeline with the round node called ``name`` swapped for ``new``."""
        index = self._index(name)
        return replace(self, round=(*self.round[:index], new, *self.round[index + 1 :]))

    def inserted_after(self, name: str, new: Node[ExecutorState]) -> Pipeline:
        """This pipeline with ``new`` run right after the round node called ``name``."""
        index = self._index(name)
        return replace(self, round=(*self.round[: index + 1], new, *self.round[index + 1 :]))

    def _index(self, name: str) -> int:
        names = [n.name for n in self.round]
        if name not in names:
            raise ConfigError(f"no round node named {name!r}; the round runs: {', '.join(names)}")
        return names.index(name)


RESEARCH_PIPELINE = Pipeline(
    gate=executor_gate,
    round=(
        prepare_round_queries,
        run_retrieval,
        merge_candidates,
        rerank_candidates,
        select_evidence,
        choose_next_hop,
        follow_chain,
        read_bridge,
        propose_bridge_queries,
        add_web_evidence,
        grade_coverage,
        should_continue,
    ),
    finalize=finalize_evidence_pack,
)
