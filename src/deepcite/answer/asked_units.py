"""The units an amount question asks for, and whether a sentence states a number in them: "how long did it take"
is answered in hours or years, "how much did it cost" in money ("8.8 hours", "$12", "two years"), so the answer's
cue and its decision (:mod:`deepcite.answer.question_kind`, :mod:`deepcite.answer.decision`) do not take "21
million passages" for a duration; a "how many <noun>" question is answered by a sentence that names what it counts
(:func:`counted_noun`, :func:`names_counted`). The unit words are :mod:`deepcite.answer.question_words`'."""

from __future__ import annotations

import re

from deepcite.answer.question_words import (
    COUNT_QUALIFIERS,
    DATA_UNITS,
    DURATION_UNITS,
    FREQUENCY_PERIODS,
    FREQUENCY_WORDS,
    LENGTH_UNITS,
    MASS_UNITS,
    MONEY_UNITS,
    NUMBER_WORDS,
    PEOPLE_WORDS,
    TEXT_LENGTH_UNITS,
)

# a number in words, the longest first ("seventeen" before "seven"), and a number in figures or words
_NUMBER_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_A_NUMBER = rf"(?:\d[\d,.]*|\b(?:{_NUMBER_WORD})\b)"
# what an amount question measures, and the units that answer it (question_words); "how often do bonds pay
# interest" asks a frequency, not money
_ASKS_FREQUENCY = re.compile(r"\bhow (?:often|frequently)\b|\bhow many times\b", re.I)
_PERIOD = rf"(?:(?:other|few|\d+|{_NUMBER_WORD})\s+)?(?:{'|'.join(sorted(FREQUENCY_PERIODS))})s?\b"
_FREQUENCY = re.compile(
    rf"\b(?:{'|'.join(sorted(FREQUENCY_WORDS))})\b|\b(?:every|per|each)\s+{_PERIOD}|"
    rf"\b(?:once|twice|thrice|(?:\d+|{_NUMBER_WORD})\s*(?:times|x))"
    rf"(?:\s+(?:a|an|per|each|every|in)\s+|\s*/\s*){_PERIOD}",
    re.I,
)
_ASKS_MONEY = re.compile(
    r"\b(?:cost|costs|costing|price|prices|priced|pay|paid|spend|spent|fee|fees|charge|charged|money|dollars?|"
    r"euros?|budget|salary|salaries)\b",
    re.I,
)
_ASKS_DURATION = re.compile(
    r"\bhow long (?:does|did|do|will|would|can|could|has|have|had)\b|\bhow much time\b|\bhow old\b|"
    r"\bhow (?:quickly|soon)\b|"  # "how quickly did the team fix it": "in a week"
    r"\bhow many (?:seconds|minutes|hours|days|weeks|months|years)\b",
    re.I,
)
# a difference asked for, which a ratio answers as well as an amount: "how much more did it cost"
_ASKS_DIFFERENCE = re.compile(
    r"\bhow (?:much|many times) (?:more|less|higher|lower|bigger|smaller|larger|greater|cheaper|dearer)\b",
    re.I,
)
_ASKS_LENGTH = re.compile(r"\bhow (?:tall|wide|deep)\b", re.I)  # not "how far ahead", "how high a score"
_ASKS_LONG_IS = re.compile(r"\bhow long (?:is|are|was|were)\b", re.I)
_ASKS_MASS = re.compile(r"\bhow heavy\b|\bweigh(?:s|ed)?\b", re.I)
_ASKS_DATA = re.compile(rf"\b(?:{'|'.join(sorted(DATA_UNITS - {'kb', 'mb', 'gb', 'tb', 'pb'}))})\b", re.I)
_UNIT_AFTER = re.compile(
    rf"{_A_NUMBER}\s*-?\s*([^\W\d]+|[$€£¥])",
    re.I,
)
# … or with a word between: "2 business days", "five working days", "10 more minutes"
_UNIT_SECOND = re.compile(
    rf"{_A_NUMBER}\s+[^\W\d]+\s+([^\W\d]+)",
    re.I,
)
# one of a unit as an adjective: "hour-long sessions", "a week-long course"
_UNIT_LONG = re.compile(r"\b([^\W\d]+)-long\b", re.I)
# a duration told by its start: "since 1924", "since March 2009"
_SINCE = re.compile(r"\bsince\s+(?:[A-Z][a-z]+\s+)?(?:1[5-9]\d\d|20\d\d)\b")
_MONEY_BEFORE = re.compile(r"[$€£¥]\s?\d")
_DECADE = re.compile(r"(?:1[5-9]|20)\d0s\b")  # "the 1960s" is no number of seconds
# a unit written without a figure: one of it with an article ("for more than a month", "in a decade", "an hour";
# three letters or more: "an h-index" is no duration) or a vague number of it ("several hours", "few tens of
# milliseconds", "hundreds of dollars")
_ONE_UNIT = re.compile(
    r"\b(?:(?:a|an|one)\s+(?:few\s+|couple\s+of\s+)?|(?:few|several|many)\s+)"
    r"(?:(?:tens|hundreds|thousands|dozens)\s+of\s+)?([^\W\d]{3,})\b|"
    r"\b(?:tens|hundreds|thousands|dozens)\s+of\s+([^\W\d]{3,})\b",
    re.I,
)
_HOW_MANY = re.compile(r"\bhow many\s+([^\W\d]{3,})", re.I)
_HOW_MANY_WORDS = re.compile(r"\bhow many\s+((?:[^\W\d]+\s+){0,3})", re.I)
# a counted noun is found by its first letters, so "synchronisation" finds "synchronizer" and "countries" "country"
_COUNTED_STEM_DROP = 2
_COUNTED_STEM = (4, 6)
# a unit a "how many" question may count in: asked_units reads those, not counted_noun
_UNIT_WORDS = MONEY_UNITS | DURATION_UNITS | LENGTH_UNITS | MASS_UNITS | DATA_UNITS | TEXT_LENGTH_UNITS


def asks_frequency(question: str) -> bool:
    """Whether ``question`` asks how often ("How often is the page updated?", "How many times a year …")."""
    return _ASKS_FREQUENCY.search(question) is not None


def states_frequency(sentence: str) -> bool:
    """Whether ``sentence`` says how often, with a number or without ("daily", "twice a week", "every six
    months", "3 times per year", "each semester")."""
    return _FREQUENCY.search(sentence) is not None


def asked_units(question: str) -> frozenset[str] | None:
    """The units an amount ``question`` must be answered in (money, a duration, a length, a mass, a data
    size), or None when any number may answer it ("how many papers"). A question that asks how often
    (:func:`asks_frequency`, answered by :func:`states_frequency`) asks no money though it says "pay", nor does
    one that counts something else ("how many geese spent the winter"); one that asks how much more or less
    may be answered by a ratio ("4x") as well as an amount."""
    if _ASKS_DURATION.search(question):  # "how long did they spend negotiating" asks a time, not money
        return DURATION_UNITS
    if _ASKS_DIFFERENCE.search(question):  # "4x", "40% more", "$30 more": any number may answer
        return None
    counted = _HOW_MANY.search(question)
    if (
        _ASKS_MONEY.search(question)
        and not asks_frequency(question)
        and (counted is None or counted.group(1).lower() in MONEY_UNITS)
    ):
        return MONEY_UNITS
    if _ASKS_LONG_IS.search(question):
        return DURATION_UNITS | LENGTH_UNITS | TEXT_LENGTH_UNITS
    if _ASKS_LENGTH.search(question):
        return LENGTH_UNITS
    if _ASKS_MASS.search(question):
        return MASS_UNITS
    if _ASKS_DATA.search(question):
        return DATA_UNITS
    return None


def states_unit(sentence: str, units: frozenset[str]) -> bool:
    """Whether ``sentence`` states a number in one of ``units`` ("8.8 hours", "$12", "30 cm", "two years", "a
    decade", "2 business days", "hour-long"), or a duration by its start ("since 1924")."""
    if units & MONEY_UNITS and _MONEY_BEFORE.search(sentence):
        return True
    return (
        any(
            m.group(1).lower() in units and not _DECADE.match(sentence, m.start())
            for pattern in (_UNIT_AFTER, _UNIT_SECOND)
            for m in pattern.finditer(sentence)
        )
        or bool(one_units(sentence, units))
        or told_without_figures(sentence, units)
    )


def told_without_figures(sentence: str, units: frozenset[str]) -> bool:
    """Whether ``sentence`` states an amount in ``units`` without a figure of its own: one unit as an adjective
    ("hour-long sessions"), or a duration by its start ("since 1924")."""
    return any(m.group(1).lower() in units for m in _UNIT_LONG.finditer(sentence)) or bool(
        units & DURATION_UNITS and _SINCE.search(sentence)
    )


def one_units(text: str, units: frozenset[str]) -> set[str]:
    """The ``units`` that ``text`` states without a figure: one of with an article ("in a decade", "for more than a
    month") or a vague number of ("several hours", "few tens of milliseconds")."""
    return {(m.group(1) or m.group(2)).lower() for m in _ONE_UNIT.finditer(text)} & units


def counts_one(sentence: str, question: str) -> bool:
    """Whether ``sentence`` states one of what a "how many <noun>" ``question`` counts ("A document template only has
    one owner" for "How many owners can a template have?"), which the question does not say itself."""
    counted = _HOW_MANY.search(question)
    if not counted:
        return False
    one = re.compile(
        rf"\b(?:one|single|sole)\s+{re.escape(counted.group(1).lower().removesuffix('s'))}s?\b", re.I
    )
    return bool(one.search(sentence)) and not one.search(question)


def counted_noun(question: str) -> str | None:
    """What a "how many" ``question`` counts ("credits" in "How many credits is the course worth?"), past a
    qualifier or a describing word ("how many of the", "such", "recorded"); None for any other question, for "how
    many times" and for a unit (:func:`asked_units` reads those)."""
    found = _HOW_MANY_WORDS.search(question)
    if not found:
        return None
    words = found.group(1).split()
    for n, written in enumerate(words):
        word = written.lower()
        # a qualifier, a participle or an adverb, or a name before the noun ("how many Kabardian clips")
        if (
            word in COUNT_QUALIFIERS
            or word.endswith(("ed", "ly"))
            or (written[0].isupper() and n + 1 < len(words))
        ):
            continue
        return (
            None if word in _UNIT_WORDS or word.removesuffix("s") in _UNIT_WORDS or word == "times" else word
        )
    return None


def names_counted(sentence: str, noun: str) -> bool:
    """Whether ``sentence`` names what a question counts (:func:`counted_noun`): the noun by its first letters, or
    for people any word that counts people ("members", "participants", "deaths")."""
    text = sentence.lower()
    low, high = _COUNTED_STEM
    if noun[: max(low, min(high, len(noun) - _COUNTED_STEM_DROP))] in text:
        return True
    return noun in PEOPLE_WORDS and any(w in PEOPLE_WORDS for w in re.findall(r"[a-z]+", text))
