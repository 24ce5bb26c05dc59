"""Multi-hop retrieval evaluation: every paragraph of every question pooled into one collection, then
single-shot hybrid retrieval vs the research engine, scored on gold-paragraph recall.

Formats: ``ircot`` (``contexts[]`` with ``is_supporting``), ``musique`` (``paragraphs[]`` with
``is_supporting``), ``hotpot`` and ``2wiki`` (``context: [[title, [sentences]]]`` with
``supporting_facts: [[title, sentence_index]]``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepcite.config import Settings
from deepcite.errors import InputError
from deepcite.evaluation.ranking import recall_at
from deepcite.ingest.loaders import paragraph_id
from deepcite.models import SearchMode
from deepcite.research.agent import ResearchAgent
from deepcite.retrieval.collection import Collection, open_collection

FORMATS = ("ircot", "musique", "hotpot", "2wiki")
# the ingest format that reads each file layout's paragraphs
INGEST_FORMAT = {"ircot": "hotpotqa", "musique": "musique", "hotpot": "hotpotqa", "2wiki": "hotpotqa"}
CUTOFFS = (5, 10)


@dataclass
class MultihopQuestion:
    """One question with the ids of its supporting paragraphs."""

    qid: str
    question: str
    gold: set[str]


@dataclass
class RunScores:
    """Recall figures and cost of one system over the questions."""

    recall_at: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in CUTOFFS})
    all_recall_10: list[float] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def add(self, ranked_doc_ids: list[str], gold: set[str], hops: int, seconds: float) -> None:
        ranked = list(dict.fromkeys(ranked_doc_ids))
        for k, recall in recall_at(ranked, gold, CUTOFFS).items():
            self.recall_at[k].append(recall)
        self.all_recall_10.append(float(gold <= set(ranked[:10])))
        self.hops.append(hops)
        self.seconds.append(seconds)

    def summary(self) -> dict[str, float]:
        n = max(1, len(self.hops))
        out = {f"recall@{k}": round(sum(v) / n, 4) for k, v in self.recall_at.items()}
        out["all_recall@10"] = round(sum(self.all_recall_10) / n, 4)
        out["hops_mean"] = round(sum(self.hops) / n, 3)
        out["seconds_per_question"] = round(sum(self.seconds) / n, 4)
        out["questions"] = len(self.hops)
        return out


def _records(path: Path) -> Iterator[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        yield from json.loads(text)
        return
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{n}: not a JSON object ({exc}); is --format right?") from exc


def _question(record: dict[str, Any], fmt: str, where: str) -> MultihopQuestion:
    qid = str(record.get("question_id") or record.get("id") or record.get("_id") or where)
    text = record.get("question_text") or record.get("question")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: no question text ('question_text' or 'question')")
    if fmt in ("ircot", "musique"):
        key = "contexts" if fmt == "ircot" else "paragraphs"
        gold = {
            paragraph_id((p.get("title") or "").strip(), p["paragraph_text"].strip())
            for p in record.get(key) or []
            if p.get("is_supporting")
        }
    else:
        titles = {str(t) for t, *_ in record.get("supporting_facts") or []}
        gold = {
            paragraph_id(title.strip(), " ".join(s.strip() for s in sentences if s.strip()))
            for title, sentences in record.get("context") or []
            if title in titles
        }
    if not gold:
        raise InputError(f"{where}: no supporting paragraphs marked; is --format {fmt} right?")
    return MultihopQuestion(qid=qid, question=text.strip(), gold=gold)


def load_questions(path: str | Path, fmt: str, limit: int | None = None) -> list[MultihopQuestion]:
    """The questions of a multi-hop QA file, each with its gold paragraph ids (as ingest assigns them)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown multi-hop format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path} is not a file; give the question file with --data")
    out: list[MultihopQuestion] = []
    for i, record in enumerate(_records(path), start=1):
        out.append(_question(record, fmt, f"{path} record {i}"))
        if limit is not None and len(out) >= limit:
            break
    return out


def pool_collection_name(path: str | Path, fmt: str) -> str:
    """A collection name bound to the file's content, so a cached pool is reused only for the same file."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    return f"multihop-{fmt}-{digest}"


def build_pool(path: str | Path, fmt: str, settings: Settings, *, name: str | None = None) -> Collection:
    """Every paragraph of every question in one collection (idempotent: a cached pool is reused)."""
    collection = open_collection(name or pool_collection_name(path, fmt), settings)
    collection.ingest(path, fmt=INGEST_FORMAT[fmt])
    return collection


Progress = Callable[[int, int], None]


def evaluate(
    collection: Collection,
    questions: list[MultihopQuestion],
    settings: Settings,
    *,
    progress: Progress | None = None,
) -> dict[str, dict[str, float]]:
    """Single-shot hybrid retrieval (the question as the query) vs the research engine, per question."""
    agent = ResearchAgent(collection, settings=settings.research, use_llm=False)
    single, research = RunScores(), RunScores()
    depth = max(CUTOFFS)
    for i, q in enumerate(questions, start=1):
        started = time.perf_counter()
        hits = collection.search(q.question, mode=SearchMode.HYBRID, k=depth)
        single.add([h.chunk.doc_id for h in hits], q.gold, 1, time.perf_counter() - started)
        started = time.perf_counter()
        result = agent.process(q.question)
        research.add(
            [c.chunk.doc_id for c in result.pack.final_evidence],
            q.gold,
            result.hops,
            time.perf_counter() - started,
        )
        if progress:
            progress(i, len(questions))
    return {"single_shot": single.summary(), "research": research.summary()}
