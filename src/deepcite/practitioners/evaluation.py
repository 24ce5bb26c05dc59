"""Evaluate the finder on graded queries: plain BM25 (baseline), the catalogue-only two-stage flow (the
finder before the semantic stage: semantic, population, urgency and floor switched off) and the full
two-stage flow, in the same run over the same directory.

A query file has one JSON object a line: ``{"query": "...", "relevant": {"<specialty as written in the
directory file>": grade 1..3, ...}}`` (``id`` and ``kind`` optional). A practitioner's gain is the grade of
their primary specialty. nDCG@k and P@k (relevant = grade >= 1) are computed by ``ir_measures``.

Per specialty: a request *targets* the specialties it grades 3, and *reaches* one when a practitioner of it
is in its top ``cutoff``; recall is reached / targeted, and every directory specialty that no request
reaches is listed (``unreached``), whether a request targets it or not. Latency is the full flow's wall
time per request (after one warm-up request), p50 and p95.
"""

from __future__ import annotations

import json
import statistics
import time
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
    kind: str | None = None
    query: str = Field(min_length=1)
    relevant: dict[str, int] = Field(min_length=1)

    def grades(self) -> dict[str, int]:
        return {spec.strip().upper(): grade for spec, grade in self.relevant.items()}

    def targets(self) -> list[str]:
        """The specialties graded 3: what the request is for."""
        return [spec for spec, grade in self.grades().items() if grade == 3]


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


SYSTEMS = ("bm25", "catalogue_only", "two_stage")


@dataclass
class EvalReport:
    """Aggregate figures ``{"bm25": {...}, "catalogue_only": {...}, "two_stage": {...}}``, per-query figures,
    per-specialty recall of the full flow, the unreached specialties and the full flow's latency."""

    summary: dict[str, dict[str, float]]
    per_query: list[dict[str, Any]] = field(default_factory=list)
    per_specialty: dict[str, dict[str, float]] = field(default_factory=dict)
    unreached: list[str] = field(default_factory=list)
    latency_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The figures a benchmark result file holds."""
        return {
            **self.summary,
            "latency_ms": self.latency_ms,
            "unreached_specialties": self.unreached,
            "per_specialty": self.per_specialty,
        }


def catalogue_only(finder: PractitionerFinder) -> PractitionerFinder:
    """The same directory and index with the semantic stage, population, urgency and floor switched off."""
    s = finder.settings
    off = s.practitioners.tuned(
        semantic={"enabled": False},
        ranking={"population_boost": 0.0, "urgency_boost": 0.0},
        floor={"ratio": 0.0},
    )
    return PractitionerFinder(
        s.model_copy(update={"practitioners": off}),
        directory=finder.directory,
        store=finder.store,
        embedder=finder.semantic.embedder,
        taxonomy=finder.taxonomy,
        catalogue=finder.catalogue,
    )


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
    """nDCG@cutoff and P@cutoff for plain BM25, the catalogue-only flow and the full two-stage flow;
    per-specialty recall and latency of the full flow."""
    qrels = _qrels(queries, finder)
    before = catalogue_only(finder)
    runs: dict[str, dict[str, dict[str, float]]] = {system: {} for system in SYSTEMS}
    details: dict[str, dict[str, Any]] = {}
    await finder.search(PractitionerQuery(user_query=queries[0].query))  # warm-up: model load, caches
    elapsed: list[float] = []
    reached: dict[str, list[bool]] = {}
    for query in queries:
        qid = str(query.id)
        baseline = [chunk.doc_id for chunk, _ in finder.baseline(query.query, cutoff)]
        old = await before.search(PractitionerQuery(user_query=query.query))
        started = time.perf_counter()
        response = await finder.search(PractitionerQuery(user_query=query.query))
        elapsed.append((time.perf_counter() - started) * 1000.0)
        runs["bm25"][qid] = _run(baseline)
        runs["catalogue_only"][qid] = _run([r.npi for r in old.results])
        runs["two_stage"][qid] = _run([r.npi for r in response.results])
        found = {(r.primary_specialty or "").upper() for r in response.results[:cutoff]}
        for target in query.targets():
            reached.setdefault(target, []).append(target in found)
        details[qid] = {
            "id": qid,
            "kind": query.kind,
            "query": query.query,
            "filled_from_intent": response.filled_from_intent,
            "clear": response.intent.clear,
            "primary_intent": response.intent.clinical.primary_intent,
            "specialties": [m.specialty for m in response.specialties],
            "top": [r.primary_specialty for r in response.results[:3]],
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
    per_specialty = {
        spec: {"targeted": len(hits), "reached": sum(hits), "recall": round(sum(hits) / len(hits), 4)}
        for spec, hits in sorted(reached.items())
    }
    directory = sorted(s.upper() for s in finder.directory.primary_specialties())
    unreached = [s for s in directory if not any(reached.get(s, []))]
    latency = {
        "p50": round(statistics.median(elapsed), 2),
        "p95": round(statistics.quantiles(elapsed, n=20)[-1] if len(elapsed) > 1 else elapsed[0], 2),
        "requests": float(len(elapsed)),
    }
    return EvalReport(
        summary=summary,
        per_query=list(details.values()),
        per_specialty=per_specialty,
        unreached=unreached,
        latency_ms=latency,
    )
