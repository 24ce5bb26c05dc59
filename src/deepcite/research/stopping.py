"""should_continue: close the round with its report and decide whether another hop runs."""

from __future__ import annotations

import logging

from deepcite.config import ResearchSettings
from deepcite.models import RoundReport
from deepcite.research.planner import QueryPlanner
from deepcite.research.state import ExecutorState

log = logging.getLogger(__name__)


def should_continue(state: ExecutorState, planner: QueryPlanner, settings: ResearchSettings) -> ExecutorState:
    """Update the no-novelty streak, ask the planner whether to go on, and append the round's report."""
    state.no_novelty = 0 if state.new_evidence else state.no_novelty + 1
    go_on, reason = planner.should_continue_retrieval(
        state.coverage, state.round, no_novelty_streak=state.no_novelty, evidence_quality=state.quality
    )
    if not state.evidence and state.round >= planner.min_hops:
        go_on, reason = False, "no evidence found in any round"
    threshold = settings.aspect_coverage_threshold
    state.reports.append(
        RoundReport(
            round=state.round,
            subquestion=state.subquestion,
            queries=[q.text for q in state.queries],
            candidates_before_fusion=state.counts.get("before_fusion", 0),
            candidates_after_fusion=state.counts.get("after_fusion", 0),
            candidates_after_rerank=state.counts.get("after_rerank", state.counts.get("after_fusion", 0)),
            selected=[
                {
                    "doc_id": c.chunk.doc_id,
                    "chunk_id": c.chunk.chunk_id,
                    "title": c.chunk.title,
                    "score": c.score,
                }
                for c in state.selected
            ],
            new_evidence=state.new_evidence,
            coverage_percentage=state.coverage.get_coverage_percentage(threshold),
            weighted_coverage=state.coverage.get_weighted_coverage(),
            uncovered_aspects=[a.aspect for a in state.coverage.get_uncovered_aspects(threshold)],
            decision="continue" if go_on else "stop",
            reason=reason,
        )
    )
    if not go_on:
        state.done = True
        state.stop_reason = reason
    return state
