"""The real-documents evaluation run through the Engine: phrase on the right page per format, then hybrid search
and research evidence hit@k with page correctness, then (with quotes) each question answered by the Engine,
every cited passage's quote checked against the file's own text, and the answer checked: does the quick summary
state the answer phrase, and the summary and long answer together, in the summary's first sentence, and the summary against its contract:
abstention on questions the files do not answer (``answer`` null) and on those they do, a yes/no summary's
verdict, the summary's sentences and words (:mod:`deepcite.evaluation.answer_check`).

Each question is researched once, through ``ask`` as ``deepcite ask`` runs it: the research hit@k is read from
the evidence pack its answer was written from (the saved answer's), so every figure of a question is one run's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deepcite.engine import Engine
from deepcite.errors import NotFoundError
from deepcite.evaluation.answer_check import AnswerCheck, ContractCheck
from deepcite.evaluation.answerer import offline_settings
from deepcite.evaluation.documents import (
    CheckQuestion,
    QuoteCheck,
    check_quotes,
    chunk_hit,
    found_on_page,
    load_questions,
    page_texts,
)
from deepcite.ingest.isolate import read_file_isolated
from deepcite.models import Chunk, EvidencePack, SearchMode
from deepcite.saved_answers import cited_citations
from deepcite.service import AskResponse, QuestionRequest, SearchRequest

Run = Callable[[str], list[Chunk]]


class _Asked:
    """Each question asked once through the Engine's ``ask``: its response and the evidence pack it was written
    from (the saved answer's; a fresh research when the answer could not be saved)."""

    def __init__(self, engine: Engine, collection: str) -> None:
        self.engine = engine
        self.collection = collection
        self.done: dict[str, tuple[AskResponse, EvidencePack]] = {}

    def __call__(self, question: str) -> tuple[AskResponse, EvidencePack]:
        if question not in self.done:
            request = QuestionRequest(query=question, collection=self.collection)
            response = self.engine.ask_sync(request)
            try:
                pack = self.engine.saved.get(response.request_id).pack
            except NotFoundError:  # the store refused it (the log says why); research again for the pack
                pack = self.engine.research_sync(request).pack
            self.done[question] = (response, pack)
        return self.done[question]


def _runs(engine: Engine, collection: str, k: int, asked: _Asked | None) -> dict[str, Run]:
    """The systems scored: the Engine's hybrid search, and (``asked``) the evidence pack of its answer."""

    def hybrid(question: str) -> list[Chunk]:
        found = engine.search(
            SearchRequest(query=question, collection=collection, mode=SearchMode.HYBRID, k=k)
        )
        return list(found.hits)

    runs: dict[str, Run] = {"hybrid": hybrid}
    if asked is not None:
        runs["research"] = lambda question: [c.chunk for c in asked(question)[1].final_evidence[:k]]
    return runs


def _hit_rates(
    checks: list[CheckQuestion], run: Run, k: int, per_question: dict[str, dict[str, Any]], label: str
) -> tuple[dict[str, float], dict[str, float]]:
    """hit@k and page correctness of one system, and hit@k per question kind (and blind / not blind); each
    question's hit is written into ``per_question[id][label]``."""
    hits = page_ok = 0
    per_kind: dict[str, list[bool]] = {}
    checks = [q for q in checks if q.answerable]
    for q in checks:
        found = [page for hit, page in (chunk_hit(chunk, q) for chunk in run(q.question)) if hit]
        per_question[q.id][label] = bool(found)
        hits += bool(found)
        page_ok += bool(found) and found[0]
        per_kind.setdefault(q.kind, []).append(bool(found))
        per_kind.setdefault("blind" if q.blind else "not blind", []).append(bool(found))
    scores = {
        f"hit@{k}": round(hits / len(checks), 3),
        "page_correct_of_hits": round(page_ok / hits, 3) if hits else 0.0,
    }
    return scores, {kind: round(sum(v) / len(v), 3) for kind, v in sorted(per_kind.items())}


def evaluate_documents(
    engine: Engine,
    files: Path,
    questions: Path,
    collection: str,
    *,
    k: int = 5,
    research: bool = True,
    quotes: bool = True,
) -> dict[str, Any]:
    """The figures of one run over a folder of documents and its check set (see the module docstring). Research
    runs offline so the figures are reproducible."""
    settings = engine.settings
    checks = load_questions(questions)
    per_format: dict[str, list[bool]] = {}
    pages: dict[str, dict[int, str]] = {}

    def pages_of(name: str) -> dict[int, str]:  # a cited file no question is about is read on demand
        if name not in pages:
            read = read_file_isolated(files / name, doc_id=name, name=name, settings=settings.ingest)
            pages[name] = page_texts(read)
        return pages[name]

    for name in sorted({q.file for q in checks}):
        result = read_file_isolated(files / name, doc_id=name, name=name, settings=settings.ingest)
        pages[name] = page_texts(result)
        for q in (q for q in checks if q.file == name):
            per_format.setdefault(result.kind or "unreadable", []).append(found_on_page(result, q))
    report = engine.ingest(collection, files, on_error="skip")
    offline = engine if not settings.llm.configured else engine.sharing(offline_settings(settings))
    try:
        scores, kinds = {}, {}
        per_question: dict[str, dict[str, Any]] = {q.id: {"kind": q.kind} for q in checks}
        asked = _Asked(offline, collection)
        for label, run in _runs(offline, collection, k, asked if research else None).items():
            scores[label], kinds[label] = _hit_rates(checks, run, k, per_question, label)
        quoted, stated, contract = QuoteCheck(), AnswerCheck(), ContractCheck()
        if quotes:
            for q in checks:
                answered, _ = asked(q.question)
                quoted = quoted.add(check_quotes(cited_citations(answered), pages_of))
                outcome = contract.add(answered.summary, answered.decision, q)
                per_question[q.id] |= outcome
                if q.answer is not None:
                    in_summary, in_either = stated.add(
                        q.kind, answered.summary, answered.answer, q.answer, table=q.in_table
                    )
                    per_question[q.id] |= {"summary": in_summary, "summary_or_long": in_either}
    finally:
        if offline is not engine:
            offline.close()
    return {
        "questions": len(checks),
        "phrase_on_page": {fmt: round(sum(v) / len(v), 3) for fmt, v in sorted(per_format.items())},
        "phrase_on_page_counts": {fmt: [sum(v), len(v)] for fmt, v in sorted(per_format.items())},
        "retrieval": scores,
        f"hit@{k}_per_kind": kinds,
        "questions_per_kind": dict(sorted(Counter(q.kind for q in checks).items())),
        **(
            {
                "quotes": quoted.rates(),
                "states_answer": stated.rates(),
                "summary_contract": contract.rates(
                    settings.answer.length.summary_max_sentences, settings.answer.decision.summary_max_words
                ),
            }
            if quotes
            else {}
        ),
        "per_question": per_question,
        "ingest": {"files": len(report.files), "chunks": report.chunks, "seconds": round(report.seconds, 1)},
    }
