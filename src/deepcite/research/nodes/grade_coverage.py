"""grade_coverage: how well the evidence so far covers each aspect, by keywords and embedding similarity
(or by an LLM grader when one is configured, with the heuristic as its fallback)."""

from __future__ import annotations

import numpy as np

from deepcite.config import ResearchSettings
from deepcite.models import AspectCoverage, AspectType, Candidate, QueryAspect
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState
from deepcite.research.vectors import candidate_vectors, passage_text, text_vectors
from deepcite.text import first_sentence, tokenize


def keyword_score(aspect: QueryAspect, passages: list[set[str]], leads: list[set[str]]) -> float:
    """Share of the aspect's keyword stems found in the best single passage. A comparison counts all
    passages together (its sides are usually described by different passages); a definition counts
    only passage leads (title and first sentence), where a passage says what something is."""
    wanted = set(tokenize(" ".join(aspect.keywords or [aspect.aspect])))
    if not wanted or not passages:
        return 0.0
    if aspect.aspect_type is AspectType.COMPARISON:
        return len(wanted & set().union(*passages)) / len(wanted)
    pool = leads if aspect.aspect_type is AspectType.DEFINITION else passages
    return max(len(wanted & p) for p in pool) / len(wanted)


def _lead(cand: Candidate, window_chars: int) -> str:
    return f"{cand.chunk.title} {first_sentence(cand.chunk.text, window_chars)}"


def similarity_score(cosines: np.ndarray, floor: float, ceiling: float) -> float:
    """The best cosine, mapped linearly from [floor, ceiling] onto [0, 1] and clipped."""
    if cosines.size == 0:
        return 0.0
    return float(np.clip((float(cosines.max()) - floor) / (ceiling - floor), 0.0, 1.0))


def heuristic_coverage(
    aspects: list[QueryAspect],
    evidence: list[Candidate],
    aspect_vectors: np.ndarray,
    evidence_vectors: np.ndarray,
    settings: ResearchSettings,
) -> dict[str, float]:
    """Per aspect: ``keyword_weight * keyword_score + (1 - keyword_weight) * similarity_score``."""
    stems = [set(tokenize(passage_text(c.chunk))) for c in evidence]
    leads = [set(tokenize(_lead(c, settings.coverage.lead_window_chars))) for c in evidence]
    wk = settings.coverage.keyword_weight
    scores: dict[str, float] = {}
    for i, aspect in enumerate(aspects):
        cos = evidence_vectors @ aspect_vectors[i] if len(evidence) else np.zeros(0)
        sim = similarity_score(cos, settings.coverage.cosine_floor, settings.coverage.cosine_ceiling)
        scores[aspect.aspect] = wk * keyword_score(aspect, stems, leads) + (1.0 - wk) * sim
    return scores


@node(
    reads=("plan", "evidence", "coverage", "round", "vectors"),
    writes=("coverage", "quality", "errors", "vectors"),
)
def grade_coverage(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Score every aspect against all evidence so far and record the hop at which each became covered.

    With a grader (an LLM), its scores replace the heuristic's for the aspects it scored where they are
    lower (any of them with ``coverage.llm_may_raise``), and its contradictions are recorded; a grader that
    raises is recorded in ``errors`` and the heuristic stands.
    """
    settings, retriever, grader = adapters.settings, adapters.retriever, adapters.grader
    aspects = state.plan.aspects
    evidence = state.best_evidence()
    coverage = AspectCoverage(
        aspects=aspects,
        covered_by_hop=dict(state.coverage.covered_by_hop),
        contradictions=list(state.coverage.contradictions),
        core_importance=settings.coverage.core_importance,
    )
    if evidence and aspects:
        aspect_vecs = text_vectors(retriever, [a.aspect for a in aspects], state.vectors)
        evidence_vecs = candidate_vectors(retriever, evidence, state.vectors)
        question_vec = text_vectors(retriever, [state.plan.question], state.vectors)[0]
        state.quality = float((evidence_vecs @ question_vec).max())
        coverage.coverage_scores = heuristic_coverage(aspects, evidence, aspect_vecs, evidence_vecs, settings)
        if grader is not None:
            try:
                graded, contradictions = grader.grade(aspects, [passage_text(c.chunk) for c in evidence])
                heuristic = coverage.coverage_scores
                coverage.coverage_scores = heuristic | {
                    k: v if settings.coverage.llm_may_raise else min(v, heuristic[k])
                    for k, v in graded.items()
                    if k in heuristic
                }
                coverage.contradictions.extend(c for c in contradictions if c not in coverage.contradictions)
            except Exception as exc:  # noqa: BLE001 - the grader is optional: record and keep the heuristic
                state.errors.append(
                    f"round {state.round}: coverage grader failed ({type(exc).__name__}: {exc}); heuristic used"
                )
    else:
        coverage.coverage_scores = {a.aspect: 0.0 for a in aspects}
    for aspect in aspects:
        if aspect.aspect not in coverage.covered_by_hop and coverage.is_aspect_covered(
            aspect, settings.coverage.threshold
        ):
            coverage.covered_by_hop[aspect.aspect] = state.round
    state.coverage = coverage
    return state
