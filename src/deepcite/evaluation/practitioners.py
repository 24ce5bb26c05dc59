"""Evaluate the practitioner finder on graded requests, through the Engine: plain BM25 over the profiles (the
baseline) and each evaluated system, a named settings profile (:mod:`deepcite.evaluation.profiles`) whose
Engine shares the base Engine's store and embedder, asked with ``engine.practitioners.find`` as users ask.
The systems by default: ``catalogue_only`` (profile ``practitioners_catalogue_only``: the finder before the
semantic stage, with semantic, population, urgency and floor switched off) and ``two_stage`` (profile
``default``: the shipped finder), in the same run over the same directory.

    engine.practitioners.import_file(Path("maine.csv"), "cms-reduced")
    report = await evaluate_practitioners(engine, load_queries(Path("eval/requests.jsonl")))
    report.summary["two_stage"]["ndcg@10"]

A query file has one JSON object a line: ``{"query": "...", "relevant": {"<specialty as written in the
directory file>": grade 1..3, ...}}`` (``id`` and ``kind`` optional). A practitioner's gain is the grade of
their primary specialty. nDCG@k and P@k (relevant = grade >= 1) are computed by ``ir_measures``. Optional:
``messages``, the patient's earlier turns (oldest first; ``query`` is then the follow-up, and BM25 reads every
turn); ``urgent``, whether a triage protocol sends the request to emergency now (the finder's ``emergency`` is
then expected set, else unset); ``pair``, a name shared by an urgent request and a non-urgent one that shares
its words. Urgency is scored on the primary system: ``accuracy`` over the requests labelled, ``pairs`` the share
of pairs with both members right.

Per specialty (of the primary system, ``two_stage``): a request *targets* the specialties it grades 3, and
*reaches* one when a practitioner of it is in its top ``cutoff``; recall is reached / targeted, and every
directory specialty that no request reaches is listed (``unreached``), whether a request targets it or not.
Latency is the primary system's wall time per request (after one warm-up request of each system), p50 and p95.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ir_measures
from ir_measures import P, nDCG
from pydantic import BaseModel, Field, ValidationError

from deepcite.config import LLMSettings, Settings
from deepcite.engine import Engine
from deepcite.errors import IngestError, InputError
from deepcite.evaluation.profiles import DEFAULT_PROFILE, load_profile, profile_settings
from deepcite.practitioners.api import ChatMessage, PractitionerQuery
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.location import close_matches

if TYPE_CHECKING:
    from deepcite.practitioners.finder import PractitionerFinder


class EvalQuery(BaseModel):
    """One evaluation query with graded specialties."""

    id: str | None = None
    kind: str | None = None
    query: str = Field(min_length=1)
    relevant: dict[str, int] = Field(min_length=1)
    messages: list[str] = Field(default_factory=list)  # the patient's earlier turns, oldest first
    urgent: bool | None = None  # whether emergency guidance is expected
    pair: str | None = None  # urgent/non-urgent pairs that share words

    def request(self) -> PractitionerQuery:
        """The request as the page sends it: the follow-up with the earlier turns as messages."""
        turns = [ChatMessage(role="user", content=text) for text in self.messages]
        return PractitionerQuery(user_query=self.query, messages=turns)

    def patient_text(self) -> str:
        """Every turn, oldest first: what plain BM25 reads."""
        return " ".join([*self.messages, self.query])

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


BASELINE = "bm25"  # plain BM25 over the profiles: a reference, not a system users run
SYSTEMS: dict[str, str] = {  # evaluated system -> its settings profile
    "catalogue_only": "practitioners_catalogue_only",
    "two_stage": DEFAULT_PROFILE,
}
PRIMARY = "two_stage"  # the system whose recall per specialty and latency are reported


@dataclass
class EvalReport:
    """Aggregate figures ``{"bm25": {...}, "catalogue_only": {...}, "two_stage": {...}}``, per-query figures,
    per-specialty recall of the primary system, the unreached specialties, its latency, and each system's
    profile."""

    summary: dict[str, dict[str, float]]
    per_query: list[dict[str, Any]] = field(default_factory=list)
    per_specialty: dict[str, dict[str, float]] = field(default_factory=dict)
    unreached: list[str] = field(default_factory=list)
    latency_ms: dict[str, float] = field(default_factory=dict)
    profiles: dict[str, str] = field(default_factory=dict)
    urgency: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The figures a benchmark result file holds."""
        return {
            **self.summary,
            "latency_ms": self.latency_ms,
            "urgency": self.urgency,
            "unreached_specialties": self.unreached,
            "per_specialty": self.per_specialty,
            "profiles": self.profiles,
        }


def scratch_settings(base: Settings, data_dir: Path) -> Settings:
    """``base`` with every file under ``data_dir``, the Edge store and offline analyses: reproducible figures
    on a directory of their own."""
    return base.model_copy(
        update={
            "data_dir": data_dir,
            "practitioners": base.practitioners.model_copy(update={"db_path": None}),
            "store": base.store.model_copy(update={"backend": "edge"}),
            "llm": LLMSettings(),
        }
    )


def parse_systems(text: str) -> dict[str, str]:
    """``"catalogue_only=practitioners_catalogue_only,two_stage=default"`` as ``{system: profile}`` (a bare
    profile name names its system too)."""
    systems: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, profile = part.partition("=")
        systems[name.strip()] = profile.strip() or name.strip()
    if not systems:
        raise InputError("name at least one system: NAME=PROFILE[,NAME=PROFILE...]")
    return systems


def _qrels(queries: list[EvalQuery], directory: Directory) -> dict[str, dict[str, int]]:
    known = sorted(directory.primary_specialties())
    unknown = sorted({s for q in queries for s in q.grades() if s not in known})
    if unknown:
        hints = [
            f"{s} (did you mean {', '.join(close_matches(s, known)) or 'nothing close'}?)" for s in unknown
        ]
        raise InputError(f"specialties not in the directory: {'; '.join(hints)}")
    by_specialty: dict[str, list[str]] = {}
    for p in directory:
        if p.primary_specialty:
            by_specialty.setdefault(p.primary_specialty.upper(), []).append(p.npi)
    return {
        str(q.id): {npi: grade for spec, grade in q.grades().items() for npi in by_specialty.get(spec, [])}
        for q in queries
    }


def _run(ranked: list[str]) -> dict[str, float]:
    # pytrec_eval orders by score, so the rank is encoded as a strictly decreasing score
    return {npi: float(len(ranked) - i) for i, npi in enumerate(ranked)}


def _engines(engine: Engine, systems: dict[str, str]) -> dict[str, Engine]:
    """Each system's Engine: ``engine`` itself when its profile changes nothing, else one sharing its store."""
    out: dict[str, Engine] = {}
    for name, profile in systems.items():
        settings = profile_settings(engine.settings, load_profile(profile))
        out[name] = engine if settings == engine.settings else engine.sharing(settings)
    return out


async def evaluate_practitioners(
    engine: Engine,
    queries: list[EvalQuery],
    *,
    systems: dict[str, str] | None = None,
    primary: str = PRIMARY,
    cutoff: int = 10,
) -> EvalReport:
    """nDCG@cutoff and P@cutoff of plain BM25 and of each system (``{name: settings profile}``, default
    :data:`SYSTEMS`) over the directory ``engine`` holds; per-specialty recall and latency of ``primary``."""
    systems = dict(systems or SYSTEMS)
    if primary not in systems or BASELINE in systems:
        raise InputError(
            f"the systems must include {primary!r} (recall and latency are its) and not be named {BASELINE!r}; "
            f"got {', '.join(systems)}"
        )
    finder = await asyncio.to_thread(lambda: engine.practitioners.finder)
    qrels = _qrels(queries, finder.directory)
    engines = _engines(engine, systems)
    try:
        report = await _evaluate(finder, engines, queries, qrels, primary, cutoff)
    finally:
        for profiled in engines.values():
            if profiled is not engine:
                profiled.close()
    report.profiles = systems
    return report


async def _evaluate(
    finder: PractitionerFinder,
    engines: dict[str, Engine],
    queries: list[EvalQuery],
    qrels: dict[str, dict[str, int]],
    primary: str,
    cutoff: int,
) -> EvalReport:
    runs: dict[str, dict[str, dict[str, float]]] = {name: {} for name in (BASELINE, *engines)}
    details: dict[str, dict[str, Any]] = {}
    for profiled in engines.values():  # warm-up: model load, caches
        await profiled.practitioners.find(queries[0].request())
    elapsed: list[float] = []
    reached: dict[str, list[bool]] = {}
    for query in queries:
        qid = str(query.id)
        runs[BASELINE][qid] = _run(
            [chunk.doc_id for chunk, _ in finder.baseline(query.patient_text(), cutoff)]
        )
        responses = {}
        for name, profiled in engines.items():
            started = time.perf_counter()
            responses[name] = await profiled.practitioners.find(query.request())
            if name == primary:
                elapsed.append((time.perf_counter() - started) * 1000.0)
            runs[name][qid] = _run([r.npi for r in responses[name].results])
        shown = responses[primary]
        found = {(r.primary_specialty or "").upper() for r in shown.results[:cutoff]}
        for target in query.targets():
            reached.setdefault(target, []).append(target in found)
        details[qid] = {
            "id": qid,
            "kind": query.kind,
            "query": query.query,
            "messages": query.messages,
            "emergency": shown.emergency.level if shown.emergency else None,
            "urgent": query.urgent,
            "filled_from_intent": shown.debug.filled_from_intent,
            "clear": shown.intent.clear,
            "primary_intent": shown.intent.clinical.primary_intent,
            "specialties": [m.specialty for m in shown.specialties],
            "top": [r.primary_specialty for r in shown.results[:3]],
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
        urgency=urgency_figures(queries, details),
        summary=summary,
        per_query=list(details.values()),
        per_specialty=per_specialty,
        unreached=unreached,
        latency_ms=latency,
    )


def urgency_figures(queries: list[EvalQuery], details: dict[str, dict[str, Any]]) -> dict[str, float]:
    """How often emergency guidance was shown exactly when expected: over the requests labelled ``urgent``
    (accuracy, missed urgent ones, false alarms) and over the urgent/non-urgent pairs (both members right)."""
    labelled = [q for q in queries if q.urgent is not None]
    if not labelled:
        return {}
    right = {str(q.id): (details[str(q.id)]["emergency"] is not None) == q.urgent for q in labelled}
    pairs: dict[str, list[bool]] = {}
    for q in labelled:
        if q.pair:
            pairs.setdefault(q.pair, []).append(right[str(q.id)])
    urgent = [q for q in labelled if q.urgent]
    return {
        "labelled": float(len(labelled)),
        "accuracy": round(sum(right.values()) / len(labelled), 4),
        "missed": float(sum(not right[str(q.id)] for q in urgent)),
        "false_alarms": float(sum(not right[str(q.id)] for q in labelled if not q.urgent)),
        "pairs": float(len(pairs)),
        "pairs_right": round(sum(all(v) for v in pairs.values()) / len(pairs), 4) if pairs else 0.0,
    }
