"""The offline generator: answers composed of the evidence's own sentences, findings first, each cited.

Usage::

    gen = ExtractiveGenerator(embedder, settings.answer)
    text = gen.summary(ctx)          # "Atrial fibrillation raises stroke risk fivefold [1]. …"

A sentence's *support*, *relevance* and *value* for each target (the question, a part or side of it, an aspect
with its keywords, a sub-question) are :mod:`deepcite.answer.sentence_scorer`'s.

An answer part is written by :meth:`ExtractiveGenerator._findings`: it opens with the sentence of highest
value among those that are findings (``opening_min_finding``) and relevant (``opening_min_relevance``; any
sentence over the threshold when none is), then adds sentences whose value reaches ``continue_ratio`` of
the opening's, from the opening's own study, or (when the target asks for findings) from another study
only when that sentence bears on the target as much as the opening does
(``other_study_ratio`` of its support). A sentence whose cosine to one already chosen reaches
``redundancy_threshold`` is skipped, unless the question asks for an amount and it states a figure none of
them does (``kinds.new_figure_not_redundant``: "by 37.78% on one data set" is no repeat of "by 33.80% on
another"). The quick summary follows the question's shape:

- yes/no questions ("Does …", "Is …") and questions about an effect, a cause or an evaluation weigh
  findings by ``finding_weight``, and the opening is the deciding finding (``decisive_bonus`` for a
  sentence that states an effect, a comparison or a test); questions asking what something is or how it
  is done or used weigh them by ``descriptive_finding_weight`` only, and open with the most relevant
  sentence;
- comparisons (an aspect of type comparison with its two sides): a finding per side, then the sentence
  that states the contrast;
- multi-part questions (several main aspects): one part at a time, in the question's order;
  "Unknown based on provided sources." for a part with no finding.

The quick summary answers the question asked (:mod:`deepcite.answer.question_kind`,
:mod:`deepcite.answer.question_fit`): its value for the question also weighs the sentence's own support, the
question's word pairs it holds and the cue of the kind of answer asked for (a number with its unit for "how
many", "is a/refers to" for "what is", a comparative naming both sides); the relevant sentence bearing that cue
opens it. A heading, caption, table row or capitalised line never opens it, copyright and venue lines and
reference entries are never quoted (:mod:`deepcite.answer.lead_guard`); for an amount or a name the best-fitting
table row ends it (:mod:`deepcite.answer.table_rows`); a line says so when nothing chosen states an amount.

With ``elide_statistics`` a quoted sentence leaves out its parenthesised statistics ("(OR 1.08, 95% CI
1.02-1.14, p = 0.01)"): the finding reads as a statement, and the cited passage keeps the figures.

When nothing clears the threshold the part is "Unknown based on provided sources." Ties break on
citation id then sentence position, so output is deterministic.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from cachetools import LRUCache

from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.contract import bounded_summary, word_count
from deepcite.answer.decision import AnswerDecision, asks_a_verdict, decide, denial_first
from deepcite.answer.generators import require_any, require_selected, section_titles, subquery_chunks
from deepcite.answer.opening import best_opening, opening_evidence, ranked_by_opening
from deepcite.answer.question_fit import not_stated_note, with_cue, with_row
from deepcite.answer.question_kind import (
    AnswerKind,
    question_kind,
)
from deepcite.answer.selection import SentenceSelection
from deepcite.answer.sentence_scorer import SentenceScorer
from deepcite.answer.sentence_scores import (
    SentenceScores,
    aspect_target,
    cite,
    comparison_sides,
    findings_first,
    heading,
    write,
)
from deepcite.answer.table_rows import row_fit
from deepcite.config import AnswerSettings
from deepcite.models import QueryAspect, question_parts
from deepcite.retrieval.embedders import Embedder


@dataclass(frozen=True)
class _Summary:
    """A quick summary as written: its decision and text, the sentence scores it chose from and its pieces (the
    sentences of each part, in order), which the long answer reads to add what the summary had no room for."""

    decision: AnswerDecision
    text: str
    scores: SentenceScores
    pieces: list[list[int]]


def _fitting(scores: SentenceScores, order: Sequence[int], words: int, most: int) -> list[int]:
    """The leading sentences of ``order`` that fit in ``words`` words, at most ``most``: up to the first that does
    not fit."""
    kept: list[int] = []
    for i in order:
        n = word_count(scores.sentences[i].text)
        if len(kept) >= most or n > words:
            break
        kept.append(i)
        words -= n
    return kept


class ExtractiveGenerator:
    """Deterministic, offline :class:`deepcite.answer.generators.Generator` (see the module docstring)."""

    def __init__(self, embedder: Embedder, settings: AnswerSettings) -> None:
        self._settings = settings
        self._scorer = SentenceScorer(embedder, settings)
        self._select = SentenceSelection(settings)
        self._decided_lock = threading.Lock()
        self._decided: LRUCache[tuple[object, ...], _Summary] = LRUCache(maxsize=64)

    def summary(self, ctx: ResponseContext) -> str:
        """Up to ``extractive_summary_sentences`` sentences (``extractive_yes_no_summary_sentences`` for a yes/no
        question), shaped by the question (module docstring), written after the answer's decision
        (:mod:`deepcite.answer.decision`): the stating sentence first, a yes/no question's verdict before it, or a
        line saying the sources do not state it before the closest evidence; within the summary's contract
        (:mod:`deepcite.answer.contract`)."""
        return self.decided(ctx)[1]

    def decide(self, ctx: ResponseContext) -> AnswerDecision:
        """What the summary of ``ctx`` decided: stated or not, the stating sentence, a yes/no verdict."""
        return self.decided(ctx)[0]

    def decided(self, ctx: ResponseContext) -> tuple[AnswerDecision, str]:
        """The decision and the summary written from it."""
        written = self._written(ctx)
        return written.decision, written.text

    def _written(self, ctx: ResponseContext) -> _Summary:
        """The summary of ``ctx`` as written (the last few are kept: the pipeline asks for the decision, the
        summary and, for the long answer, what it chose)."""
        require_selected(ctx)
        key = (ctx.request_id, ctx.query, tuple((c.id, c.doc_id, c.chunk_id) for c in ctx.selected_chunks))
        with self._decided_lock:
            found = self._decided.get(key)
        if found is None:
            found = self._decide_and_write(ctx)
            with self._decided_lock:
                self._decided[key] = found
        return found

    def _decide_and_write(self, ctx: ResponseContext) -> _Summary:
        kind = question_kind(ctx.query) if self._settings.kinds.enabled else AnswerKind.OTHER
        scores, pieces = self._summary_choice(ctx, kind)
        s = self._settings
        if len(pieces) == 1 and s.decision.enabled:  # the denial opens as part of the decision
            pieces = [denial_first(ctx.query, kind, scores, pieces[0], s.decision.denial_open_fit_ratio)]
        chosen = [i for piece in pieces for i in piece]
        evidence = " ".join(t for c in ctx.selected_chunks for t in (c.text, c.title, c.file or ""))
        offered = (  # read only when its bar is set: it scores the opening candidates again
            opening_evidence(scores, self._select.eligible(scores, 0), ctx.query, kind, s)
            if s.decision.min_opening_evidence is not None
            else None
        )
        decision = decide(ctx.query, kind, scores, chosen, s, evidence, offered)
        if not s.decision.enabled:
            text = self._legacy_note(scores, pieces, kind) + " ".join(write(scores, p) for p in pieces)
        elif decision.stated:
            first = pieces[0][0] if pieces[0] else chosen[0]
            opening = decision.opening(cite(scores.sentences[first].text, scores.sentences[first].cite))
            # the other sentences in order; a part of a multi-part question the evidence says nothing of keeps
            # its unknown line
            rest = [([i for i in piece if i != first], not piece) for piece in pieces]
            text = " ".join([opening, *(write(scores, p) for p, empty in rest if p or empty)])
        else:
            closest = chosen[: s.decision.not_stated_closest] or self._closest(scores)
            line = decision.not_stated_line(closest=bool(closest))
            text = line + ("\n" + write(scores, closest) if closest else "")
        text = bounded_summary(text, s.length.summary_max_sentences, s.decision.summary_max_words)
        return _Summary(decision, text, scores, pieces)

    def _summary_choice(
        self, ctx: ResponseContext, kind: AnswerKind
    ) -> tuple[SentenceScores, list[list[int]]]:
        """The sentences the summary is written from, in order: one piece, or one per part of a multi-part
        question (an empty piece is a part the evidence says nothing of)."""
        length = self._settings.length
        limit = (
            length.extractive_yes_no_summary_sentences
            if kind is AnswerKind.YES_NO
            else length.extractive_summary_sentences
        )
        sides = comparison_sides(ctx.aspects)
        parts = [] if sides else question_parts(ctx.aspects)
        targets = [ctx.query, *(aspect_target(a) for a in (sides or parts))]
        main = ctx.aspects[0].aspect_type if ctx.aspects else None
        first = [
            findings_first(ctx.query, main),
            *([True] * len(sides)),
            *(findings_first(a.aspect, a.aspect_type) for a in parts),
        ]
        scores = self._scorer.score(targets, ctx.selected_chunks, first, self._keeps_statistics(kind))
        scores = with_cue(self._settings.kinds, scores, ctx.query, kind)
        learned = self._settings.opening.enabled and len(parts) <= 1
        answering = self._learned_opening(scores, ctx.query, kind) if learned else self._answering(scores)
        if sides:  # a finding per side and the contrast; the contrast first when it states the comparison
            chosen = self._select.compare(scores)
            if answering is not None:
                chosen = [answering, *(i for i in chosen if i != answering)]
            return scores, [chosen]
        if answering is not None:  # the sentence that states what was asked opens, its own study goes on
            eligible = self._select.eligible(scores, 0)
            if learned and self._settings.opening.ranks_rest:
                # a verdict is its sentence and the one that carries it on, no filling
                verdict = asks_a_verdict(ctx.query, kind)
                fill = self._settings.extractive.fill_ranked and not verdict
                room = 0 if verdict else self._settings.length.extractive_summary_room_sentences
                rest = self._select.pick_ranked(
                    scores, limit - 1 + room, eligible, answering, ctx.query, fill=fill
                )
            else:
                rest = self._select.pick(scores, 0, limit - 1, eligible, [answering], answering)
            lead = not learned
            chosen = self._with_row(
                scores, [answering, *rest[: limit - 1]], ctx.query, kind, limit, lead=lead
            )
            further = rest[limit - 1 :]
            if further:  # another table's rows leave them as they leave the first (with_row)
                whole = self._with_row(scores, [answering, *rest], ctx.query, kind, len(rest) + 1, lead=lead)
                further = [i for i in further if i in whole and i not in chosen]
            return scores, [self._within_room(scores, chosen, further)]
        if len(parts) > 1:
            per_part = max(1, limit // len(parts))
            pieces: list[list[int]] = []
            taken: list[int] = []
            for j in range(1, len(targets)):
                chosen = self._select.findings(scores, j, per_part, taken, lead=not taken)
                taken.extend(chosen)
                pieces.append(chosen)
            return scores, pieces
        chosen = self._select.findings(scores, 0, limit, lead=True)
        return scores, [self._with_row(scores, chosen, ctx.query, kind, limit)]

    def _with_row(
        self,
        scores: SentenceScores,
        chosen: list[int],
        question: str,
        kind: AnswerKind,
        limit: int,
        *,
        lead: bool = True,
    ) -> list[int]:
        """``chosen`` with the table row that fits the question (:func:`with_row`); with ``lead`` (an opening
        the opening model did not choose) and ``decision.row_leads`` the chosen row that fits the question best
        (``kinds.row_min_fit``) and bears the answer's cue (``kinds.cue_min``: a duration asked for, not a row's
        "2.5B") opens the summary, as the unit that states the amount or name asked for."""
        rowed = with_row(self._settings.kinds, scores, chosen, question, kind, limit)
        d = self._settings.decision
        if not (lead and d.enabled and d.row_leads) or kind not in (AnswerKind.AMOUNT, AnswerKind.NAME):
            return rowed
        fits = {i: row_fit(scores.sentences[i].text, question) for i in rowed}
        k = self._settings.kinds
        rows = [
            i
            for i in rowed
            if fits[i] >= k.row_min_fit and (scores.cue is None or scores.cue[i] >= k.cue_min)
        ]
        if not rows:
            return rowed
        best = max(rows, key=lambda i: (fits[i], -rowed.index(i)))
        return [best, *(i for i in rowed if i != best)]

    def _within_room(self, scores: SentenceScores, chosen: list[int], further: list[int]) -> list[int]:
        """``chosen``, then of ``further`` (``length.extractive_summary_room_sentences``, in order) those that fit
        in the room ``chosen`` leaves within ``length.summary_max_sentences`` and ``decision.summary_max_words``."""
        s = self._settings
        room = s.decision.summary_max_words - sum(word_count(scores.sentences[i].text) for i in chosen)
        return [*chosen, *_fitting(scores, further, room, s.length.summary_max_sentences - len(chosen))]

    def _closest(self, scores: SentenceScores) -> list[int]:
        """The closest evidence when no sentence is supported enough to be chosen (``extractive.support_threshold``):
        the most valuable sentences that may open and whose support reaches ``decision.closest_min_support``,
        ``decision.not_stated_closest`` of them, not repeating each other, so a not-stated summary still shows what
        the sources say nearest to the question; none for evidence off the question's topic."""
        d = self._settings.decision
        near = [
            i
            for i, x in enumerate(scores.sentences)
            if x.lead_fault is None and scores.support[i, 0] >= d.closest_min_support
        ]
        return self._select.pick(scores, 0, d.not_stated_closest, near, [], None)

    def _legacy_note(self, scores: SentenceScores, pieces: list[list[int]], kind: AnswerKind) -> str:
        """With the decision off (``decision.enabled``): the earlier note before a summary that may not answer."""
        return not_stated_note(self._settings.kinds, scores, [i for p in pieces for i in p], kind)

    def _learned_opening(self, scores: SentenceScores, question: str, kind: AnswerKind) -> int | None:
        """The opening model's first sentence (:mod:`deepcite.answer.opening`); None when none may open."""
        return best_opening(scores, self._select.eligible(scores, 0), question, kind, self._settings)

    def _answering(self, scores: SentenceScores) -> int | None:
        """The most valuable sentence that may lead, is relevant (``kinds.cue_min_relevance``) and bears the
        cue of the answer asked for (``kinds.cue_min``); None when none does."""
        if scores.cue is None:
            return None
        s = self._settings.kinds
        stating = [
            i
            for i in self._select.eligible(scores, 0)
            if scores.sentences[i].lead_fault is None
            and scores.cue[i] >= s.cue_min
            and scores.relevance[i, 0] >= s.cue_min_relevance
        ]
        return self._select.order(scores, 0, stating)[0] if stating else None

    def long_answer(self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None) -> str:
        """One ``## section`` per aspect; each sentence goes to the section it supports best, used once.

        A section has ``long_answer_sentences_per_aspect`` sentences, more when there are few sections, so the
        whole has at least ``long_answer_min_sentences`` (``long_answer_one_section_sentences`` for one
        section); a single section (the question itself) weighs its sentences by the fit to the question asked,
        as the summary does (:func:`with_cue`).

        Sections first take the sentences that support them more than any other section (of several
        sections, up to ``long_answer_sentences_per_aspect`` each); a section left with none then takes the
        best unused ones, before all fill up from the unused sentences over the support threshold; each
        section reads findings first. Without aspects or sub-questions: one untitled section.

        Before the sections, a paragraph of the sentences the opening model ranks next after the quick summary's
        that no section quotes (:meth:`_ranked_after_summary`), as many as fit in the words the sections leave of
        ``decision.long_answer_max_words``: they never push a section's sentence out.
        """
        require_selected(ctx)
        length = self._settings.length
        titles = section_titles(ctx, aspects)
        sections = max(1, len(titles))
        least = (
            length.long_answer_one_section_sentences if sections == 1 else length.long_answer_min_sentences
        )
        limit = max(length.long_answer_sentences_per_aspect, -(-least // sections))
        by_title = {a.aspect: a for a in (ctx.aspects if aspects is None else aspects)}
        targets = [aspect_target(by_title[t]) if t in by_title else t for t in titles] or [ctx.query]
        first = [findings_first(t, by_title[t].aspect_type if t in by_title else None) for t in titles] or [
            findings_first(ctx.query, None)
        ]
        kind = question_kind(ctx.query) if self._settings.kinds.enabled else AnswerKind.OTHER
        scores = self._scorer.score(targets, ctx.selected_chunks, first, self._keeps_statistics(kind))
        if (
            sections == 1 and self._settings.kinds.enabled
        ):  # one section answers the question itself: as asked
            scores = with_cue(self._settings.kinds, scores, ctx.query, kind)
        home = scores.support.argmax(axis=1)  # the section each sentence supports best
        rows = range(len(scores.sentences))
        picked: list[list[int]] = []
        used: list[int] = []
        # pass 1: each section's own sentences, several sections no more than the per-aspect share each
        own_limit = limit if sections == 1 else min(limit, length.long_answer_sentences_per_aspect)
        for j in range(len(targets)):
            own = [i for i in rows if home[i] == j]
            picked.append(self._select.findings(scores, j, own_limit, used, own, focused=False))
            used.extend(picked[j])
        for j in [j for j in range(len(targets)) if not picked[j]]:  # pass 2: a section with none of its own
            picked[j] = self._select.findings(
                scores, j, own_limit, used, focused=False
            )  # before others fill up
            used.extend(picked[j])
        for j in range(len(targets)):  # pass 3: fill up from what no section used
            if picked[j] and len(picked[j]) < limit:
                spare = self._select.eligible(scores, j, [i for i in rows if i not in used])
                more = self._select.pick(scores, j, limit - len(picked[j]), spare, [*used], None)
                picked[j].extend(more)
                used.extend(more)
        if not titles:
            body = [write(scores, picked[0])]
        else:
            body = [
                f"## {heading(title)}\n{write(scores, chosen)}"
                for title, chosen in zip(titles, picked, strict=True)
            ]
        # as many as fit in the room the sections leave within the long answer's words
        room = self._settings.decision.long_answer_max_words - word_count("\n\n".join(body))
        after = self._ranked_after_summary(ctx, scores, used)
        ranked = _fitting(scores, after, room, len(after))
        return "\n\n".join([write(scores, ranked), *body] if ranked else body)

    def _ranked_after_summary(
        self, ctx: ResponseContext, scores: SentenceScores, sections: Sequence[int]
    ) -> list[int]:
        """The sentences of ``scores`` (the long answer's) that the opening model ranks next after the quick
        summary's own, ``length.long_answer_ranked_sentences`` of them, none repeating another or the summary
        and none of the long answer's ``sections``: the likeliest answers neither had room for. None for a
        summary of several parts."""
        n = self._settings.length.long_answer_ranked_sentences
        if n < 1 or not self._settings.opening.enabled:
            return []
        summary = self._written(ctx)  # the summary's own choice, as it was written
        summary_scores, pieces = summary.scores, summary.pieces
        if len(pieces) != 1:
            return []
        s = self._settings
        pool = [i for i in self._select.eligible(summary_scores, 0) if i not in pieces[0]]
        here = {(x.cite, x.text): i for i, x in enumerate(scores.sentences) if i not in sections}
        kept: list[int] = []  # in the summary's scoring
        for k in ranked_by_opening(summary_scores, pool, ctx.query, s):
            if len(kept) >= n:
                break
            sentence = summary_scores.sentences[k]
            if (sentence.cite, sentence.text) in here and not self._select.redundant(
                summary_scores, k, [*pieces[0], *kept]
            ):
                kept.append(k)
        return [here[(summary_scores.sentences[k].cite, summary_scores.sentences[k].text)] for k in kept]

    def subanswer(self, ctx: ResponseContext, subquestion: str) -> str:
        """Up to ``subanswer_max_sentences`` sentences from the sub-question's own evidence, findings first."""
        require_any(ctx)
        scores = self._scorer.score(
            [subquestion], subquery_chunks(ctx, subquestion), [findings_first(subquestion, None)]
        )
        return write(scores, self._select.findings(scores, 0, self._settings.length.subanswer_max_sentences))

    def _keeps_statistics(self, kind: AnswerKind) -> bool:
        """Whether a question of ``kind`` is answered by figures, so its sentences keep their statistics."""
        return kind.value in self._settings.kinds.statistics_kept_for

    def prime(self, chunks: Sequence[ContextChunk]) -> None:
        """Embed the chunks' evidence sentences into the cache in one batch (:meth:`SentenceScorer.prime`)."""
        self._scorer.prime(chunks)
