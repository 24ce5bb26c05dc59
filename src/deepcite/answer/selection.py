"""Which of the evidence's scored sentences an extractive answer quotes (:mod:`deepcite.answer.extractive` writes
them): the ones supported enough to be quoted, an opening finding and the sentences that carry it on, the further
sentences in the opening model's order, a finding per side of a comparison, never a repeat."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from deepcite.answer.opening import ranked_by_opening
from deepcite.answer.sentence_scores import CONTRAST, SentenceScores
from deepcite.config import AnswerSettings


class SentenceSelection:
    """The answer stage's choice of sentences from :class:`SentenceScores`, by its settings."""

    def __init__(self, settings: AnswerSettings) -> None:
        self._settings = settings

    def findings(
        self,
        scores: SentenceScores,
        target: int,
        limit: int,
        taken: Sequence[int] = (),
        candidates: Iterable[int] | None = None,
        *,
        focused: bool = True,
        lead: bool = False,
    ) -> list[int]:
        """The opening finding for ``target``, then the sentences that carry it on
        (:mod:`deepcite.answer.extractive`'s docstring).

        ``focused`` (the summary, sub-answers) keeps to the opening's study and value; the long answer's
        sections are not focused: they take the best sentences over the threshold, findings first. With ``lead``
        the opening is one that may lead (:func:`~deepcite.answer.lead_guard.lead_fault`) when any is."""
        pool = [i for i in self.eligible(scores, target, candidates) if i not in taken]
        if not pool or limit < 1:
            return []
        s = self._settings
        strong = [
            i
            for i in pool
            if scores.findings_first[target]
            and scores.sentences[i].finding >= s.extractive.opening_min_finding
            and scores.relevance[i, target] >= s.extractive.opening_min_relevance
        ]
        if lead:  # the summary's first sentence: never a heading, caption or table row when another will do
            leads = [i for i in pool if scores.sentences[i].lead_fault is None]
            strong = [i for i in strong if scores.sentences[i].lead_fault is None]
            pool_first = leads or pool
        else:
            pool_first = pool
        opening = self.order(scores, target, strong or pool_first)[0]
        rest = self.pick(scores, target, limit - 1, pool, [*taken, opening], opening if focused else None)
        return [opening, *rest]

    def pick(
        self,
        scores: SentenceScores,
        target: int,
        limit: int,
        candidates: Iterable[int],
        taken: Sequence[int],
        opening: int | None,
    ) -> list[int]:
        """Further sentences, not redundant; after an ``opening``, only those valuable enough and from its
        study or as relevant to the target."""
        s = self._settings
        value, support = scores.value[:, target], scores.support[:, target]
        chosen: list[int] = []
        for i in self.order(scores, target, [i for i in candidates if i not in taken]):
            if len(chosen) >= limit or (
                opening is not None and value[i] < s.extractive.continue_ratio * value[opening]
            ):
                break
            other_study = (
                opening is not None
                and scores.findings_first[target]
                and scores.sentences[i].study != scores.sentences[opening].study
            )
            if other_study and support[i] < s.extractive.other_study_ratio * support[opening]:
                continue
            if not self.redundant(scores, i, [*taken, *chosen]):
                chosen.append(i)
        return chosen

    def pick_ranked(
        self,
        scores: SentenceScores,
        limit: int,
        candidates: Sequence[int],
        opening: int,
        question: str,
        *,
        fill: bool,
    ) -> list[int]:
        """After the opening model's ``opening``, further sentences in the order the model ranks them
        (:func:`~deepcite.answer.opening.ranked_by_opening`), each valuable enough (``continue_ratio`` of the
        opening's value) and not redundant; with ``fill`` (``extractive.fill_ranked``) the places left are then
        taken by the next sentences the model ranks, however valuable, so the summary holds the likeliest answers."""
        s = self._settings
        value = scores.value[:, 0]
        pool = [i for i in candidates if i != opening]
        ranked = ranked_by_opening(scores, pool, question, s)
        floor = s.extractive.continue_ratio * value[opening]
        order = [i for i in ranked if value[i] >= floor]
        if fill:
            order += [i for i in ranked if value[i] < floor]
        chosen: list[int] = []
        for i in order:
            if len(chosen) >= limit:
                break
            if not self.redundant(scores, i, [opening, *chosen]):
                chosen.append(i)
        return chosen

    def redundant(self, scores: SentenceScores, i: int, chosen: Sequence[int]) -> bool:
        """Whether sentence ``i`` repeats one of ``chosen`` (cosine ``redundancy_threshold``, or the one holds the
        other: a lead-in run on into the sentence after it, :meth:`~deepcite.models.Chunk.answer_sentences`)
        without stating a new figure asked for (:meth:`new_figure`)."""
        threshold = self._settings.extractive.redundancy_threshold
        repeats = any(
            float(scores.vectors[i] @ scores.vectors[k]) >= threshold or _holds(scores, i, k) for k in chosen
        )
        return repeats and not self.new_figure(scores, i, chosen)

    @staticmethod
    def new_figure(scores: SentenceScores, i: int, chosen: Sequence[int]) -> bool:
        """Whether sentence ``i`` states a figure asked for (an amount question's) that none of ``chosen``
        states: the same words about another data set or setting are another answer, not a repeat."""
        if scores.figures is None or not scores.figures[i]:
            return False
        stated = set().union(*(scores.figures[k] for k in chosen)) if chosen else set()
        return not scores.figures[i] <= stated

    def compare(self, scores: SentenceScores) -> list[int]:
        """A finding per side (targets 1 and 2), then the sentence stating the contrast (target 0).

        A side is stated by a sentence that does not itself draw the contrast, when there is one."""
        contrast = [i for i, x in enumerate(scores.sentences) if CONTRAST.search(x.text)]
        chosen: list[int] = []
        for side in (1, 2):
            plain = [i for i in range(len(scores.sentences)) if i not in contrast]
            chosen.extend(
                self.findings(scores, side, 1, chosen, plain) or self.findings(scores, side, 1, chosen)
            )
        stated = [i for i in self.eligible(scores, 0, contrast) if i not in chosen]
        return chosen + self.order(scores, 0, stated)[:1]

    def eligible(
        self, scores: SentenceScores, target: int, candidates: Iterable[int] | None = None
    ) -> list[int]:
        """The sentences of ``candidates`` (all by default) whose support for ``target`` reaches
        ``extractive.support_threshold``: the ones that may be quoted."""
        pool = range(len(scores.sentences)) if candidates is None else candidates
        return [i for i in pool if scores.support[i, target] >= self._settings.extractive.support_threshold]

    @staticmethod
    def order(scores: SentenceScores, target: int, pool: Iterable[int]) -> list[int]:
        """``pool`` from the most valuable sentence for ``target`` down (the earlier passage and place on a tie)."""
        value, sentences = scores.value[:, target], scores.sentences
        return sorted(pool, key=lambda i: (-value[i], sentences[i].cite, sentences[i].position))


def _holds(scores: SentenceScores, i: int, k: int) -> bool:
    """Whether sentences ``i`` and ``k`` quote one passage and one's text holds the other's."""
    a, b = scores.sentences[i], scores.sentences[k]
    return a.cite == b.cite and (a.text.strip() in b.text or b.text.strip() in a.text)
