"""What every executor node shares: the adapters it may call and the declaration of what it reads and writes.

A node is a plain function ``node(state, adapters) -> state`` over :class:`ExecutorState`, wrapped by
:func:`node` with the state fields it reads and the fields it writes. The declaration is checked against
the state's fields when the module loads, and a test runs every node and checks it changed nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import update_wrapper
from typing import Generic, TypeVar

from deepcite.config import ResearchSettings
from deepcite.research.planner import QueryPlanner
from deepcite.research.protocols import (
    CoverageGrader,
    HopChooser,
    HydeGenerator,
    QuestionLikelihood,
    Reranker,
    Retriever,
    WebSource,
)
from deepcite.research.state import ExecutorState
from deepcite.research.titles import TitleKeys

Out = TypeVar("Out")
STATE_FIELDS = frozenset(f.name for f in fields(ExecutorState))


@dataclass(frozen=True)
class Adapters:
    """The settings and adapters nodes call; built once per agent. Optional adapters are ``None`` when off."""

    settings: ResearchSettings
    planner: QueryPlanner
    retriever: Retriever
    reranker: Reranker | None = None
    hyde: HydeGenerator | None = None
    grader: CoverageGrader | None = None
    web: WebSource | None = None
    titles: TitleKeys = field(default_factory=TitleKeys)  # the collection's document titles (chain answers)
    hop_chooser: HopChooser | None = None  # LLM-chosen next hops (research.next_hop)
    # the hop questions' likelihood in the pack's order (research.ranking.hop_likelihood_weight)
    likelihood: QuestionLikelihood | None = None


class Node(Generic[Out]):
    """An executor node: its function, its name, and the state fields it reads and writes."""

    def __init__(
        self, run: Callable[[ExecutorState, Adapters], Out], reads: frozenset[str], writes: frozenset[str]
    ) -> None:
        unknown = (reads | writes) - STATE_FIELDS
        if unknown:
            raise TypeError(f"node {run.__name__} declares unknown state fields: {sorted(unknown)}")
        self.run = run
        self.name = run.__name__
        self.reads = reads
        self.writes = writes
        update_wrapper(self, run)

    def __call__(self, state: ExecutorState, adapters: Adapters) -> Out:
        return self.run(state, adapters)

    def __repr__(self) -> str:
        return f"<node {self.name} reads={sorted(self.reads)} writes={sorted(self.writes)}>"


def node(
    *, reads: tuple[str, ...], writes: tuple[str, ...]
) -> Callable[[Callable[[ExecutorState, Adapters], Out]], Node[Out]]:
    """Declare a function as a node reading and writing the named :class:`ExecutorState` fields."""

    def wrap(run: Callable[[ExecutorState, Adapters], Out]) -> Node[Out]:
        return Node(run, frozenset(reads), frozenset(writes))

    return wrap
