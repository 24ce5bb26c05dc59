"""add_web_evidence: web pages found for the round's sub-question join its evidence (when a web source is set)."""

from __future__ import annotations

from deepcite.models import Candidate, Provenance
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState
from deepcite.research.web.source import WEB_SOURCE
from deepcite.retrieval.collection import passage_text
from deepcite.retrieval.fusion import rrf_contribution


@node(
    reads=("subquestion", "round", "selected", "evidence"),
    writes=("selected", "evidence", "new_evidence", "subquery_evidence", "vectors", "counts", "errors"),
)
def add_web_evidence(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Each page the web source finds becomes a selected candidate of the round, under this sub-question
    only. Its score is the round's best selected score scaled by the reciprocal-rank ratio of its search
    rank, so a page ranks with the local evidence it was found beside. Errors are recorded and the round
    goes on; without a web source the node does nothing."""
    if adapters.web is None:
        return state
    k = adapters.retriever.rrf_k
    sub = state.subquestion
    chunks, errors = adapters.web.search(sub)
    state.errors.extend(f"round {state.round}: {error}" for error in errors)
    state.counts["web"] = len(chunks)
    if not chunks:
        return state
    rows = adapters.retriever.embed([passage_text(chunk) for chunk in chunks])
    top = max((c.score for c in state.selected), default=0.0) or rrf_contribution(1, k)
    added: list[Candidate] = []
    for position, (chunk, row) in enumerate(zip(chunks, rows, strict=True), start=1):
        state.vectors[chunk.chunk_id] = row
        rank = int(chunk.metadata.get("web_rank") or position)
        score = top * rrf_contribution(rank, k) / rrf_contribution(1, k)
        cand = Candidate(
            chunk=chunk,
            score=score,
            provenance=[
                Provenance(
                    round=state.round,
                    query=sub,
                    kind="web",
                    mode=WEB_SOURCE,
                    subquestion=sub,
                    rank=rank,
                    score=score,
                )
            ],
            subquestions=[sub],
        )
        state.new_evidence += state.add_evidence(cand)[1]
        added.append(cand)
    state.selected = [*state.selected, *added]
    own = state.subquery_evidence.setdefault(sub, [])
    own.extend(c.model_copy(deep=True) for c in added)
    return state
