"""Evaluate the finder on graded queries: plain BM25 (baseline) and the two-stage flow, same run.

A query file has one JSON object a line: ``{"query": "...", "relevant": {"<specialty as written in the
directory file>": grade 1..3, ...}}`` (``id`` optional). A practitioner's gain is the grade of their
primary specialty. nDCG@k and P@k (relevant = grade >= 1) are computed by ``ir_measures``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ir_measures
from ir_measures import P, nDCG
from pydantic import BaseModel, Field, ValidationError

from deepcite.errors import IngestError, InputError
from deepcite.practitioners.api import PractitionerQuery
from deepcite.practitioners.finder import PractitionerFinder
from deepcite.practitioners.location import close_matches


class EvalQuery(BaseModel):
    """One evaluation query with graded specialties."""

    id: str | None = None
    query: str = Field(min_length=1)
    relevant: dict[str, int] = Field(min_length=1)

    def grades(self) -> dict[str, int]:
        return {spec.strip().upper(): grade for spec, grade in self.relevant.items()}


def load_queries(path: Path) -> list[EvalQuery]:
    """Queries from a JSONL file; ids default to ``q<line>``."""
    if not path.is_file():
        raise InputError(f"query file {path} does not exist")
    out: list[EvalQuery] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            query = EvalQuery.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise IngestError(f"not a query line ({exc})", path=str(path), line=number) from exc
        bad = {s: g for s, g in query.relevant.items() if not 1 <= g <= 3}
        if bad:
            raise IngestError(f"grades must be 1..3, got {bad}", path=str(path), line=number)
        out.append(query if query.id else query.model_copy(update={"id": f"q{number}"}))
    if not out:
        raise InputError(f"query file {path} holds no queries")
    return out


@dataclass
class EvalReport:
    """Aggregate figures in the shape ``{"bm25": {...}, "two_stage": {...}}`` plus per-query figures."""

    summary: dict[str, dict[str, float]]
    per_query: list[dict[str, Any]] = field(default_factory=list)


def _qrels(queries: list[EvalQuery], finder: PractitionerFinder) -> dict[str, dict[str, int]]:
    known = sorted(finder.directory.primary_specialties())
    unknown = sorted({s for q in queries for s in q.grades() if s not in known})
    if unknown:
        hints = [
            f"{s} (did you mean {', '.join(close_matches(s, known)) or 'nothing close'}?)" for s in unknown
        ]
        raise InputError(f"specialties not in the directory: {'; '.join(hints)}")
    by_specialty: dict[str, list[str]] = {}
    for p in finder.directory:
        if p.primary_specialty:
            by_specialty.setdefault(p.primary_specialty.upper(), []).append(p.npi)
    return {
        str(q.id): {npi: grade for spec, grade in q.grades().items() for npi in by_specialty.get(spec, [])}
        for q in queries
    }


def _run(ranked: list[str]) -> dict[str, float]:
    # pytrec_eval orders by score, so the rank is encoded as a strictly decreasing score
    return {npi: float(len(ranked) - i) for i, npi in enumerate(ranked)}


async def evaluate(finder: PractitionerFinder, queries: list[EvalQuery], *, cutoff: int = 10) -> EvalReport:
    """nDCG@cutoff and P@cutoff for plain BM25 and for the two-stage flow."""
    qrels = _qrels(queries, finder)
    runs: dict[str, dict[str, dict[str, float]]] = {"bm25": {}, "two_stage": {}}
    details: dict[str, dict[str, Any]] = {}
    for query in queries:
        qid = str(query.id)
        baseline = [chunk.doc_id for chunk, _ in finder.baseline(query.query, cutoff)]
        response = await finder.search(PractitionerQuery(user_query=query.query))
        runs["bm25"][qid] = _run(baseline)
        runs["two_stage"][qid] = _run([r.npi for r in response.results])
        details[qid] = {
            "id": qid,
            "query": query.query,
            "filled_from_intent": response.filled_from_intent,
            "clear": response.intent.clear,
            "primary_intent": response.intent.clinical.primary_intent,
        }
    measures = [nDCG @ cutoff, P @ cutoff]
    names = {nDCG @ cutoff: f"ndcg@{cutoff}", P @ cutoff: f"p@{cutoff}"}
    summary: dict[str, dict[str, float]] = {}
    for system, run in runs.items():
        run = {qid: docs for qid, docs in run.items() if docs} or {"_": {"_": 0.0}}
        aggregate = ir_measures.calc_aggregate(measures, qrels, run)
        # queries with an empty result list count as 0 (ir_measures skips them otherwise)
        scale = len([q for q in run if q in qrels]) / len(qrels)
        summary[system] = {names[m]: round(float(aggregate.get(m, 0.0)) * scale, 4) for m in measures}
        for metric in ir_measures.iter_calc(measures, qrels, run):
            details[metric.query_id][f"{system}:{names[metric.measure]}"] = round(float(metric.value), 4)
    return EvalReport(summary=summary, per_query=list(details.values()))
