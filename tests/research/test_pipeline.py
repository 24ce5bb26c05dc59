"""The pipeline's nodes change only the state fields they declare, over real rounds (Edge store, MiniLM)."""

from __future__ import annotations

import copy
from dataclasses import fields
from typing import Any

import pytest

from deepcite.config import ResearchSettings
from deepcite.models import Chunk
from deepcite.research.agent import ResearchAgent
from deepcite.research.nodes import Adapters, Node
from deepcite.research.pipeline import RESEARCH_PIPELINE, Pipeline
from deepcite.research.state import ExecutorState
from deepcite.retrieval.collection import Collection

pytestmark = pytest.mark.slow


class _StandInWeb:
    """Stands in for the public web (unreachable here): one page per sub-question and one failed page."""

    def search(self, subquestion: str) -> tuple[list[Chunk], list[str]]:
        page = Chunk(
            chunk_id=f"web-{abs(hash(subquestion))}",
            doc_id="https://example.org/statins",
            text="Statins lower LDL cholesterol by blocking HMG-CoA reductase.",
            title="Statins",
            source="web",
            metadata={"subquestion": subquestion, "web_rank": 1},
        )
        return [page], ["web page https://example.org/slow: no answer within 3s; skipped"]

    def close(self) -> None:
        """Nothing to release."""


def _snapshot(state: ExecutorState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(ExecutorState):
        value = getattr(state, f.name)
        out[f.name] = frozenset(value) if f.name == "vectors" else copy.deepcopy(value)
    return out


def _checked(node: Node[Any], seen: dict[str, set[str]]) -> Node[Any]:
    """``node`` wrapped to record which state fields it changed."""

    def run(state: ExecutorState, adapters: Adapters) -> Any:
        before = _snapshot(state)
        out = node(state, adapters)
        after = _snapshot(state)
        seen.setdefault(node.name, set()).update(k for k in before if before[k] != after[k])
        return out

    run.__name__ = node.name
    return Node(run, node.reads, node.writes)


@pytest.mark.parametrize(
    "question",
    ["Compare statins and PCSK9 inhibitors", "Which country was the director of The Quiet Beacon born in?"],
)
def test_every_node_changes_only_the_fields_it_declares(
    research_collection: Collection, question: str
) -> None:
    seen: dict[str, set[str]] = {}
    checked = Pipeline(
        gate=_checked(RESEARCH_PIPELINE.gate, seen),
        round=tuple(_checked(n, seen) for n in RESEARCH_PIPELINE.round),
        finalize=_checked(RESEARCH_PIPELINE.finalize, seen),
    )
    agent = ResearchAgent(research_collection, ResearchSettings(), web_source=_StandInWeb(), pipeline=checked)
    result = agent.process(question)
    assert result.hops >= 3 and result.pack.final_evidence
    nodes = {
        n.name: n for n in (RESEARCH_PIPELINE.gate, *RESEARCH_PIPELINE.round, RESEARCH_PIPELINE.finalize)
    }
    assert set(seen) == set(nodes)  # every node ran
    for name, changed in seen.items():
        assert changed <= nodes[name].writes, (
            f"{name} changed undeclared fields {changed - nodes[name].writes}"
        )
