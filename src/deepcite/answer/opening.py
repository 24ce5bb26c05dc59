"""The quick summary's first sentence: of the sentences that may open it, the one a fitted linear model scores
highest for stating what was asked.

The writer's own order (a sentence's value for the question, :mod:`deepcite.answer.extractive`) weighs a few
signals by hand. The opening model weighs more of what the writer already knows of each sentence (its value,
relevance, support and own fit, the question's word pairs it holds, the answer's cue, a table row's fit, its
passage's place in the context, its length and role) by weights fitted on the dev sets
(``answer.opening``, :class:`~deepcite.config.answer.AnswerOpeningSettings`). A sentence may open the summary
when it is quotable for the question and has no lead fault, or is a table row that fits the question
(:func:`opening_candidates`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deepcite.answer.findings import states_an_aim
from deepcite.answer.lead_guard import CAPITALISED, CODE, NO_VERB, QUESTION
from deepcite.answer.question_kind import AnswerKind, phrase_overlaps
from deepcite.answer.sentence_scores import SentenceScores
from deepcite.answer.table_rows import caption_mismatch, is_row, row_coverage, row_fit
from deepcite.config.answer import AnswerSettings


def opening_candidates(
    scores: SentenceScores, eligible: Sequence[int], question: str, kind: AnswerKind, settings: AnswerSettings
) -> list[int]:
    """The sentences of ``eligible`` that may open the summary: no lead fault, or (``decision.row_leads``) a line
    that fits the question as a table row does (:func:`row_fit`, or it and its caption hold
    ``kinds.row_open_coverage`` of the question's terms), whose caption is not about something else, and that is
    no question of the source's own nor code. For a question that asks for
    findings (a yes/no question), not an aim, a method or background (a structured abstract's label or its own
    words say so, and its finding score is under ``extractive.opening_min_finding``) while another may; a
    document's heading does not bar it (a manual's "Introduction" or "4.1 Models and methods" is where its
    statements are; the opening model weighs the section's role among its features); for a kind whose answer the
    decision requires to bear its cue (``decision.require_cue_for``: a number for an amount), one bearing it
    (``kinds.cue_min``) while one does."""
    fragment = settings.decision.fragment_open_relevance
    may = [
        i
        for i in eligible
        if scores.sentences[i].lead_fault is None
        or (
            scores.sentences[i].lead_fault in (NO_VERB, CAPITALISED)
            and (
                (scores.cue is not None and scores.cue[i] >= settings.kinds.cue_min)
                or (  # a bullet without a verb, not a line of capitals (a heading, a court's caption)
                    kind is AnswerKind.YES_NO
                    and settings.decision.fragment_opens_yes_no
                    and scores.sentences[i].lead_fault == NO_VERB
                )
            )
            and scores.relevance[i, 0] >= fragment
        )
        or (
            settings.decision.row_leads
            and scores.sentences[i].lead_fault not in (QUESTION, CODE)
            and (
                row_fit(scores.sentences[i].text, question) > 0
                or row_coverage(scores.sentences[i].text, scores.sentences[i].caption, question)
                >= settings.kinds.row_open_coverage
            )
            and not caption_mismatch(scores.sentences[i].caption, question, scores.sentences[i].text)
        )
    ]
    if scores.findings_first[0]:
        floor = settings.extractive.opening_min_finding
        may = [
            i
            for i in may
            if not (
                (scores.sentences[i].role_labelled or states_an_aim(scores.sentences[i].text))
                and scores.sentences[i].finding < floor
            )
        ] or may
    if scores.cue is not None and kind.value in settings.decision.require_cue_for:
        may = [i for i in may if scores.cue[i] >= settings.kinds.cue_min] or may
    return may


# the features the weights of ``answer.opening`` are named after, in this order
FEATURES = (
    "value",
    "below_best",
    "relevance",
    "support",
    "alone",
    "fit",
    "finding",
    "row_fit",
    "phrase",
    "cued",
    "may_lead",
    "table_row",
    "context_rank",
    "front_matter",
    "role_known",
    "log_words",
    "decisive",
    "row_coverage",
)


def opening_features(
    scores: SentenceScores, candidates: Sequence[int], question: str, cue_min: float
) -> np.ndarray:
    """Each candidate's features (:data:`FEATURES`) for the question (target 0): (candidates, features)."""
    idx = list(candidates)
    sentences = [scores.sentences[i] for i in idx]
    texts = [x.text for x in sentences]
    # the word pairs weigh by their rarity among all the evidence's sentences, not the candidates alone
    phrase = phrase_overlaps([x.text for x in scores.sentences], question)[idx]
    value = scores.value[idx, 0]
    n = len(idx)
    columns = [
        value,
        value - value.max(),
        scores.relevance[idx, 0],
        scores.support[idx, 0],
        scores.alone[idx, 0] if scores.alone is not None else np.zeros(n),
        scores.fit[idx, 0] if scores.fit is not None else np.zeros(n),
        [x.finding for x in sentences],
        [row_fit(t, question) for t in texts],
        phrase,
        (scores.cue[idx] if scores.cue is not None else np.full(n, -1.0)) >= cue_min,
        [x.lead_fault is None for x in sentences],
        [is_row(t) for t in texts],
        [1.0 / x.cite for x in sentences],
        [x.opening for x in sentences],
        [x.role_known for x in sentences],
        np.log1p([len(t.split()) for t in texts]),
        [x.decisive for x in sentences],
        [row_coverage(x.text, x.caption, question) if is_row(x.text) else 0.0 for x in sentences],
    ]
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in columns])


def opening_scores(
    scores: SentenceScores, candidates: Sequence[int], question: str, settings: AnswerSettings
) -> np.ndarray:
    """Each candidate's opening score for the question (target 0), in the order of ``candidates``: the linear
    model's (``answer.opening``), and for its ``answer.reader.top_k`` best, the sentence reader's probability that
    the sentence states the answer times ``answer.reader.weight`` (:mod:`deepcite.answer.reader`)."""
    linear = _linear(scores, candidates, question, settings)
    if scores.reading is not None and settings.reader.weight > 0 and len(linear):
        top = np.argsort(-linear, kind="stable")[: settings.reader.top_k]
        linear[top] += settings.reader.weight * scores.reading([candidates[k] for k in top])
    return linear


def _linear(
    scores: SentenceScores, candidates: Sequence[int], question: str, settings: AnswerSettings
) -> np.ndarray:
    """The linear opening model's score of each candidate (``answer.opening``)."""
    vector = np.array([getattr(settings.opening, name) for name in FEATURES])
    return opening_features(scores, candidates, question, settings.kinds.cue_min) @ vector


def ranked_by_opening(
    scores: SentenceScores, pool: Sequence[int], question: str, settings: AnswerSettings
) -> list[int]:
    """``pool`` from the highest opening score down (the earlier on a tie): after the opening, the summary's
    further sentences in the order the same model says they state what was asked."""
    if not pool:
        return []
    ranked = opening_scores(scores, pool, question, settings)
    return [pool[k] for k in np.argsort(-ranked, kind="stable")]


def best_opening(
    scores: SentenceScores, eligible: Sequence[int], question: str, kind: AnswerKind, settings: AnswerSettings
) -> int | None:
    """The candidate with the highest opening score (the earliest on a tie); None when none may open."""
    candidates = opening_candidates(scores, eligible, question, kind, settings)
    if not candidates:
        return None
    ranked = opening_scores(scores, candidates, question, settings)
    return candidates[int(np.argmax(ranked))]


def opening_evidence(
    scores: SentenceScores, eligible: Sequence[int], question: str, kind: AnswerKind, settings: AnswerSettings
) -> float | None:
    """How strongly the evidence offers a sentence that states what was asked: the opening model's best linear
    score among the candidates plus ``decision.evidence_candidates_weight`` times log(1 + their number) (the
    decision's ``decision.min_opening_evidence``); None when no sentence may open."""
    candidates = opening_candidates(scores, eligible, question, kind, settings)
    if not candidates:
        return None
    best = float(_linear(scores, candidates, question, settings).max())
    return best + settings.decision.evidence_candidates_weight * float(np.log1p(len(candidates)))
