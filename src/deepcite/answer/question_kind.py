"""What a question asks for, and how much an evidence sentence has the shape of that answer.

deepcite's idea here: a reader who asks "how many" wants the sentence with the number, one who asks "what is"
wants the sentence that defines it. :func:`question_kind` reads the kind of answer from the question's words
(English; an unknown form is ``OTHER``, which has no cue); :func:`answer_cue` scores a sentence in [0, 1] by the
mark of that kind of answer, given the question:

========== =============================================== ==================================================
kind       question                                        cue in a sentence
========== =============================================== ==================================================
AMOUNT     how many/much/long…, by how much, what F1…      a number the question does not hold, more with its
                                                           unit ("9%-19%", "8.8 hours", "21.5M")
DEFINITION what is X, what does X mean, define X           "X is a/an/the", "refers to", "defined as", "means"
COMPARISON … better/more … than …, compare, X or Y         a comparative, more when it names both sides
YES_NO     does/is/can …                                   none here: findings first (answer/findings.py)
NAME       who …, which library/company/tool …             a capitalised name the question does not hold
TIME       when …, what year                               a year, a date or a clause of time
PLACE      where …                                         "in/at/from" and a capitalised place
REASON     why …                                           because, due to, lead to, so that …
LIST       what are the …s, list, what kinds of            an enumeration: "such as", "include", two commas
OTHER      anything else (how does …, what did …)          none: relevance alone chooses
========== =============================================== ==================================================

    question_kind("How many questions per second can DPR process?")     # AnswerKind.AMOUNT
    answer_cue(AnswerKind.AMOUNT, "processing 995.0 questions per second", question, settings)  # 1.0

The cue weights are :class:`deepcite.config.AnswerSettings` ``kinds.*``.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

import numpy as np

from deepcite.answer.asked_units import (
    asked_units,
    asks_frequency,
    counts_one,
    one_units,
    states_frequency,
    states_unit,
    told_without_figures,
)
from deepcite.answer.question_words import (
    COMPARATIVES,
    MEASURE_NOUNS,
    MONTH_NAMES,
    NAME_NOUNS,
    NUMBER_WORDS,
    UNITS,
)
from deepcite.config.answer import AnswerKindSettings
from deepcite.text import STOP_WORDS, tokenize


class AnswerKind(StrEnum):
    """The kind of answer a question asks for (module docstring)."""

    AMOUNT = "amount"
    DEFINITION = "definition"
    COMPARISON = "comparison"
    YES_NO = "yes_no"
    NAME = "name"
    TIME = "time"
    PLACE = "place"
    REASON = "reason"
    LIST = "list"
    OTHER = "other"

    @property
    def asked_for(self) -> str:
        """What the question asks for, in a user's words ("a number or amount")."""
        return _ASKED_FOR[self]


_ASKED_FOR = {
    AnswerKind.AMOUNT: "the number or amount asked for",
    AnswerKind.DEFINITION: "a definition",
    AnswerKind.COMPARISON: "the comparison asked for",
    AnswerKind.YES_NO: "a yes or no answer",
    AnswerKind.NAME: "the name asked for",
    AnswerKind.TIME: "the date or time asked for",
    AnswerKind.PLACE: "the place asked for",
    AnswerKind.REASON: "the reason asked for",
    AnswerKind.LIST: "the items asked for",
    AnswerKind.OTHER: "the answer",
}

# the conjunction that offers a choice, in lower case: "the OR gate" names a gate
_OR = r"\b(?-i:or)\b"
_AUX = r"(?:does|do|did|is|are|was|were|can|could|should|would|will|has|have|had|may|might|must)"
# a yes/no question: an auxiliary verb first, or after a leading phrase ("In the public-computer scenario, is the
# browser …?", "If data is altered or lost, will it …?"), which offers no choice though it may hold an "or": the
# question asked is from the auxiliary on (group "asked")
_YES_NO = re.compile(rf"^\s*(?:[^,?]{{1,80}},\s*)?(?P<asked>{_AUX}\b.*)", re.I | re.S)
_MEASURES = "|".join(sorted(MEASURE_NOUNS, key=len, reverse=True))
_AMOUNT = re.compile(
    r"\bhow (?:many|much|long|often|far|large|big|fast|slow|high|low|old|accurate|frequently|quickly|soon|tall|heavy|"
    r"deep|wide)\b|"
    r"\bby how\b|\bto what (?:extent|degree)\b|"
    # a measure, not the first part of a compound that qualifies another word ("What data did the price-impact
    # analysis use?" asks for data) nor a verb before its object ("Which states share the river's water?", "Which
    # data types count as primitives?")
    rf"\b(?:what|which)\s+(?:\S+\s+){{0,3}}?(?:{_MEASURES})\b"
    r"(?!-|\s+(?:as|the|a|an|their|its|his|her|this|that|these|those)\b)",
    re.I,
)
_MEANS = re.compile(r"\bwhat (?:does|do|did) [^?]{1,80}\b(?:mean|stand for|refer to)\b", re.I)
_WHO_DOING = re.compile(r"^\s*who\s+(?:is|are|was|were)\s+\w+ing\b", re.I)
_WH_ANYWHERE = re.compile(r"\b(?:what|how|why|when|where|which|who|whom|whose|quel\w*|qu'est)\b", re.I)
_HOW_OR_WHAT = re.compile(r"^\s*(?:how|what|which)\b", re.I)
# a measure the question names anywhere: "How does BM25 do at recall@10 …"
_MEASURED = re.compile(r"\b(?:recall|precision|accuracy|f1|auc|bleu|rouge)(?:@\d+)?\b|\btop-\d+\b", re.I)
_TIME = re.compile(
    # "when" asks a date unless it opens a clause that sets the scene for the question after its comma ("When
    # adding two long numbers, does the carry …?", "When the agreement was drafted, where was the border fixed?")
    rf"^\s*when\b(?![^,?]*,\s*(?:{_AUX}|what|which|who|whom|whose|how|where|why)\b)|"
    r"\b(?:since|by|until|till) when\b|\b(?:what|which) (?:year|date|day|month|decade|century)\b|"
    # "what time" asks a time of day when a verb or "of" follows, not in "at what time granularity"
    r"\b(?:what|which) time(?=\s+(?:is|are|was|were|does|do|did|will|would|should|shall|can|could|may|might|must|"
    r"has|have|had|of)\b|\s*[?,.]|\s*$)|"
    r"\bin what year\b",
    re.I,
)
# "where" first, or after a clause that sets the scene ("When the agreement was drafted, where was …?")
_PLACE = re.compile(
    r"^\s*(?:(?!(?:who|whom|whose|what|which|how)\b)[^,?]{1,80},\s*)?where\b|"
    r"\b(?:what|which|in which) (?:country|city|place|state|region|town)\b",
    re.I,
)
_REASON = re.compile(r"^\s*why\b|\bwhat (?:causes|caused|leads to|led to)\b|\bfor what reason\b", re.I)
_DEFINITION = re.compile(
    r"^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?!the\s+(?:\w+\s+){0,2}(?:of|for|in|to|on)\b)[^?]{1,80}\??\s*$|"
    r"\bwhat does [^?]{1,80}\b(?:mean|stand for|refer to)\b|\bwhat is meant by\b|^\s*define\b|"
    r"\bmeaning of\b|\bdefinition of\b",
    re.I,
)
_LIST = re.compile(
    r"^\s*(?:what|which)\s+(?:are|were)\s+(?:the\s+)?(?:\w+\s+){0,3}\w+s\b|\b(?:list|name) (?:the|all)\b|"
    r"\bwhat (?:kinds?|types?|sorts?) of\b",
    re.I,
)
_NAME = re.compile(
    rf"^\s*(?:who|whom|whose)\b|\b(?:which|what)\s+(?:\w+\s+)?(?:{'|'.join(NAME_NOUNS)})\b", re.I
)
# a question whether there is any at all: its "or" joins what would count, it offers no choice ("Is there an
# agreed way to count the people affected or in need?", "Did any bonds default in 2022 or 2023?")
_POLAR = re.compile(
    r"^\s*(?:is|are|was|were|will|would|has|have|had)\s+there\b|^\s*\w+\s+(?:any|anyone|anybody|anything|ever)\b",
    re.I,
)
_COMPARE_WORDS = "|".join(sorted(COMPARATIVES, key=len, reverse=True))
_COMPARISON = re.compile(
    rf"\b(?:compare[sd]?|comparison|differ\w*|versus|vs\.?|{_COMPARE_WORDS})\b|{_OR}", re.I
)
# where the question splits into its two sides ("L2 distance and dot product compare to cosine similarity")
_SIDE_SPLIT = re.compile(r"\b(?:than|or|versus|vs\.?|compared? (?:to|with)|compare to|differ from)\b", re.I)

# -- cues in a sentence ----------------------------------------------------------------------------------------
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(?:\s*(%|[-–]?\s*\d+(?:\.\d+)?%|[a-zA-Z]+\b))?")
# a number that names a part of the document, not an amount: "Table 2", "Fig. 3", "Section 5.1", "Eq. 4"
_PART_LABEL = re.compile(
    r"\b(?:tables?|tab\.|figures?|figs?\.|sections?|sec\.|§|equations?|eqs?\.|chapters?|ch\.|appendix|"
    r"steps?|parts?|pp?\.|slides?|lines?)\s*$",
    re.I,
)
# a section number opening the sentence: "5.1 Main Results …"
_HEADING_NUMBER = re.compile(r"\s*\d+(?:\.\d+)*\.?\s+[A-Z]")
_LABELLED = re.compile(r":\s*$")  # a labelled value, as a table row reads: "Recall@20: 0.0609"
_DEFINES = re.compile(
    r"\b(?:is|are|was|were)\s+(?:a|an|the|one|any|defined|known|called|used)\b|\brefers? to\b|\bdefined as\b|"
    r"\bmeans?\b|\bmeaning\b|\bstands? for\b|\bknown as\b|\bis called\b|\bwe call\b|\bdenotes?\b|"
    r"\bis (?:a|an) (?:\w+ ){0,3}(?:of|for|that|which|to)\b|:\s",
    re.I,
)
_COMPARATIVE = re.compile(
    rf"\b(?:{_COMPARE_WORDS}|\w+er than|compared (?:to|with)|versus|vs\.?|outperform\w*|surpass\w*|"
    r"superior|inferior|exceed\w*|beat\w*|improve\w*|same as|similar to|differ\w*|whereas)\b",
    re.I,
)
_YEAR_OR_DATE = re.compile(
    rf"\b(?:1[5-9]\d\d|20\d\d)\b|\b(?:{MONTH_NAMES})\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b|"
    r"\b(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\b",  # a form's "20161018"
    re.I,
)
# a time of day or a time back from now: "four o'clock", "at 7:30", "6 p.m.", "200 million years ago"
_CLOCK_OR_AGO = re.compile(
    r"\bo['’]clock\b|\b\d{1,2}:\d\d\b|\b\d{1,2}\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|\bago\b|\b(?:noon|midnight)\b",
    re.I,
)
_TIME_CLAUSE = re.compile(
    r"\b(?:when|after|before|within|until|during|once|as soon as|by the time|prior to|following|"
    r"\d+ (?:days?|weeks?|months?|years?|hours?))\b",
    re.I,
)
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|to)\s+(?:the\s+)?[A-Z][\w-]+")
_REASON_CUE = re.compile(
    r"\b(?:because|due to|since|owing to|as a result|results? in|leads? to|led to|lead to|causes?|caused|"
    r"therefore|thus|hence|so that|in order to|could lead|would lead|reason)\b",
    re.I,
)
_LIST_CUE = re.compile(r"\b(?:such as|including|include[sd]?|consists? of|comprises?|namely|:)\s", re.I)
_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][\w'’-]*")


def question_kind(question: str) -> AnswerKind:
    """The kind of answer ``question`` asks for (module docstring); ``OTHER`` when no form matches."""
    q = question.strip()
    if _MEANS.search(q):  # "What does XAI mean?" asks what it is, not for a mean
        return AnswerKind.DEFINITION
    if _WHO_DOING.match(q):  # "Who was running IBM in 2010?" asks for a name, not who someone is
        return AnswerKind.NAME
    if _AMOUNT.search(q) or (_HOW_OR_WHAT.match(q) and _MEASURED.search(q)):
        return AnswerKind.AMOUNT
    if _TIME.search(q):
        return AnswerKind.TIME
    if _PLACE.search(q):
        return AnswerKind.PLACE
    if _REASON.search(q):
        return AnswerKind.REASON
    yes_no = _YES_NO.match(q)
    comparative = _COMPARISON.search(yes_no.group("asked") if yes_no else q)
    if comparative and (comparative.group(0).lower() != "or" or (yes_no and not _POLAR.match(q))):
        return AnswerKind.COMPARISON
    if yes_no or (
        q.endswith("?") and not _WH_ANYWHERE.search(q)
    ):  # "The nurse cystoscopist: a feasible option?"
        return AnswerKind.YES_NO
    if _DEFINITION.search(q):
        return AnswerKind.DEFINITION
    if _NAME.search(q):
        return AnswerKind.NAME
    if _LIST.search(q):
        return AnswerKind.LIST
    return AnswerKind.OTHER


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[\w.%-]+", text)}


def _question_numbers(question: str) -> set[str]:
    return {m.group(1).replace(",", "") for m in _NUMBER.finditer(question)}


def figures(sentence: str, question: str) -> frozenset[str]:
    """The numbers ``sentence`` states that ``question`` does not hold ("37.78", "1212739")."""
    asked = _question_numbers(question)
    return frozenset(
        v
        for m in _NUMBER.finditer(sentence)
        if (v := m.group(1).replace(",", "")) not in asked and not _names_a_part(sentence, m)
    )


def _names_a_part(sentence: str, number: re.Match[str]) -> bool:
    """Whether the matched number labels a part of the document ("Table 2", "5.1 Main Results"), no amount."""
    before = sentence[: number.start(1)]
    return bool(_PART_LABEL.search(before)) or (not before.strip() and bool(_HEADING_NUMBER.match(sentence)))


_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})  # "45th anniversary": a rank, not an amount


def amount_cue(sentence: str, question: str, settings: AnswerKindSettings) -> float:
    """A number the question does not hold, no ordinal and no part of a date (a year, a day of a month): with the unit the
    question asks for (:func:`asked_units`) ``number_with_unit_cue``, in another unit or bare
    ``unasked_unit_cue``; for a question that asks no unit, ``number_with_unit_cue`` with a unit or a percentage,
    ``bare_number_cue`` alone; a number written as a word: ``word_number_cue``. A question that asks how often is
    answered ``number_with_unit_cue`` by a frequency, with a number or not ("daily", "every six months")."""
    if asks_frequency(question) and states_frequency(sentence):
        return settings.number_with_unit_cue
    asked = _question_numbers(question)
    units = asked_units(question)
    dated = [m.span() for m in _DATE_NUMBER.finditer(sentence)]
    best = 0.0
    for m in _NUMBER.finditer(sentence):
        value = m.group(1).replace(",", "")
        ordinal = m.end(1) == m.start(2) and m.group(2).lower() in _ORDINAL_SUFFIXES
        if (
            value in asked
            or ordinal
            or any(a <= m.start(1) < b for a, b in dated)
            or _names_a_part(sentence, m)
        ):
            continue
        if units is not None:
            if states_unit(sentence, units):
                return settings.number_with_unit_cue
            best = max(best, settings.unasked_unit_cue)
            continue
        unit = (m.group(2) or "").strip().lower()
        if unit and (unit.endswith("%") or unit in UNITS or re.fullmatch(r"[kmbx]", unit)):
            return settings.number_with_unit_cue
        if _LABELLED.search(sentence[: m.start()]):
            return settings.number_with_unit_cue
        best = max(best, settings.bare_number_cue)
    if best == 0.0 and units is not None and one_units(sentence, units) - one_units(question, units):
        return settings.number_with_unit_cue  # "in a decade", not the question's own "a mile"
    if best == 0.0 and units is not None and told_without_figures(sentence, units):
        return settings.number_with_unit_cue  # "hour-long", "since 1924"
    if best == 0.0 and counts_one(sentence, question):
        return settings.word_number_cue  # "only has one owner" for "how many owners"
    if best == 0.0 and _number_words(sentence, question):
        best = (
            settings.number_with_unit_cue
            if units and states_unit(sentence, units)
            else settings.word_number_cue
        )
    return best


def _sides(question: str) -> tuple[set[str], set[str]]:
    """The content words on each side of the question's comparison word (empty when it has none)."""
    parts = _SIDE_SPLIT.split(question, maxsplit=1)
    if len(parts) != 2:
        return set(), set()
    left, right = (
        {w for w in re.findall(r"[\w-]+", p.lower()) if w not in STOP_WORDS and len(w) > 1} for p in parts
    )
    return left - right, right - left


def comparison_cue(sentence: str, question: str, settings: AnswerKindSettings) -> float:
    """``comparative_cue`` for a comparative, plus ``both_sides_cue`` when the sentence names a word of each
    side of the question's comparison."""
    if not _COMPARATIVE.search(sentence):
        return 0.0
    left, right = _sides(question)
    words = _words(sentence)
    both = bool(left & words) and bool(right & words)
    return min(1.0, settings.comparative_cue + (settings.both_sides_cue if both else 0.0))


def name_cue(sentence: str, question: str) -> float:
    """1 when the sentence holds a word with a capital (not its first word: "HuggingFace", "gradCAM") that the
    question does not."""
    asked = _words(question)
    words = re.findall(r"[\w'’-]+", sentence)[1:]
    return 1.0 if any(w.lower() not in asked and not w.islower() and w[:1].isalpha() for w in words) else 0.0


_NEGATIONS = frozenset({"not", "no", "never", "without", "nor", "cannot"})


def _phrase_terms(text: str) -> list[str]:
    """``text``'s stemmed content words in order, a negation kept as "not" (stop words dropped)."""
    out: list[str] = []
    for word in re.findall(r"[\w@.'’-]+", text.lower()):
        if word in _NEGATIONS or word.endswith("n't"):
            out.append("not")
        else:
            out.extend(tokenize(word)[:1])
    return out


def phrase_overlaps(sentences: list[str], question: str) -> np.ndarray:
    """Per sentence, the weighted share of the question's word pairs (adjacent content words, negations kept:
    "not address", "paper queue", "public holiday") it holds in the same order, in [0, 1]; a pair weighs
    ``log(1 + N / df)`` over the N sentences (a pair every sentence holds, such as the topic's name, says little
    about which one answers)."""
    asked = _phrase_terms(question)
    pairs = set(zip(asked, asked[1:], strict=False))
    out = np.zeros(len(sentences), dtype=np.float32)
    if not pairs or not sentences:
        return out
    held = []
    for sentence in sentences:
        terms = _phrase_terms(sentence)
        held.append(pairs & set(zip(terms, terms[1:], strict=False)))
    df = {p: sum(p in h for h in held) for p in pairs}
    weight = {p: math.log(1.0 + len(sentences) / max(1, df[p])) for p in pairs}
    total = sum(weight.values())
    for i, h in enumerate(held):
        out[i] = sum(weight[p] for p in h) / total
    return out


def answer_cue(kind: AnswerKind, sentence: str, question: str, settings: AnswerKindSettings) -> float:
    """How much ``sentence`` has the shape of a ``kind`` answer to ``question``, in [0, 1] (module docstring)."""
    match kind:
        case AnswerKind.AMOUNT:
            return amount_cue(sentence, question, settings)
        case AnswerKind.DEFINITION:
            return 1.0 if _DEFINES.search(sentence) else 0.0
        case AnswerKind.COMPARISON:
            return comparison_cue(sentence, question, settings)
        case AnswerKind.NAME:
            return name_cue(sentence, question)
        case AnswerKind.TIME:
            return (
                1.0
                if _YEAR_OR_DATE.search(sentence) or _CLOCK_OR_AGO.search(sentence)
                else (0.6 if _TIME_CLAUSE.search(sentence) else 0.0)
            )
        case AnswerKind.PLACE:
            return 1.0 if _PLACE_CUE.search(sentence) else 0.0
        case AnswerKind.REASON:
            return 1.0 if _REASON_CUE.search(sentence) else 0.0
        case AnswerKind.LIST:
            return 1.0 if _LIST_CUE.search(sentence) or sentence.count(",") >= 2 else 0.0
    return 0.0


def states_kind(kind: AnswerKind) -> bool:
    """Whether an answer of ``kind`` is told by its cue alone, so that a context without any sentence bearing
    the cue does not state the answer (amounts and dates: a number or a date is there or it is not)."""
    return kind in (AnswerKind.AMOUNT,)


def asks_yes_or_no(question: str) -> bool:
    """Whether ``question`` is asked for a yes or a no: it opens with an auxiliary verb and offers no choice
    ("Is A better than B?" does; "Did A or B work better?" asks which), or asks whether there is any at all
    (:data:`_POLAR`: "Did any bonds default in 2022 or 2023?")."""
    asked = _YES_NO.match(question)
    return asked is not None and (
        not re.search(_OR, asked.group("asked")) or _POLAR.match(question) is not None
    )


_MONTH = rf"(?:{MONTH_NAMES}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
# a number that is part of a date: a year, or a day beside its month ("February 15", "15 May")
_DATE_NUMBER = re.compile(
    rf"\b(?:1[5-9]\d\d|20\d\d)\b|\b{_MONTH}\s+\d{{1,2}}\b|\b\d{{1,2}}\s+{_MONTH}\b", re.I
)


def states_amount(sentence: str, question: str) -> bool:
    """Whether ``sentence`` states a number the question does not hold that is no part of a date (a year or a
    day of a month answers no "how many"), in figures or in words ("ten inches high", "one owner"), or, for a
    question that asks how often, a frequency ("daily"), or for one that asks a unit, the unit without a figure
    ("hour-long", "since 1924")."""
    if asks_frequency(question) and states_frequency(sentence):
        return True
    if (units := asked_units(question)) is not None and told_without_figures(sentence, units):
        return True
    dates = {n for m in _DATE_NUMBER.finditer(sentence) for n in re.findall(r"\d+", m.group(0))}
    return (
        any(v not in dates for v in figures(sentence, question))
        or bool(_number_words(sentence, question))
        or counts_one(sentence, question)
    )


def _number_words(sentence: str, question: str) -> set[str]:
    """The numbers ``sentence`` writes as words ("ten", "twelve") that ``question`` does not hold."""
    return _words(sentence) & NUMBER_WORDS - _words(question)
