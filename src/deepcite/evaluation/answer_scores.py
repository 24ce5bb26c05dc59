"""The figures of one system over a set of questions (:class:`SystemScores`, named in
:mod:`deepcite.evaluation.pubmedqa_run`) and what one answer adds to them: its text scores, the sections and studies
it cites, the citation check's counts, and who wrote each part."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

from deepcite.answer.citations import CITATION_RE, unresolved_citations
from deepcite.answer.context import ResponseContext
from deepcite.answer.findings import SentenceRole, role_of_section
from deepcite.answer.pipeline import AnswerResult
from deepcite.evaluation.answer_figures import (
    novel_f1,
    part_kind,
    plain,
    reason_kind,
    repeated_heading,
    rouge_l,
    unknown_share,
)
from deepcite.evaluation.pubmedqa import PubMedQAItem
from deepcite.llm.deadline import PartWriter
from deepcite.text import split_sentences


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


def note_response(scores: SystemScores, answered: AnswerResult, offline: AnswerResult | None) -> None:
    """Who wrote each part, and whether the response has a repeated heading or is mostly "Unknown …" where the
    offline writer's summary (``offline``, on the same question) cites."""
    scores.add_written(answered.written)
    scores.repeated_headings += repeated_heading(answered.summary) or repeated_heading(answered.answer)
    if offline is not None and CITATION_RE.search(offline.summary):
        scores.mostly_unknown += unknown_share(f"{answered.summary}\n{answered.answer}") > 0.5


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
