"""How a follow-up candidate reads where it stands (read by :mod:`deepcite.research.followup`): an acronym and
whether its passage defines it, a label of common words, a quoted term of art, a sentence rather than a name, a
venue line, an author list, a cited work's author, a heading run into the sentence below it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from deepcite.config import FollowupSettings
from deepcite.research.followup_words import PREFIXES, SENTENCE_OPENERS, VENUE_WORDS
from deepcite.text import STOP_WORDS

MIN_PHRASE_WORD = 3  # shorter words ("pH", "of") never make a noun phrase
_SENTENCE_END = re.compile(r"[?!]$|[a-z]{3}\.$")
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_NAME_PART = re.compile(r"[\s/-]+")
_QUALIFIER = re.compile(r"(?<=\S)\s*\([^()]*\)$")  # "Kiss and Tell (1945 film)": the name, then what it is
# what follows a cited author's name: "et al.", a year, or co-authors then a year ("Efron and Tibshirani, 1993")
_CITATION_TAIL = re.compile(
    r"(?:\s+et\s+al\b|(?:\s*(?:,|\band\b|&)\s*[A-Z][\w'’-]+)*\s*(?:,\s*|[(\[])(?:1[89]|20)\d\d[a-z]?\b)"
)
_PERSON = re.compile(r"[A-Z][a-zà-ÿ'’-]+(?:\s+[A-Z]\.)*(?:\s+[A-Z][\w'’-]+){1,2}")
_SEGMENT = re.compile(r"[^\n.!?;]+")


def is_acronym(word: str) -> bool:
    """Capitals only, or capitals and a plural "s" ("QALYs"), at least two letters."""
    letters = [c for c in word.removesuffix("s") if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def acronym_defined(acronym: str, context: str) -> bool:
    """Whether ``context`` defines ``acronym`` as the abbreviation of common words: it stands in brackets after a
    word in lower case ("impaired fasting glucose (IFG)") or one a sentence opens with. An acronym never
    defined so is a name ("NASA", "ABBA"), and so is the short form of a name ("International Boxing
    Federation (IBF)"), which other texts write alone."""
    definitions = re.finditer(rf"(^|[.!?]\s+)?(\S+)\s*[(\[]\s*{re.escape(acronym)}\s*[)\],;]", context)
    return any(d.group(1) is not None or not d.group(2)[:1].isupper() for d in definitions)


def is_label(term: str, context: str) -> bool:
    """Whether every word of a capitalised name is a label prefix, an acronym, a stop word, or a word ``context``
    also writes in lower case ("Statin group", "Non-AF", "Postoperative AF"): a label, not a name."""
    lower = set(_LOWER_WORD.findall(context))
    parts = [p.strip("()[]'\".,;:") for p in _NAME_PART.split(term)]
    plain = False  # a word that is no acronym: a name of acronyms alone ("AC/DC") is no label
    for part in filter(None, parts):
        low = part.lower()
        if low in lower or low in PREFIXES:
            plain = True
        elif not (is_acronym(part) or low in STOP_WORDS):
            return False
    return plain


def is_quoted_phrase(term: str, settings: FollowupSettings) -> bool:
    """Whether a name that starts in lower case (so the passage quotes it: "batting title") is a noun phrase of
    ``phrase_min_words`` or more words, each no stop word and at least ``MIN_PHRASE_WORD`` letters long: a
    term of art, searched. A quoted word, foreign words ("sheol", "de facto") or a phrase of small words ("et
    al", "in some instances") is none."""
    words = term.split()
    return (
        term[:1].islower()
        and len(words) >= settings.phrase_min_words
        and all(len(w) >= MIN_PHRASE_WORD and w.lower() not in STOP_WORDS for w in words)
    )


def is_sentence_like(term: str, settings: FollowupSettings) -> bool:
    """Whether ``term`` reads as a sentence (most content words lower-case, or too long) rather than a name.

    A bracketed qualifier after a capitalised name ("She's Got the Rhythm (And I Got the Blues)", "The Key
    (1961 film)") is not counted: the name is what stands before it.
    """
    name = _QUALIFIER.sub("", term).strip()
    if not name[:1].isupper():
        name = term.strip()
    words = name.split()
    if len(words) > settings.title_max_words:
        return True
    content = [w for w in words if w.lower().strip("?!.,:;()") not in STOP_WORDS and w[:1].isalpha()]
    if not content:
        return False
    lower = sum(w[:1].islower() for w in content) / len(content)
    ends = bool(_SENTENCE_END.search(name))
    return lower >= settings.sentence_case_share and (len(words) >= settings.sentence_case_min_words or ends)


def _segment_of(term: str, context: str) -> str | None:
    """The line or sentence of ``context`` that holds ``term`` (its first occurrence), if any."""
    at = context.lower().find(term.lower())
    if at < 0:
        return None
    for m in _SEGMENT.finditer(context):
        if m.start() <= at < m.end():
            return m.group(0)
    return None


def in_venue_line(term: str, context: str) -> bool:
    """Whether ``term`` stands in a venue, publisher or copyright line of ``context`` ("Proceedings of the 25th
    Conference on Computational Natural Language Learning, Online")."""
    segment = _segment_of(term, context)
    if segment is None:
        return False
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", segment)}
    return bool(words & VENUE_WORDS) or "©" in segment


def is_heading_run_on(words: Sequence[str]) -> bool:
    """Whether a word after a term's first (``words``, its tokens that are words) is a capitalised sentence
    opener ("Qualitative Analysis Although DPR", "Evaluation We"): a heading read together with the first
    words of the sentence below it."""
    return any(w[0].isupper() and w.lower().rstrip(".") in SENTENCE_OPENERS for w in words[1:])


def is_cited_author(term: str, context: str) -> bool:
    """Whether every place ``context`` names ``term`` is a citation of a work by it ("Efron and Tibshirani,
    1993", "Guo et al. (2021)", "(Radev, 2013)")."""
    places = [m.end() for m in re.finditer(rf"(?<!\w){re.escape(term)}(?!\w)", context)]
    return bool(places) and all(_CITATION_TAIL.match(context, end) for end in places)


def in_author_list(term: str, context: str) -> bool:
    """Whether ``term`` stands in a list of person names of ``context`` ("… Answering Vera Kaplan, Boris Ostrov,
    Sana Mirza, …"): at least two of the comma- or "and"-separated parts next to the one holding it (two on
    each side) are person names."""
    segment = _segment_of(term, context)
    if segment is None:
        return False
    parts = [p.strip(" *†‡§¶0123456789") for p in re.split(r",|\band\b", segment)]
    at = next((k for k, p in enumerate(parts) if term.lower() in p.lower()), None)
    if at is None:
        return False
    near = parts[max(0, at - 2) : at] + parts[at + 1 : at + 3]
    return sum(bool(_PERSON.fullmatch(p)) for p in near) >= 2
