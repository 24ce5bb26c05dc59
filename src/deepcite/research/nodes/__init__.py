"""The research executor's nodes, one module each, named as in the design (see :mod:`deepcite.research.pipeline`)."""

from deepcite.research.nodes.add_web_evidence import add_web_evidence
from deepcite.research.nodes.base import Adapters, Node, node
from deepcite.research.nodes.choose_next_hop import choose_next_hop
from deepcite.research.nodes.executor_gate import executor_gate
from deepcite.research.nodes.finalize_evidence_pack import finalize_evidence_pack
from deepcite.research.nodes.follow_chain import follow_chain
from deepcite.research.nodes.grade_coverage import grade_coverage
from deepcite.research.nodes.merge_candidates import merge_candidates
from deepcite.research.nodes.prepare_round_queries import prepare_round_queries
from deepcite.research.nodes.propose_bridge_queries import propose_bridge_queries
from deepcite.research.nodes.read_bridge import read_bridge
from deepcite.research.nodes.rerank_candidates import rerank_candidates
from deepcite.research.nodes.run_retrieval import run_retrieval
from deepcite.research.nodes.select_evidence import select_evidence
from deepcite.research.nodes.should_continue import should_continue

__all__ = [
    "Adapters",
    "Node",
    "add_web_evidence",
    "choose_next_hop",
    "executor_gate",
    "finalize_evidence_pack",
    "follow_chain",
    "grade_coverage",
    "merge_candidates",
    "node",
    "prepare_round_queries",
    "propose_bridge_queries",
    "read_bridge",
    "rerank_candidates",
    "run_retrieval",
    "select_evidence",
    "should_continue",
]
