"""The aspects a complete answer must cover, how well the evidence covers each, and the report of it."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from deepcite.models.choices import _ChoiceEnum


class AspectType(_ChoiceEnum):
    DEFINITION = "definition"
    COMPARISON = "comparison"
    PROCESS = "process"
    CAUSAL = "causal"
    EVALUATION = "evaluation"
    APPLICATION = "application"


class QueryAspect(BaseModel):
    """One thing a complete answer must cover."""

    aspect: str
    aspect_type: AspectType
    importance: float = Field(ge=0.0, le=1.0)
    keywords: list[str] = Field(default_factory=list)


def question_parts(aspects: Sequence[QueryAspect]) -> list[QueryAspect]:
    """The question's parts: its main aspects (the highest importance), in the question's order."""
    if not aspects:
        return []
    top = max(a.importance for a in aspects)
    return [a for a in aspects if a.importance >= top]


def coverage_percent(score: float) -> int:
    """A coverage score in [0, 1] as the whole percent every surface shows for it: in words and as its bar. A
    hop's coverage is its ``weighted_coverage`` (aspects weighted by importance, each score capped at 1); the
    share of aspects at the threshold is a count beside it, never drawn as a bar."""
    return round(100 * min(1.0, max(0.0, score)))


class AspectCoverage(BaseModel):
    """How well the selected evidence covers each aspect, and at which hop each became covered."""

    aspects: list[QueryAspect] = Field(default_factory=list)
    coverage_scores: dict[str, float] = Field(default_factory=dict)  # aspect text -> [0, 1]
    covered_by_hop: dict[str, int] = Field(default_factory=dict)  # aspect text -> hop index
    contradictions: list[str] = Field(default_factory=list)
    core_importance: float = 0.8

    def is_aspect_covered(self, aspect: QueryAspect | str, threshold: float = 0.5) -> bool:
        key = aspect.aspect if isinstance(aspect, QueryAspect) else aspect
        return self.coverage_scores.get(key, 0.0) >= threshold

    def get_uncovered_aspects(self, threshold: float = 0.5) -> list[QueryAspect]:
        return [a for a in self.aspects if not self.is_aspect_covered(a, threshold)]

    def get_coverage_percentage(self, threshold: float = 0.5) -> float:
        if not self.aspects:
            return 0.0
        covered = sum(1 for a in self.aspects if self.is_aspect_covered(a, threshold))
        return 100.0 * covered / len(self.aspects)

    def get_weighted_coverage(self) -> float:
        total = sum(a.importance for a in self.aspects)
        if total == 0:
            return 0.0
        return (
            sum(a.importance * min(1.0, self.coverage_scores.get(a.aspect, 0.0)) for a in self.aspects)
            / total
        )

    def core_aspects(self) -> list[QueryAspect]:
        return [a for a in self.aspects if a.importance >= self.core_importance]


class AspectScore(BaseModel):
    """One aspect's line in a coverage report."""

    aspect: str
    type: AspectType
    importance: float
    coverage_score: float
    covered_at_hop: int | None = None


class CoverageReport(BaseModel):
    """Aspect coverage as every surface shows it: hop events, API responses, CLI ``--json`` and MCP."""

    enabled: bool = True  # research.coverage.enabled: whether coverage may stop the rounds
    threshold: float  # an aspect scoring at least this is covered
    total_aspects: int
    coverage_percentage: float
    weighted_coverage: float
    uncovered_count: int
    uncovered_aspects: list[str] = Field(default_factory=list)
    aspects: list[AspectScore] = Field(default_factory=list)
    contradictions: list[str] = Field(default_factory=list)

    @classmethod
    def from_coverage(
        cls, coverage: AspectCoverage, *, threshold: float, enabled: bool = True
    ) -> CoverageReport:
        """The report of an :class:`AspectCoverage` at ``threshold``."""
        uncovered = [a.aspect for a in coverage.get_uncovered_aspects(threshold)]
        return cls(
            enabled=enabled,
            threshold=threshold,
            total_aspects=len(coverage.aspects),
            coverage_percentage=coverage.get_coverage_percentage(threshold),
            weighted_coverage=coverage.get_weighted_coverage(),
            uncovered_count=len(uncovered),
            uncovered_aspects=uncovered,
            aspects=[
                AspectScore(
                    aspect=a.aspect,
                    type=a.aspect_type,
                    importance=a.importance,
                    coverage_score=coverage.coverage_scores.get(a.aspect, 0.0),
                    covered_at_hop=coverage.covered_by_hop.get(a.aspect),
                )
                for a in coverage.aspects
            ],
            contradictions=list(coverage.contradictions),
        )
