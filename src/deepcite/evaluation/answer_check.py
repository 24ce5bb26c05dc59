"""Does an answer state the answer? A check of written answers against verbatim gold phrases.

The check set's questions (:mod:`deepcite.evaluation.documents`) carry a short answer phrase copied from the
source (or several that must occur together, such as a table row's label and value). An answer *states* it
when every phrase occurs in the answer's text once both are brought to one form: citation markers ("[3]",
"[1-2]") removed, NFKC, case folded, every run of characters other than letters, digits and "%" made one
space (so "84.6 secs vs 115.6 secs" matches however the writer spaced or punctuated it), and the phrase
bounded by word edges ("76" is not found in "1976"). A phrase copied from a table row ("Koyukuk 20 100% 17", its
cells as a plain extraction runs them together) is also stated by the row as deepcite's readers give it, each value
after its column's header ("Refuge: Koyukuk | Current surveys: 20 | Reporting rate: 100% | …"): with ``table``, its
words may each be followed by up to :data:`TABLE_LABEL_WORDS` words before the next.

    states_answer("DPR beats BM25 by 9%-19% [2].", ["9%-19%"])        # True
    tally = AnswerCheck()
    tally.add("table", summary, long_answer, ["Newsroom", "1,212,739"])
    tally.rates()   # {"summary": {"all": 0.5, "table": …}, "summary_or_long": {…}, "questions": {…}}

:func:`states_answer` is the one scoring function; :class:`AnswerCheck` tallies it per question kind for the
quick summary alone and for the summary and long answer together.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from deepcite.answer.citations import CITATION_RE
from deepcite.answer.contract import sentence_units, word_count
from deepcite.answer.decision import AnswerDecision, Verdict
from deepcite.evaluation.documents import CheckQuestion

_NOT_WORD = re.compile(r"[^\w%]+")
TABLE_LABEL_WORDS = 4  # a column header between two cells of a table row ("not completed surveys")


def answer_form(text: str) -> str:
    """``text`` in the form phrases are compared in (module docstring), padded with one space each side."""
    text = CITATION_RE.sub(" ", unicodedata.normalize("NFKC", text)).casefold()
    return f" {' '.join(_NOT_WORD.sub(' ', text).replace('_', ' ').split())} "


def states_answer(text: str, phrases: str | Sequence[str], *, table: bool = False) -> bool:
    """Whether ``text`` holds every gold phrase, in the compared form; False when no phrase has a word. With
    ``table``, a phrase's words may be apart by a column header each (module docstring)."""
    wanted = [phrases] if isinstance(phrases, str) else list(phrases)
    forms = [answer_form(p) for p in wanted]
    if not forms or any(not f.strip() for f in forms):
        return False
    haystack = answer_form(text)
    if not table:
        return all(form in haystack for form in forms)
    words = haystack.split()
    return all(form in haystack or _in_row(form.split(), words) for form in forms)


def _in_row(phrase: list[str], words: list[str]) -> bool:
    """Whether ``phrase``'s words occur in ``words`` in order, each at most :data:`TABLE_LABEL_WORDS` words
    after the one before."""
    for start in (i for i, word in enumerate(words) if word == phrase[0]):
        at = start
        for word in phrase[1:]:
            ahead = words[at + 1 : at + 2 + TABLE_LABEL_WORDS]
            if word not in ahead:
                break
            at += 1 + ahead.index(word)
        else:
            return True
    return False


@dataclass
class AnswerCheck:
    """Per question kind: how many questions, how many summaries state the answer, how many summaries and
    long answers together do. The kind ``"all"`` counts every question."""

    questions: dict[str, int] = field(default_factory=dict)
    summary: dict[str, int] = field(default_factory=dict)
    together: dict[str, int] = field(default_factory=dict)

    def add(
        self, kind: str, summary: str, long_answer: str, phrases: str | Sequence[str], *, table: bool = False
    ) -> tuple[bool, bool]:
        """Count one answered question; returns whether its summary states the answer, and whether the summary
        and long answer together do (``table``: a phrase copied from a table row, :func:`states_answer`)."""
        in_summary = states_answer(summary, phrases, table=table)
        in_either = in_summary or states_answer(f"{summary}\n{long_answer}", phrases, table=table)
        for key in dict.fromkeys(("all", kind)):
            self.questions[key] = self.questions.get(key, 0) + 1
            self.summary[key] = self.summary.get(key, 0) + in_summary
            self.together[key] = self.together.get(key, 0) + in_either
        return in_summary, in_either

    def rates(self) -> dict[str, dict[str, float | int]]:
        """The shares per kind (``all`` first), with the question counts they are of."""
        kinds = ["all", *sorted(k for k in self.questions if k != "all")]
        return {
            "summary": {
                k: round(self.summary[k] / self.questions[k], 3) for k in kinds if k in self.questions
            },
            "summary_or_long": {
                k: round(self.together[k] / self.questions[k], 3) for k in kinds if k in self.questions
            },
            "questions": {k: self.questions[k] for k in kinds if k in self.questions},
        }


@dataclass
class ContractCheck:
    """The summary against its contract and the answer's decision (answer/decision.py, answer/contract.py): the
    answer stated in the first sentence; unanswerable questions the decision abstained on, answerable ones it
    wrongly abstained on; a yes/no summary opening with a verdict, and the verdict matching the question's
    label; the summary's sentences and words."""

    answerable: int = 0
    first_sentence: int = 0
    false_abstentions: int = 0
    unanswerable: int = 0
    abstained: int = 0
    yes_no: int = 0
    verdict_opens: int = 0
    verdict_labelled: int = 0
    verdict_right: int = 0
    sentences: list[int] = field(default_factory=list)
    words: list[int] = field(default_factory=list)

    def add(
        self, summary: str, decision: AnswerDecision | None, question: CheckQuestion
    ) -> dict[str, bool | int]:
        """Count one answered question; returns its outcomes (for the per-question record)."""
        phrases, verdict = question.answer, question.verdict
        yes_no = question.kind == "yes/no" or verdict is not None
        units = sentence_units(summary)
        self.sentences.append(len(units))
        self.words.append(word_count(summary))
        abstained = decision is not None and not decision.stated
        out: dict[str, bool | int] = {
            "abstained": abstained,
            "sentences": len(units),
            "words": self.words[-1],
        }
        if phrases is None:
            self.unanswerable += 1
            self.abstained += abstained
            return out
        self.answerable += 1
        first = bool(units) and states_answer(units[0], phrases, table=question.in_table)
        self.first_sentence += first
        self.false_abstentions += abstained
        out["first_sentence"] = first
        if yes_no:
            self.yes_no += 1
            given = decision.verdict if decision is not None else None
            opens = given is not None and bool(units) and units[0].startswith(f"{given.label}:")
            self.verdict_opens += opens
            out["verdict_opens"] = opens
            if verdict is not None:
                self.verdict_labelled += 1
                right = given is Verdict(verdict)
                self.verdict_right += right
                out["verdict_right"] = right
        return out

    def rates(self, max_sentences: int, max_words: int) -> dict[str, float | int | None]:
        """The shares, with the counts they are of; summaries over ``max_sentences`` or ``max_words``."""

        def share(part: int, whole: int) -> float | None:
            return round(part / whole, 3) if whole else None

        return {
            "answerable": self.answerable,
            "stated_in_first_sentence": share(self.first_sentence, self.answerable),
            "false_abstention": share(self.false_abstentions, self.answerable),
            "unanswerable": self.unanswerable,
            "abstained_on_unanswerable": share(self.abstained, self.unanswerable),
            "yes_no": self.yes_no,
            "yes_no_opens_with_verdict": share(self.verdict_opens, self.yes_no),
            "verdict_labelled": self.verdict_labelled,
            "verdict_right": share(self.verdict_right, self.verdict_labelled),
            "summary_sentences_median": statistics.median(self.sentences) if self.sentences else None,
            "summary_sentences_max": max(self.sentences, default=None),
            "summary_words_median": statistics.median(self.words) if self.words else None,
            "summary_words_max": max(self.words, default=None),
            "summaries_over_contract": sum(
                s > max_sentences or w > max_words for s, w in zip(self.sentences, self.words, strict=True)
            ),
        }
