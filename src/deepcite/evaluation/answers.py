"""Answer quality: PubMedQA PQA-L summaries against the authors' conclusions, HotpotQA answer containment.

PubMedQA (``ori_pqal.json`` + ``test_ground_truth.json``): every abstract is ingested without its
conclusion (the loader reads ``CONTEXTS`` only); each question is researched and answered offline, and the
quick summary is scored against ``LONG_ANSWER``. The 500 PMIDs outside ``test_ground_truth.json`` are the
``train`` split (tune there), the 500 inside it the ``test`` split (report there). Figures per system:

- ``rougeL_f1``, ``rougeL_recall``: ROUGE-L (``rouge-score``, Porter stemming) of the text, citations removed;
- ``novel_f1``: token F1 after removing stop words and every word of the question from both sides (so
  restating the question earns nothing);
- ``findings_share``: summary sentences citing a results/conclusions section
  (:func:`deepcite.answer.findings.role_of_section`), ``other_study_only_share``: sentences citing only
  other studies than the question's own; ``invalid_ids`` (cited ids no passage has, removed by the citation
  check) and ``unresolved_left`` (such ids left in the summary: the check's misses); ``ask_ms_p50``, ``ask_ms_p95``: research plus
  answer.

Baselines in the same run: the first two sentences of the question's own abstract (``own_abstract_lead_2``, the
lead-2 baseline), its first two and last two (``own_abstract_2+2``) and the first three sentences of the top
BM25 hit (``bm25_top_hit_3``).

With an LLM (``llm``), every question is also asked of the Engine as configured with its LLM
(``deepcite_llm_summary``, the model named in ``model``), as ``deepcite ask`` runs it: research with the LLM's
plan, coverage grades and next hops, then the LLM's answer, all under one time budget
(``answer.budget.request_s``), through the citation check (support check included). With ``same_context`` the
LLM writes from the offline research's context instead, so the two writers are compared on the same evidence.
``written`` counts, per part (plan, coverage grade, next hop, next sub-question, HyDE passage, sub-answer,
summary, long answer, citation judge), how often the LLM's text was shipped and why the offline path wrote it
otherwise; ``repeated_heading_responses`` counts responses whose summary or long answer has a heading twice and
``mostly_unknown_responses`` those with more than half their sentences "Unknown …" where the offline writer's
summary cites. Two more figures say what the check did: ``repaired_share``, the factual sentences
replaced by "Unknown based on provided sources." (uncited, or citing a passage that does not support them),
``offline_share``, the questions whose summary the offline writer wrote because the LLM failed or ran
out of time, and ``unknown_share``, the summaries left with nothing but "Unknown based on provided sources."
(or the insufficient-evidence answer): the questions a writer abstained on, by itself or through the check.

HotpotQA (IRCoT's 500, every paragraph pooled): the share of summaries containing a gold answer after the
official normalisation, against the best-matching sentence (most question terms) of the top single-shot
hybrid passage; with an LLM, its summaries too.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import string
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table
from rouge_score import rouge_scorer
from rouge_score.scoring import Score

from deepcite.answer.citations import CITATION_RE, unresolved_citations
from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.findings import SentenceRole, role_of_section
from deepcite.answer.pipeline import AnswerResult, answer_budget
from deepcite.answer.prompts import INSUFFICIENT, UNKNOWN
from deepcite.app.assembly import answer_stage
from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.errors import InputError
from deepcite.evaluation.multihop import ingest_pool
from deepcite.llm.deadline import PartWriter
from deepcite.models import SearchMode
from deepcite.service import QuestionRequest, SearchRequest
from deepcite.text import split_sentences, tokenize

SPLITS = ("train", "test")
PUBMEDQA_COLLECTION = "eval-pubmedqa-pqal"
OFFLINE, LLM = "deepcite_summary", "deepcite_llm_summary"
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PubMedQAItem:
    """One PQA-L question with its abstract sections and the authors' conclusion."""

    pmid: str
    question: str
    contexts: list[str]
    long_answer: str


def load_pubmedqa(folder: Path, split: str, limit: int | None = None) -> list[PubMedQAItem]:
    """The ``split`` questions of a PQA-L folder (``ori_pqal.json``, ``test_ground_truth.json``)."""
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    data_file, test_file = folder / "ori_pqal.json", folder / "test_ground_truth.json"
    if not data_file.is_file() or not test_file.is_file():
        raise InputError(
            f"{folder} has no ori_pqal.json and test_ground_truth.json; give the PubMedQA PQA-L folder"
        )
    data = json.loads(data_file.read_text(encoding="utf-8"))
    test = set(json.loads(test_file.read_text(encoding="utf-8")))
    items = [
        PubMedQAItem(pmid, entry["QUESTION"], list(entry["CONTEXTS"]), entry["LONG_ANSWER"])
        for pmid, entry in sorted(data.items())
        if (pmid in test) == (split == "test")
    ]
    return items[:limit] if limit is not None else items


# -- figures ----------------------------------------------------------------------------------------------
_ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def plain(text: str) -> str:
    """The text without citation markers, headings and the unknown phrases."""
    text = CITATION_RE.sub("", text).replace(UNKNOWN, "").replace(INSUFFICIENT, "")
    return re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s+", " ", text)).strip()


def rouge_l(text: str, reference: str) -> Score:
    """ROUGE-L of ``text`` (citations removed, :func:`plain`) against ``reference``: precision, recall and
    ``fmeasure``, as a summary is scored."""
    return _ROUGE.score(reference, plain(text))["rougeL"]


def novel_f1(prediction: str, reference: str, question: str) -> float:
    """Token F1 of stemmed content words after removing every word of the question from both sides."""
    asked = set(tokenize(question))
    pred = Counter(t for t in tokenize(prediction) if t not in asked)
    ref = Counter(t for t in tokenize(reference) if t not in asked)
    common = sum((pred & ref).values())
    if not common:
        return 0.0
    precision, recall = common / sum(pred.values()), common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


@dataclass
class SystemScores:
    """Per-question figures of one system (the deepcite summary or a baseline)."""

    rouge_f1: list[float] = field(default_factory=list)
    rouge_recall: list[float] = field(default_factory=list)
    novel: list[float] = field(default_factory=list)
    words: list[int] = field(default_factory=list)
    sentences: int = 0
    findings: int = 0
    other_only: int = 0
    invalid_ids: int = 0  # cited ids no passage has, which the citation check removed
    unresolved_left: int = 0  # cited ids no passage has, still in the final summary (the check's misses)
    repaired: int = 0  # factual sentences the citation check replaced by the unknown phrase
    checked: int = 0  # factual sentences the citation check saw
    offline: int = 0  # summaries the offline writer wrote because the LLM failed or ran out of time
    unknown: int = 0  # summaries with nothing left but the unknown or insufficient-evidence phrases
    ms: list[float] = field(default_factory=list)
    written: Counter[tuple[str, str]] = field(default_factory=Counter)  # (part, "llm" | "offline")
    why: Counter[tuple[str, str]] = field(default_factory=Counter)  # (part, reason) of offline parts
    repeated_headings: int = 0  # responses whose summary or long answer has a heading twice
    mostly_unknown: int = 0  # responses mostly "Unknown …" where the offline writer's summary cites

    def add_written(self, written: list[PartWriter]) -> None:
        """Who wrote each part of one response (sub-answers counted under one name)."""
        for w in written:
            part = part_kind(w.part)
            self.written[(part, w.writer)] += 1
            if w.writer == "offline":
                self.why[(part, reason_kind(w.reason))] += 1

    def written_summary(self) -> dict[str, dict[str, object]]:
        parts = list(dict.fromkeys(part for part, _ in self.written))
        return {
            part: {
                "llm": self.written[(part, "llm")],
                "offline": self.written[(part, "offline")],
                "why": {r: n for (p, r), n in self.why.most_common() if p == part},
            }
            for part in parts
        }

    def add_text(self, text: str, reference: str, question: str) -> None:
        clean = plain(text)
        score = rouge_l(clean, reference)
        self.rouge_f1.append(score.fmeasure)
        self.rouge_recall.append(score.recall)
        self.novel.append(novel_f1(clean, reference, question))
        self.words.append(len(clean.split()))

    def add_sentence(self, sections: list[str | None], studies: list[str | None], own: str) -> None:
        """One sentence, by the sections and studies of the chunks it cites."""
        self.sentences += 1
        self.findings += any(role_of_section(s) is SentenceRole.FINDING for s in sections)
        self.other_only += bool(studies) and own not in studies

    def summary(self) -> dict[str, float | int | None]:
        n = max(1, len(self.rouge_f1))
        out: dict[str, float | int | None] = {
            "rougeL_f1": round(sum(self.rouge_f1) / n, 4),
            "rougeL_recall": round(sum(self.rouge_recall) / n, 4),
            "novel_f1": round(sum(self.novel) / n, 4),
            "words_mean": round(sum(self.words) / n, 1),
        }
        if self.sentences:
            out["findings_share"] = round(self.findings / self.sentences, 4)
            out["other_study_only_share"] = round(self.other_only / self.sentences, 4)
        if self.ms:
            out["invalid_ids"] = self.invalid_ids
            out["unresolved_left"] = self.unresolved_left
            out["repaired_share"] = round(self.repaired / max(1, self.checked), 4)
            out["offline_share"] = round(self.offline / n, 4)
            out["unknown_share"] = round(self.unknown / n, 4)
            out["ask_ms_p50"] = round(statistics.median(self.ms), 1)
            out["ask_ms_p95"] = round(
                statistics.quantiles(self.ms, n=20)[-1] if len(self.ms) > 1 else self.ms[0], 1
            )
            out["repeated_heading_responses"] = self.repeated_headings
            out["mostly_unknown_responses"] = self.mostly_unknown
        return out


def part_kind(part: str) -> str:
    """A part's name in ``written`` without the sub-question a sub-answer is for."""
    return part.split(":", 1)[0]


def reason_kind(reason: str | None) -> str:
    """A fallback reason without what differs per question (a guard's quoted text, the figures)."""
    if not reason:
        return "no reason given"
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "…", reason)
    return re.sub(r"\d+(\.\d+)?", "N", text)[:120]


_HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def repeated_heading(text: str) -> bool:
    """Whether a markdown heading occurs twice in ``text``."""
    titles = [h.strip().lower() for h in _HEADING.findall(text)]
    return len(titles) != len(set(titles))


def unknown_share(text: str) -> float:
    """The share of ``text``'s sentences (headings left out) that are the unknown phrase."""
    sentences = [s for s in split_sentences(_HEADING.sub("", text)) if s.strip()]
    if not sentences:
        return 0.0
    return sum(UNKNOWN in s for s in sentences) / len(sentences)


def note_response(scores: SystemScores, answered: AnswerResult, offline: AnswerResult | None) -> None:
    """Who wrote each part, and whether the response has a repeated heading or is mostly "Unknown …" where the
    offline writer's summary (``offline``, on the same question) cites."""
    scores.add_written(answered.written)
    scores.repeated_headings += repeated_heading(answered.summary) or repeated_heading(answered.answer)
    if offline is not None and CITATION_RE.search(offline.summary):
        scores.mostly_unknown += unknown_share(f"{answered.summary}\n{answered.answer}") > 0.5


def _first_last(contexts: list[str], first: int, last: int) -> str:
    sentences = [s for c in contexts for s in split_sentences(c)]
    if len(sentences) <= first + last:
        return " ".join(sentences)
    return " ".join(sentences[:first] + (sentences[-last:] if last else []))


def note_check(scores: SystemScores, answered: AnswerResult, ctx: ResponseContext, ms: float) -> None:
    """Add what the citation check found in one summary, whether it was written offline, and its time."""
    scores.ms.append(ms)
    scores.invalid_ids += answered.citation_check.invalid_ids
    scores.unresolved_left += len(unresolved_citations(answered.summary, [c.id for c in ctx.selected_chunks]))
    scores.repaired += answered.citation_check.repaired
    scores.checked += answered.citation_check.sentences
    scores.offline += answered.degraded is not None and "summary" in answered.degraded.parts
    scores.unknown += not plain(answered.summary)


def score_summary(
    scores: SystemScores, item: PubMedQAItem, answered: AnswerResult, ctx: ResponseContext, ms: float
) -> None:
    """Add one deepcite summary's figures: text scores, the sections and studies it cites, invalid ids."""
    scores.add_text(answered.summary, item.long_answer, item.question)
    note_check(scores, answered, ctx, ms)
    chunks = {c.id: c for c in ctx.all_chunks()}
    for sentence in split_sentences(answered.summary):
        ids = [int(i) for m in CITATION_RE.finditer(sentence) for i in re.findall(r"\d+", m.group(0))]
        cited = [chunks[i] for i in ids if i in chunks]
        if cited:
            scores.add_sentence([c.section for c in cited], [c.pmid for c in cited], item.pmid)


# -- running ----------------------------------------------------------------------------------------------
Answered = tuple[AnswerResult, float, ResponseContext]  # an answer, its milliseconds, the context it cites


class Answerer:
    """Research plus the answer through the Engine, as ``deepcite ask`` runs them: the Engine's research with
    no LLM, and on that one research context the answer stage (:func:`deepcite.app.assembly.answer_stage`) of
    the offline Engine and, with ``llm``, of the Engine as configured with its LLM."""

    def __init__(
        self, engine: Engine, collection: str, *, llm: bool = False, same_context: bool = False
    ) -> None:
        self.collection = collection
        self.engine = engine
        self.same_context = same_context
        self.offline = (
            engine
            if not engine.settings.llm.configured
            else engine.sharing(offline_settings(engine.settings))
        )
        self.engines: dict[str, Engine] = {OFFLINE: self.offline}
        if llm:
            if not engine.settings.llm.configured:
                raise InputError("--llm needs a model: set DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL")
            self.engines[LLM] = engine

    @property
    def writers(self) -> list[str]:
        return list(self.engines)

    def ask(self, question: str) -> tuple[ResponseContext, dict[str, Answered]]:
        """The offline research context, and each writer's answer with the milliseconds research and it took
        and the context it was written from (the LLM's own research unless ``same_context``)."""
        request = QuestionRequest(query=question, collection=self.collection)
        started = time.perf_counter()
        result = self.offline.research_sync(request)
        ctx = ResponseContext.from_pack(result.pack, self.offline.settings.answer)
        research_ms = (time.perf_counter() - started) * 1000.0
        answers: dict[str, Answered] = {}
        for name, engine in self.engines.items():
            started = time.perf_counter()
            if engine is self.offline or self.same_context:
                answered = asyncio.run(_answer(ctx, engine))
                answers[name] = (answered, research_ms + (time.perf_counter() - started) * 1000.0, ctx)
                continue
            asked = engine.ask_sync(request)  # research and answer under one budget, as deepcite ask
            own = ResponseContext(
                request_id=asked.request_id,
                query=question,
                selected_chunks=[
                    ContextChunk.model_validate(c, from_attributes=True) for c in asked.citations
                ],
            )
            answers[name] = (asked, (time.perf_counter() - started) * 1000.0, own)
        return ctx, answers

    def close(self) -> None:
        """Close the offline Engine when it was made here."""
        if self.offline is not self.engine:
            self.offline.close()


def offline_settings(settings: Settings) -> Settings:
    """``settings`` with no LLM: every step offline."""
    return settings.model_copy(
        update={"llm": settings.llm.model_copy(update={"base_url": None, "model": None})}
    )


async def _answer(ctx: ResponseContext, engine: Engine) -> AnswerResult:
    with answer_budget(engine.settings.answer):
        return await answer_stage(ctx, engine.resources)


def pubmedqa_collection(folder: Path, engine: Engine) -> str:
    """The PQA-L abstracts (without conclusions) ingested into collection :data:`PUBMEDQA_COLLECTION` (a cached
    collection's unchanged chunks are reused); returns its name."""
    engine.ingest(PUBMEDQA_COLLECTION, folder / "ori_pqal.json", fmt="pubmedqa")
    return PUBMEDQA_COLLECTION


def evaluate_pubmedqa(
    engine: Engine,
    collection: str,
    items: list[PubMedQAItem],
    *,
    llm: bool = False,
    same_context: bool = False,
    progress: Progress | None = None,
) -> dict[str, dict[str, object]]:
    """deepcite's quick summary (offline, and with ``llm`` the configured LLM's) and the two baselines on
    ``items`` (figures in the module docstring)."""
    answerer = Answerer(engine, collection, llm=llm, same_context=same_context)
    systems = {name: SystemScores() for name in answerer.writers}
    systems |= {
        "own_abstract_lead_2": SystemScores(),
        "own_abstract_2+2": SystemScores(),
        "bm25_top_hit_3": SystemScores(),
    }
    for n, item in enumerate(items, start=1):
        _, answers = answerer.ask(item.question)
        offline = answers[OFFLINE][0]
        for name, (answered, ms, own) in answers.items():
            score_summary(systems[name], item, answered, own, ms)
            if name != OFFLINE:
                note_response(systems[name], answered, offline)
        lead = systems["own_abstract_lead_2"]
        lead.add_text(_first_last(item.contexts, 2, 0), item.long_answer, item.question)
        own = systems["own_abstract_2+2"]
        own.add_text(_first_last(item.contexts, 2, 2), item.long_answer, item.question)
        top = engine.search(
            SearchRequest(query=item.question, collection=collection, mode=SearchMode.BM25, k=1)
        ).hits
        bm25 = systems["bm25_top_hit_3"]
        bm25.add_text(
            " ".join(split_sentences(top[0].text)[:3]) if top else "", item.long_answer, item.question
        )
        if top:
            bm25.sentences += 1
            bm25.findings += role_of_section(top[0].section) is SentenceRole.FINDING
            bm25.other_only += top[0].pmid != item.pmid
        if progress:
            progress(n, len(items))
    out: dict[str, dict[str, object]] = {
        name: {**scores.summary(), "questions": len(items)} for name, scores in systems.items()
    }
    answerer.close()
    if llm:
        out[LLM]["model"] = engine.settings.llm.model
        out[LLM]["research"] = "offline research's context" if same_context else "its own (as deepcite ask)"
        out[LLM]["written"] = systems[LLM].written_summary()
    return out


# -- HotpotQA ---------------------------------------------------------------------------------------------
def normalize_answer(text: str) -> str:
    """HotpotQA's official answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def contains_answer(text: str, answers: list[str]) -> bool:
    """Whether the normalised text holds any normalised gold answer as a whole-word span."""
    haystack = f" {normalize_answer(plain(text))} "
    return any(f" {normalize_answer(a)} " in haystack for a in answers if normalize_answer(a))


def load_hotpotqa(path: Path, limit: int | None = None) -> list[tuple[str, list[str]]]:
    """(question, gold answers) of IRCoT's HotpotQA file (``question_text``, ``answers_objects[].spans``)."""
    if not path.is_file():
        raise InputError(f"{path} is not a file; give IRCoT's HotpotQA JSON Lines file")
    out: list[tuple[str, list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            spans = [s for obj in record.get("answers_objects", []) for s in obj.get("spans", [])]
            out.append((record["question_text"], spans))
        if limit is not None and len(out) >= limit:
            break
    return out


def best_sentence(text: str, question: str) -> str:
    """The sentence of ``text`` holding the most of the question's terms (the first on ties)."""
    asked = set(tokenize(question))
    sentences = split_sentences(text) or [text]
    return max(sentences, key=lambda s: len(asked & set(tokenize(s))))


def evaluate_hotpotqa(
    engine: Engine,
    path: Path,
    *,
    limit: int | None = None,
    llm: bool = False,
    progress: Progress | None = None,
) -> dict[str, dict[str, float | int | str]]:
    """Answer containment of deepcite's summary (offline, and with ``llm`` the configured LLM's) vs the best
    sentence of the top single-shot passage; every paragraph is pooled into one collection."""
    questions = load_hotpotqa(path, limit)
    collection = ingest_pool(engine, path, "ircot")
    answerer = Answerer(engine, collection, llm=llm)
    found: Counter[str] = Counter()
    ms: dict[str, list[float]] = {name: [] for name in answerer.writers}
    baseline = 0
    for n, (question, answers) in enumerate(questions, start=1):
        _, written = answerer.ask(question)
        for name, (answered, took, _own) in written.items():
            ms[name].append(took)
            found[name] += contains_answer(answered.summary, answers)
        top = engine.search(
            SearchRequest(query=question, collection=collection, mode=SearchMode.HYBRID, k=1)
        ).hits
        baseline += bool(top) and contains_answer(best_sentence(top[0].text, question), answers)
        if progress:
            progress(n, len(questions))
    total = max(1, len(questions))
    out: dict[str, dict[str, float | int | str]] = {
        name: {
            "contains_answer": round(found[name] / total, 4),
            "ask_ms_p50": round(statistics.median(ms[name]), 1) if ms[name] else 0.0,
            "questions": len(questions),
        }
        for name in answerer.writers
    }
    out["single_shot_best_sentence"] = {
        "contains_answer": round(baseline / total, 4),
        "questions": len(questions),
    }
    answerer.close()
    if llm:
        out[LLM]["model"] = engine.settings.llm.model
    return out


# -- printing ---------------------------------------------------------------------------------------------
def figure_tables(title: str, systems: dict[str, dict[str, object]]) -> list[Table]:
    """The figures of one set as tables that read in a log as on a terminal: one row per figure and one column
    per system (a handful of columns, never squeezed into "s…"), then, with an LLM, one row per part: how often
    the LLM's text was shipped and why the offline path wrote it otherwise."""
    names = list(systems)
    keys = list(dict.fromkeys(k for row in systems.values() for k in row if k != "written"))
    figures = Table(title=title)
    figures.add_column("figure", no_wrap=True)
    for name in names:
        figures.add_column(name, justify="right", overflow="fold")
    for key in keys:
        figures.add_row(key, *(str(systems[n].get(key, "")) for n in names))
    tables = [figures]
    for name in names:
        written = systems[name].get("written")
        if not isinstance(written, dict) or not written:
            continue
        parts = Table(title=f"{title} · {name}: who wrote each part")
        parts.add_column("part", no_wrap=True)
        parts.add_column("LLM shipped", justify="right")
        parts.add_column("offline", justify="right")
        parts.add_column("why offline", overflow="fold")
        for part, row in written.items():
            why = "; ".join(f"{reason} ×{n}" for reason, n in dict(row.get("why") or {}).items())
            parts.add_row(part, str(row.get("llm", 0)), str(row.get("offline", 0)), why)
        tables.append(parts)
    return tables
