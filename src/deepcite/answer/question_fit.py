"""The summary's fit to the question asked (used by :mod:`deepcite.answer.extractive`): each sentence's value for
the question blended with its own support, the question's word pairs and the cue of the kind of answer asked
for; the table row that ends the summary of an amount or a name; and the note that says when the sentences
chosen do not state what was asked. Weights: :class:`deepcite.config.AnswerSettings` ``kinds.*``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from deepcite.answer.question_kind import (
    AnswerKind,
    answer_cue,
    figures,
    phrase_overlaps,
    states_kind,
)
from deepcite.answer.sentence_scores import SentenceScores
from deepcite.answer.table_rows import caption_mismatch, row_coverage, row_fit
from deepcite.config.answer import AnswerKindSettings
from deepcite.front_matter import asks_about_source


def with_row(
    settings: AnswerKindSettings,
    scores: SentenceScores,
    chosen: list[int],
    question: str,
    kind: AnswerKind,
    limit: int,
) -> list[int]:
    """For an amount or a name: ``chosen`` with the table row that fits the question best
    (:func:`~deepcite.answer.table_rows.row_fit` at least ``kinds.row_min_fit``; the best by value plus
    ``kinds.row_fit_weight`` times its fit plus ``kinds.row_coverage_weight`` times the share of the question's
    terms it and its table's caption hold, less ``kinds.row_caption_mismatch`` when that caption names only
    what the question does not) in its last
    place after the opening, when it is not chosen already; another table's rows (that caption test) leave."""
    if kind not in (AnswerKind.AMOUNT, AnswerKind.NAME) or not chosen:
        return chosen
    fits = [(row_fit(x.text, question), i) for i, x in enumerate(scores.sentences)]
    rows = [(f, i) for f, i in fits if f >= settings.row_min_fit]
    if not rows:
        return chosen
    weight, held = settings.row_fit_weight, settings.row_coverage_weight
    x = scores.sentences

    def rank(row: tuple[float, int]) -> tuple[float, int]:
        fit, i = row
        other = settings.row_caption_mismatch if caption_mismatch(x[i].caption, question, x[i].text) else 0.0
        return scores.value[i, 0] + weight * fit + held * row_coverage(
            x[i].text, x[i].caption, question
        ) - other, -i

    best = max(rows, key=rank)[1]
    # beside the row that fits, a row of another table (its caption names only what the question does not) is
    # a figure of something else
    chosen = [
        i
        for i in chosen
        if i == best or i == chosen[0] or not caption_mismatch(x[i].caption, question, x[i].text)
    ]
    if best in chosen:
        return chosen
    return [*chosen[: max(1, limit - 1)], best]


def with_cue(
    settings: AnswerKindSettings, scores: SentenceScores, question: str, kind: AnswerKind
) -> SentenceScores:
    """``scores`` with each sentence's value for the question (target 0) blended with what answers it as
    asked: its own support without its study's share (``kinds.own_weight``, for a question that does not ask
    for findings), the question's word pairs it holds (``kinds.phrase_weight``) and the cue of the kind of
    answer asked for (``kinds.cue_weight``; none for a kind without a cue). A yes/no question (also one
    without its verb: "The nurse cystoscopist: a feasible option?") keeps its findings-first value blended with
    the word pairs it holds by ``kinds.findings_phrase_weight``, or ``kinds.unlabelled_phrase_weight`` for a
    sentence whose section says nothing of its role (no results or methods label to tell a finding by: "Is …
    a public holiday?" in a web page, "It is not a public holiday"), and so does one that asks for findings
    (:func:`~deepcite.answer.sentence_scores.findings_first`), with the cue and the word pairs for a
    comparison. A question about the source itself (who wrote it, when it was published:
    :func:`~deepcite.front_matter.asks_about_source`) adds ``kinds.front_matter_weight`` to a front-matter
    sentence bearing the cue ("Posted by Alon Zakai."), which may then lead."""
    if not scores.sentences or scores.alone is None or not settings.enabled:
        return scores
    s = settings
    cued = kind not in (AnswerKind.OTHER, AnswerKind.YES_NO)
    findings = bool(scores.findings_first[0])
    texts = [x.text for x in scores.sentences]
    if kind is AnswerKind.YES_NO or (findings and not cued):
        unlabelled = np.array([not x.role_known for x in scores.sentences], dtype=np.float32)
        w = s.findings_phrase_weight + (s.unlabelled_phrase_weight - s.findings_phrase_weight) * unlabelled
        if w.any():
            scores.value[:, 0] = (1.0 - w) * scores.value[:, 0] + w * phrase_overlaps(texts, question)
        return scores
    phrase = phrase_overlaps(texts, question)
    cue = np.array([answer_cue(kind, t, question, s) for t in texts], dtype=np.float32) if cued else None
    own = 0.0 if findings else s.own_weight
    pairs = s.phrase_weight
    mix = 1.0 - own - pairs - (s.cue_weight if cued else 0.0)
    value = mix * scores.value[:, 0] + own * scores.alone[:, 0] + pairs * phrase
    scores.value[:, 0] = value + (s.cue_weight * cue if cue is not None else 0.0)
    sentences = scores.sentences
    if cue is not None and kind in (AnswerKind.TIME, AnswerKind.NAME) and asks_about_source(question):
        front = [x.opening and c >= s.cue_min for x, c in zip(sentences, cue, strict=True)]
        scores.value[:, 0] += s.front_matter_weight * np.array(front, dtype=np.float32)
        # a byline or a date line answers this question: its capitals or its missing verb do not bar it
        sentences = [replace(x, lead_fault=None) if f else x for x, f in zip(sentences, front, strict=True)]
    stated = None
    if kind is AnswerKind.AMOUNT and s.new_figure_not_redundant:
        stated = [figures(t, question) for t in texts]
    return replace(scores, sentences=sentences, cue=cue, figures=stated)


def not_stated_note(
    settings: AnswerKindSettings, scores: SentenceScores, chosen: list[int], kind: AnswerKind
) -> str:
    """A line that says so when the first sentence chosen may not lead (a table row, a caption), or when
    the question asks for what a cue alone tells (an amount) and no chosen sentence bears it; else ""."""
    if not chosen or not settings.say_not_stated:
        return ""
    if scores.sentences[chosen[0]].lead_fault is not None:
        return "No sentence of the sources states it; the closest passages read:\n"
    cue_min = settings.cue_min
    if scores.cue is not None and states_kind(kind) and not any(scores.cue[i] >= cue_min for i in chosen):
        return f"No passage found states {kind.asked_for}; the closest read:\n"
    return ""
