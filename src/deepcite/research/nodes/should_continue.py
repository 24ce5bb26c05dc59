"""should_continue: close the round with its report and decide, in one place, whether another hop runs."""

from __future__ import annotations

from deepcite.config import ResearchSettings
from deepcite.errors import InputError
from deepcite.models import AspectCoverage, RankedList, RoundReport, SelectedPassage
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.nodes.finalize_evidence_pack import pack_order
from deepcite.research.state import ExecutorState


def check_hop_budget(settings: ResearchSettings) -> None:
    """Raise :class:`InputError` unless ``1 <= min_hops <= max_hops``."""
    if settings.stopping.min_hops < 1 or settings.stopping.max_hops < settings.stopping.min_hops:
        raise InputError(
            f"hop budget min_hops={settings.stopping.min_hops}, max_hops={settings.stopping.max_hops} is invalid; "
            "use 1 <= min_hops <= max_hops"
        )


def stop_decision(
    settings: ResearchSettings,
    coverage: AspectCoverage,
    hop: int,
    *,
    no_novelty_streak: int = 0,
    evidence_quality: float = 0.0,
    has_evidence: bool = True,
    chain_pending: bool = False,
) -> tuple[bool, str]:
    """Whether to run another hop after ``hop`` hops, and why. In order: no evidence at all once
    ``min_hops`` ran; the hop cap (``max_hops``); the minimum (``min_hops``); a chain the beam has a candidate
    left to follow (``chain_pending``); ``no_novelty_streak`` rounds without new evidence; then,
    with aspect coverage on, every core aspect covered and the weighted coverage at its threshold; with
    coverage off, the best question-evidence cosine at ``quality_stop_score``."""
    s = settings
    if not has_evidence and hop >= s.stopping.min_hops:
        return False, "no evidence found in any round"
    if hop >= s.stopping.max_hops:
        return False, f"reached the hop limit ({hop}/{s.stopping.max_hops})"
    if hop < s.stopping.min_hops:
        return True, f"below the minimum hops ({hop}/{s.stopping.min_hops})"
    if chain_pending:
        return True, "the chain has a candidate left to follow"
    if no_novelty_streak >= s.stopping.no_novelty_streak:
        return False, f"no new evidence for {no_novelty_streak} rounds"
    if s.coverage.enabled and coverage.aspects:
        uncovered_core = [
            a.aspect
            for a in coverage.core_aspects()
            if not coverage.is_aspect_covered(a, s.coverage.threshold)
        ]
        weighted = coverage.get_weighted_coverage()
        if not uncovered_core and weighted >= s.coverage.weighted_threshold:
            return False, (
                f"all core aspects covered and weighted coverage {weighted:.2f} >= "
                f"{s.coverage.weighted_threshold:.2f}"
            )
        if uncovered_core:
            return True, f"core aspects not yet covered: {'; '.join(uncovered_core)}"
        return True, f"weighted coverage {weighted:.2f} < {s.coverage.weighted_threshold:.2f}"
    if evidence_quality >= s.stopping.quality_stop_score:
        return (
            False,
            f"evidence quality {evidence_quality:.2f} >= {s.stopping.quality_stop_score:.2f} (coverage off)",
        )
    return (
        True,
        f"evidence quality {evidence_quality:.2f} < {s.stopping.quality_stop_score:.2f} (coverage off)",
    )


@node(
    reads=(
        "round",
        "subquestion",
        "queries",
        "counts",
        "selected",
        "new_evidence",
        "evidence",
        "coverage",
        "quality",
        "no_novelty",
        "plan",
        "top_keys",
        "vectors",
        "skipped_queries",
        "results",
        "beam_read",
        "beam",
    ),
    writes=("no_novelty", "reports", "done", "stop_reason", "top_keys", "vectors"),
)
def should_continue(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Update the no-novelty streak, take the :func:`stop_decision` and append the round's report.

    With ``stopping.novelty_top_k`` set, a round is novel only when it changed the pack's top passages."""
    settings = adapters.settings
    novel = bool(state.new_evidence)
    top_k = settings.stopping.novelty_top_k
    if top_k > 0:
        top = [c.key for c in pack_order(state, adapters)[:top_k]]
        novel = set(top) != set(state.top_keys)
        state.top_keys = top
    state.no_novelty = 0 if novel else state.no_novelty + 1
    go_on, reason = stop_decision(
        settings,
        state.coverage,
        state.round,
        no_novelty_streak=state.no_novelty,
        evidence_quality=state.quality,
        has_evidence=bool(state.evidence),
        chain_pending=settings.bridge.finish_chain and any(e.followed_round == 0 for e in state.beam),
    )
    threshold = settings.coverage.threshold
    state.reports.append(
        RoundReport(
            round=state.round,
            subquestion=state.subquestion,
            queries=[q.text for q in state.queries],
            candidates_before_fusion=state.counts.get("before_fusion", 0),
            candidates_after_fusion=state.counts.get("after_fusion", 0),
            candidates_after_rerank=state.counts.get("after_rerank", state.counts.get("after_fusion", 0)),
            selected=[
                SelectedPassage(
                    doc_id=c.chunk.doc_id, chunk_id=c.chunk.chunk_id, title=c.chunk.title, score=c.score
                )
                for c in state.selected
            ],
            new_evidence=state.new_evidence,
            coverage_percentage=state.coverage.get_coverage_percentage(threshold),
            weighted_coverage=state.coverage.get_weighted_coverage(),
            uncovered_aspects=[a.aspect for a in state.coverage.get_uncovered_aspects(threshold)],
            decision="continue" if go_on else "stop",
            reason=reason,
            skipped_queries=[q for q in state.skipped_queries if q.round == state.round],
            lists=[
                RankedList(query=r.query.text, kind=r.query.kind, mode=r.mode, hits=len(r.hits))
                for r in state.results
            ],
        )
    )
    if not go_on:
        state.done = True
        state.stop_reason = reason
    return state
