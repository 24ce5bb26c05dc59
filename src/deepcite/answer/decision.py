"""The answer stage decides before it writes: does the evidence state what was asked, which sentence states
it, and for a yes/no question, which way.

deepcite's idea here: a reader trusts an answer whose first line answers, or says plainly that the sources do
not. The offline writer (:mod:`deepcite.answer.extractive`) chooses the summary's sentences; :func:`decide`
reads its opening sentence against the question:

- *stated* when a chosen sentence's own fit to the question (lexical and embedding, without its study's share)
  reaches ``decision.min_fit`` and, for a kind of question whose answer has a mark of its own (a number for
  "how many", a date for "when": ``decision.require_cue_for``), a chosen sentence bears it, and for an amount
  asked in a unit ("how long does it take", "how much did it cost": ``asked_units``) in that unit, and for a
  question that names a year ("Who ran IBM in 2010?") with ``decision.require_years_asked`` (off) a chosen sentence's
  passage names it, and for a question that names something ("… as a pet in Canada?") with
  ``decision.require_names_asked`` the context mentions it (:func:`names_asked`), and for a question that asks
  no verdict the evidence offers an opening strongly enough (the opening model's best score and how many sentences
  may open: ``decision.min_opening_evidence``, :func:`deepcite.answer.opening.opening_evidence`);
- else *not stated*: the summary opens with :meth:`AnswerDecision.not_stated_line` and quotes the closest
  evidence after it, marked as such;
- a yes/no question (also one comparing without offering a choice: "Is A better than B?") gets a verdict: "no" when the stating sentence is negated and the question is not (or the
  other way round), else "yes"; a chosen sentence that denies and fits nearly as well as the opening
  (``decision.denial_open_fit_ratio``) opens instead (:func:`denial_first`); "the sources disagree" when a summary
  sentence of another document (``decision.disagree_shown_only``) that fits the question almost as well
  (``decision.disagree_fit_ratio``) and as a stating sentence does (``decision.disagree_min_fit``) says the opposite.

    decision = decide(question, kind, scores, chosen, settings)
    decision.status          # AnswerStatus.STATED
    decision.verdict         # Verdict.NO
    decision.opening("It is not a public holiday [2].")   # "No: It is not a public holiday [2]."

The response carries the decision (``AnswerResult.decision``), so every surface can say which it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel

from deepcite.answer.asked_units import asked_units, counted_noun, names_counted, states_unit
from deepcite.answer.negation import opposes
from deepcite.answer.prompts import not_stated
from deepcite.answer.question_kind import AnswerKind, asks_yes_or_no, states_amount
from deepcite.answer.question_words import MONTH_NAMES
from deepcite.answer.sentence_scores import SentenceScores
from deepcite.config import AnswerSettings

_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
# a word of a question; a name is one capitalised or holding a digit, after the question's first word
_QUESTION_WORD = re.compile(r"[A-Za-z0-9][\w'\u2019.-]*[A-Za-z0-9]|[A-Za-z]")
# … and not a question word, nor a month or a day of the week ("in May 2007" names a date, not "May")
_NOT_NAMES = frozenset(
    {"I", "A", "An", "The", "What", "Which", "Who", "How", "When", "Where", "Why", "According"}
    | {m.capitalize() for m in MONTH_NAMES.split("|")}
    | {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)
# "I" in a contraction ("I'm", "I've") is no name
_CONTRACTED_I = re.compile(r"I['\u2019](?:m|ve|d|ll)")
# a name is found when the evidence holds its first letters ("American" in "North America", "Turtles")
_NAME_STEM_DROP = 3
_NAME_STEM_MIN = 4

# how a yes/no summary's first sentence opens (Verdict.label and a colon): the citation check reads the sentence
# after it
VERDICT_OPENING = re.compile(r"^(?:Yes|No|The sources disagree):\s+")


class AnswerStatus(StrEnum):
    """Whether the evidence states what was asked."""

    STATED = "stated"
    NOT_STATED = "not_stated"


class Verdict(StrEnum):
    """A yes/no question's answer as the evidence gives it."""

    YES = "yes"
    NO = "no"
    DISAGREE = "sources_disagree"

    @property
    def label(self) -> str:
        """How a summary opens with it ("Yes", "No", "The sources disagree")."""
        return {"yes": "Yes", "no": "No", "sources_disagree": "The sources disagree"}[self.value]


class AnswerDecision(BaseModel):
    """What the answer stage decided before writing (module docstring); the scores that decided it."""

    status: AnswerStatus
    kind: AnswerKind  # the kind of answer the question asks for
    sentence: str = ""  # the evidence sentence that states the answer, as quoted; "" when not stated
    cite: int | None = None  # the display id of its passage
    verdict: Verdict | None = None  # a yes/no question's, when stated
    fit: float = 0.0  # the best own fit to the question of the sentences chosen
    cue: float | None = None  # its answer-type cue, for a kind of question with one
    reason: str = ""  # why, in a reader's words

    @property
    def stated(self) -> bool:
        return self.status is AnswerStatus.STATED

    def not_stated_line(self, closest: bool = True) -> str:
        """The line a not-stated summary opens with: the closest evidence follows it (``closest``), else it is the
        whole summary."""
        said = not_stated(self.kind.asked_for)
        return f"{said}; the closest passages say:" if closest else f"{said}."

    def opening(self, cited_sentence: str) -> str:
        """The summary's first sentence: ``cited_sentence`` after the verdict, for a yes/no question."""
        if self.verdict is None:
            return cited_sentence
        return f"{self.verdict.label}: {cited_sentence}"


def names_asked(question: str) -> list[str]:
    """The names ``question`` asks about: its words after the first that are capitalised, hold a digit and a
    letter ("T5") or are a year ("in 2017"), each part of a hyphenated word apart ("NLP-powered" names "NLP"), a
    possessive's "'s" and an acronym's plural "s" off ("O'Reilly's", "PDFs")."""
    names: list[str] = []
    for word in _QUESTION_WORD.findall(question)[1:]:
        # a possessive's "'s" off, and an acronym's plural "s" ("PDFs" is found as "PDF")
        word = re.sub(r"(?<=[A-Z0-9])s$", "", re.sub(r"['\u2019]s$", "", word).rstrip("."))
        for part in word.split("-"):
            if (
                part
                and part not in _NOT_NAMES
                and not _CONTRACTED_I.fullmatch(part)
                and (
                    part[0].isupper()
                    or (re.search(r"\d", part) and re.search("[A-Za-z]", part))
                    or _YEAR.fullmatch(part)
                )
            ):
                names.append(part)
    return names


def _unmentioned(names: Sequence[str], evidence: str) -> list[str]:
    """The ``names`` that ``evidence`` (lower-case) does not mention, by their first letters."""
    return [
        name
        for name in names
        if name.lower()[: max(_NAME_STEM_MIN, len(name) - _NAME_STEM_DROP)] not in evidence
    ]


def decide(
    question: str,
    kind: AnswerKind,
    scores: SentenceScores,
    chosen: Sequence[int],
    settings: AnswerSettings,
    evidence: str = "",
    opening_evidence: float | None = None,
) -> AnswerDecision:
    """The decision for a summary that opens with ``chosen[0]`` (module docstring); ``evidence`` is the context's
    text (passages, titles, file names), for the names the question asks about; ``opening_evidence`` how strongly
    the evidence offers an opening (:func:`deepcite.answer.opening.opening_evidence`)."""
    if not chosen or scores.fit is None:
        return AnswerDecision(
            status=AnswerStatus.NOT_STATED,
            kind=kind,
            reason="no evidence sentence bears on the question",
        )
    first = chosen[0]
    fit = max(float(scores.fit[i, 0]) for i in chosen)  # a table row that leads fits less than its prose
    cue = float(scores.cue[first]) if scores.cue is not None else None
    sentence = scores.sentences[first]
    missing = _missing(question, kind, scores, chosen, fit, settings, evidence.lower(), opening_evidence)
    if missing is not None:
        return AnswerDecision(
            status=AnswerStatus.NOT_STATED, kind=kind, fit=round(fit, 3), cue=cue, reason=missing
        )
    verdict = _verdict(question, scores, chosen, settings) if asks_a_verdict(question, kind) else None
    return AnswerDecision(
        status=AnswerStatus.STATED,
        kind=kind,
        sentence=sentence.text,
        cite=sentence.cite,
        verdict=verdict,
        fit=round(fit, 3),
        cue=cue,
        reason="a sentence of the evidence states it",
    )


def _missing(
    question: str,
    kind: AnswerKind,
    scores: SentenceScores,
    chosen: Sequence[int],
    fit: float,
    settings: AnswerSettings,
    evidence: str,
    opening_evidence: float | None,
) -> str | None:
    """Why the chosen sentences do not state the answer (module docstring), or None when they do."""
    d = settings.decision
    if fit < d.min_fit:
        return f"the closest sentence fits the question {fit:.2f}, under {d.min_fit:.2f}"
    if (
        d.min_opening_evidence is not None
        and opening_evidence is not None
        and opening_evidence < d.min_opening_evidence
        and not asks_a_verdict(question, kind)
    ):
        return f"no sentence reads as its answer (opening evidence {opening_evidence:.2f}, under {d.min_opening_evidence:.2f})"
    if d.require_names_asked and evidence and (absent := _unmentioned(names_asked(question), evidence)):
        return f"no passage found mentions {', '.join(absent)}"
    texts = [scores.sentences[i].text for i in chosen]
    if (
        kind.value in d.require_cue_for
        and scores.cue is not None
        and not any(
            scores.cue[i] >= settings.kinds.cue_min
            and (kind is not AnswerKind.AMOUNT or states_amount(text, question))
            for i, text in zip(chosen, texts, strict=True)
        )
    ):
        return f"no sentence found holds {kind.asked_for}"
    noun = counted_noun(question) if kind is AnswerKind.AMOUNT and d.require_counted_noun else None
    if noun and not any(names_counted(text, noun) for text in texts):
        return f"no sentence found counts {noun}"
    units = asked_units(question) if kind is AnswerKind.AMOUNT and d.require_unit_asked else None
    if units is not None and not any(states_unit(text, units) for text in texts):
        return "no sentence found states a number in the unit asked for"
    if d.require_years_asked and (years := _years(question)):
        passages = {scores.sentences[i].cite for i in chosen}
        said = " ".join(x.text for x in scores.sentences if x.cite in passages)
        if absent := sorted(years - _years(said)):
            return f"no passage found speaks of {', '.join(absent)}"
    return None


def denial_first(
    question: str, kind: AnswerKind, scores: SentenceScores, chosen: Sequence[int], ratio: float
) -> list[int]:
    """``chosen`` for a yes/no question, with its first later sentence that says the opposite of what the question
    asks (:func:`~deepcite.answer.negation.opposes`) and fits the question at least ``ratio`` of the opening's fit moved to open it: a
    sentence that denies takes a stance where an on-topic one may take none ("Do not number the pages in the
    camera-ready version." for "Should the pages of the final paper be numbered?"). Any other question, or
    ``ratio`` above 1, keeps ``chosen`` as it is."""
    order = list(chosen)
    if not asks_a_verdict(question, kind) or len(order) < 2 or scores.fit is None or ratio > 1:
        return order
    if opposes(scores.sentences[order[0]].text, question):
        return order  # the opening denies already
    bar = ratio * float(scores.fit[order[0], 0])
    for i in order[1:]:
        if opposes(scores.sentences[i].text, question) and float(scores.fit[i, 0]) >= bar:
            return [i, *(j for j in order if j != i)]
    return order


def asks_a_verdict(question: str, kind: AnswerKind) -> bool:
    """Whether ``question`` is answered yes or no: a yes/no question, or one comparing without offering a choice."""
    return kind is AnswerKind.YES_NO or asks_yes_or_no(question)


def _years(text: str) -> set[str]:
    """The years ``text`` names ("in 2010", "the 2013 census")."""
    return set(_YEAR.findall(text))


def _verdict(
    question: str, scores: SentenceScores, chosen: Sequence[int], settings: AnswerSettings
) -> Verdict:
    """Yes or no as the stating sentence (``chosen[0]``) says it; the sources disagree when another document's
    sentence, one of the summary's ``chosen`` (``decision.disagree_shown_only``), that fits the question as well
    (``decision.disagree_fit_ratio`` of the opening's fit, and ``decision.disagree_min_fit``) says the opposite. A
    sentence without a negation reads as "yes", so the bar keeps a weak, off-topic sentence from disputing a weak
    opening."""
    first = chosen[0]
    denies = opposes(scores.sentences[first].text, question)
    d = settings.decision
    if d.disagree_fit_ratio > 0 and scores.fit is not None:
        bar = max(d.disagree_fit_ratio * float(scores.fit[first, 0]), d.disagree_min_fit)
        threshold = settings.extractive.support_threshold
        pool = chosen if d.disagree_shown_only else range(len(scores.sentences))
        for i in pool:
            x = scores.sentences[i]
            if (
                i != first
                and x.study != scores.sentences[first].study
                and float(scores.fit[i, 0]) >= bar
                and float(scores.support[i, 0]) >= threshold
                and opposes(x.text, question) != denies
            ):
                return Verdict.DISAGREE
    return Verdict.NO if denies else Verdict.YES
