"""Does an answer state the answer? A check of written answers against verbatim gold phrases.

The check set's questions (:mod:`deepcite.evaluation.documents`) carry a short answer phrase copied from the
source (or several that must occur together, such as a table row's label and value). An answer *states* it
when every phrase occurs in the answer's text once both are brought to one form: citation markers ("[3]",
"[1-2]") removed, NFKC, case folded, every run of characters other than letters, digits and "%" made one
space (so "84.6 secs vs 115.6 secs" matches however the writer spaced or punctuated it), and the phrase
bounded by word edges ("76" is not found in "1976").

    states_answer("DPR beats BM25 by 9%-19% [2].", ["9%-19%"])        # True
    tally = AnswerCheck()
    tally.add("table", summary, long_answer, ["Newsroom", "1,212,739"])
    tally.rates()   # {"summary": {"all": 0.5, "table": …}, "summary_or_long": {…}, "questions": {…}}

:func:`states_answer` is the one scoring function; :class:`AnswerCheck` tallies it per question kind for the
quick summary alone and for the summary and long answer together.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from deepcite.answer.citations import CITATION_RE

_NOT_WORD = re.compile(r"[^\w%]+")


def answer_form(text: str) -> str:
    """``text`` in the form phrases are compared in (module docstring), padded with one space each side."""
    text = CITATION_RE.sub(" ", unicodedata.normalize("NFKC", text)).casefold()
    return f" {' '.join(_NOT_WORD.sub(' ', text).replace('_', ' ').split())} "


def states_answer(text: str, phrases: str | Sequence[str]) -> bool:
    """Whether ``text`` holds every gold phrase, in the compared form; False when no phrase has a word."""
    wanted = [phrases] if isinstance(phrases, str) else list(phrases)
    forms = [answer_form(p) for p in wanted]
    if not forms or any(not f.strip() for f in forms):
        return False
    haystack = answer_form(text)
    return all(form in haystack for form in forms)


@dataclass
class AnswerCheck:
    """Per question kind: how many questions, how many summaries state the answer, how many summaries and
    long answers together do. The kind ``"all"`` counts every question."""

    questions: dict[str, int] = field(default_factory=dict)
    summary: dict[str, int] = field(default_factory=dict)
    together: dict[str, int] = field(default_factory=dict)

    def add(
        self, kind: str, summary: str, long_answer: str, phrases: str | Sequence[str]
    ) -> tuple[bool, bool]:
        """Count one answered question; returns whether its summary states the answer, and whether the summary
        and long answer together do."""
        in_summary = states_answer(summary, phrases)
        in_either = in_summary or states_answer(f"{summary}\n{long_answer}", phrases)
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
