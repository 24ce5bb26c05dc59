"""Which evidence sentences may open an answer, and which are never quoted at all.

Readers label what is not prose (running heads, captions, reference lists) where they can; this is the
writer's own check, sentence by sentence, for what a reader let through:

- never quoted (:func:`never_quoted`): a copyright, venue or running-head line ("c 2020 Association for
  Computational Linguistics", "Proceedings of the 25th Conference …", "arXiv:2004.04906"), a bare link, a table of
  contents' entry or a form's blank (a dot leader: "3.4 Outlook ........ 28", "Presiding Officer: ________"), and a
  reference entry ("Karpukhin, V., Oguz, B. … 2020. Dense passage retrieval … In EMNLP.");
- quoted, but never the first sentence (:func:`lead_fault`): a sentence that starts with a section number and
  heading words ("5.1 Main Results Table 2 compares …") or ends in a contents heading (a title page read on into
  its "Table of contents"), a caption ("Table 1: …"), one that is mostly
  capitalised words ("Main Results Table", a title), one that reads as code ("Store_Sales<- aggregate(Weekly_Sales ~
  Store, data = data1, sum)"), a question the source asks ("What is AEA's role?"), or one without a verb-like
  token (a table row "Papers w/ Pubmed IDs 21.5M").

    lead_fault("5.1 Main Results Table 2 compares the retrieval accuracy …", settings)   # "a section heading"
    never_quoted("c 2020 Association for Computational Linguistics")                     # True

Thresholds are :class:`deepcite.config.AnswerSettings` ``kinds.lead_*``.
"""

from __future__ import annotations

import re

from deepcite.answer.question_words import SECTION_WORDS
from deepcite.answer.table_rows import is_row
from deepcite.config.answer import AnswerKindSettings

HEADING = "a section heading"
CAPTION = "a caption"
CAPITALISED = "mostly capitalised words"
NO_VERB = "no verb"
CODE = "code"
# the source's own question ("Is DOL going to show up at my shop?"): it states nothing
QUESTION = "a question"
# "They are as follows:", a form's label without its value ("Characterization of Service:")
LEAD_IN = "a lead-in"

# a run that ends in a contents heading: a title page read on into its "Table of contents" ("De-risking custom
# technology projects A handbook … August 5, 2019 Robin Carnahan, … Table of contents")
_CONTENTS_END = re.compile(r"\b(?:table\s+of\s+)?contents\s*$", re.I)
_SECTION_NUMBER = re.compile(r"^\s*(?:(\d+(?:\.\d+)+|\d+\.|[IVX]+\.|[A-H]\.)|(\d+))\s+(?=[A-Z])")
_CAPTION = re.compile(
    r"^\s*(?:Table|Figure|Fig\.?|Algorithm|Listing|Chart|Exhibit|Plate)\s*[A-Z]?\d+[a-z]?\s*[:.|)-]", re.I
)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# marks of code: a call with arguments, an assignment or comparison, braces, a snake_case or camelCase name
_CODE_CALL = re.compile(r"\b[A-Za-z_][\w.]*\((?=[^)]*[=,\"'~])")
_CODE_OPERATOR = re.compile(
    r"<-|\b[A-Za-z_]\w*\s*[+-]?=\s*[\w\"'\[(]|==|!=|:=|=>|->|&&|\|\||\w\[\d*\]|\bdef |\breturn\b|;\s*$|[{}]"
)
_CODE_NAME = re.compile(r"\b[A-Za-z]+_[A-Za-z_]+\b|\b[a-z]+[A-Z]\w*\b")
_LINK_ONLY = re.compile(r"^\s*(?:https?://|www\.)\S+\s*$", re.I)
# a dot leader: a table of contents' entry ("3.4 Outlook: Elliptic Curve Cryptography ........ 28"), or a form's
# blank ("Presiding Officer: ________")
_LEADER = re.compile(r"\.{5,}|(?:\.\s){4,}\.|…{3,}|_{4,}")
_FOOTER = re.compile(
    r"©|\(c\)\s*(?:19|20)\d\d|^\s*c\s+(?:19|20)\d\d\b|\bcopyright\b|\ball rights reserved\b|"
    r"\bproceedings of\b|\bassociation for computational linguistics\b|\barxiv:\s*\d|\bpage \d+ of \d+\b|"
    r"\b(?:licensed|published) under\b|\bcreative commons\b",
    re.I,
)
# a browser's print header or footer run into the text: the page's address, the date and time it was printed and
# "Page N of M" ("https://www.truthcoin.info/blog/bit-assets/ 6/17/25, 4:39 AM Page 27 of 34")
_PRINT_LINE = re.compile(
    r"\s*(?:https?://\S+\s+)?\d{1,2}/\d{1,2}/\d{2,4},?\s+\d{1,2}:\d{2}(?:\s*[AP]M)?\s+Page\s+\d+\s+of\s+\d+\s*",
    re.I,
)
# a wiki page's furniture: a hatnote pointing elsewhere, the site's tagline, its navigation links
_PAGE_FURNITURE = re.compile(
    r"^\s*(?:for other uses|for the \w+(?: \w+)?, see|this article is about|not to be confused with|"
    r"\(redirected from|jump to (?:navigation|search)|from wikipedia, the free encyclopedia)|\(disambiguation\)",
    re.I,
)
# a reference entry: initials after a surname, a year and a venue or pages; "et al." with a year and a venue
_INITIALS = re.compile(r"\b[A-Z][\w'’-]+,\s+(?:[A-Z]\.\s*){1,3}")
_REFERENCE_TAIL = re.compile(
    r"\b(?:19|20)\d\d[a-z]?\b.{0,200}?\b(?:In\s+(?:Proc|[A-Z]{2,})|Proceedings|arXiv|Journal|Transactions|"
    r"pp\.|pages\s+\d|vol\.|doi)",
    re.S,
)
_ET_AL_YEAR = re.compile(r"\bet al\.,?\s*\(?(?:19|20)\d\d[a-z]?\)?\.\s+[A-Z]")
_AUX = frozenset(
    """is are was were be been being am has have had do does did can could will would shall should may might
    must""".split()
)
# a verb in its base form, which no suffix marks ("we use", "they provide")
_BASE_VERBS = frozenset(
    """use provide require make take give show find see get let help need allow include contain support
    remain become mean refer perform compare achieve reach outperform improve reduce increase run train
    process produce lead cause apply pay send deliver accept enclose start differ work spend install create
    build write keep bring choose decide explain describe ensure enable prevent protect store save add remove
    check follow consider expect prefer tend seem appear happen occur belong depend exist consist involve
    receive obtain hire enroll fix listen reply attend submit join hold carry avoid understand know think
    believe want try ask tell say speak talk live stay arrive""".split()
)
# a verb in an irregular past form, which no suffix marks either ("He came in with a teacup …")
_IRREGULAR_PAST = frozenset(
    """came went said told made found took gave got saw knew thought began ran wrote held left kept put brought
    bought built felt stood sat spoke became grew won lost met paid sent meant heard chose drove ate fell flew
    forgot hid hit hurt laid lay rode rose sang sank shot shut slept spent spread stole struck swam threw
    understood woke wore caught fought taught sought dealt drew fed fled hung lit led broke chosen given known
    seen taken written done gone begun""".split()
)


# a list item's number or letter before its first word: "6. Officers shall not …", "(b) The court may …"
_LIST_NUMBER = re.compile(r"^\s*(?:\d{1,2}[.)]|\(\d{1,2}\)|\(?[a-z]\))\s+(?=[A-Z])")


def without_list_number(sentence: str) -> str:
    """``sentence`` without the number or letter of the list item it opens ("6. Officers shall not force …" ->
    "Officers shall not force …"): no part of what it says, and a summary's sentence splitter would cut it off as
    a sentence of its own ("No: 6." with no citation)."""
    return _LIST_NUMBER.sub("", sentence, count=1)


def without_print_lines(sentence: str) -> str:
    """``sentence`` without a browser's print header or footer that a printed web page ran into it ("… goes back
    up for grabs, and https://… 6/17/25, 4:39 AM Page 27 of 34 can be used again." -> "… goes back up for grabs,
    and can be used again."), so the sentence is quoted, not dropped as a running head."""
    return _PRINT_LINE.sub(" ", sentence).strip()


def never_quoted(sentence: str) -> bool:
    """Whether ``sentence`` is a copyright, venue or running-head line, a wiki page's hatnote or tagline
    ("For other uses, see Magnetic Hill (disambiguation)."), a bare link ("http://seqanswers.com/wiki/Software"),
    a table of contents' entry or a form's blank (a dot leader, "________") or a reference entry (module
    docstring)."""
    if (
        _FOOTER.search(sentence)
        or _PAGE_FURNITURE.search(sentence)
        or _LINK_ONLY.match(sentence)
        or _LEADER.search(sentence)
    ):
        return True
    if len(_INITIALS.findall(sentence)) >= 2 and _REFERENCE_TAIL.search(sentence):
        return True
    return bool(_ET_AL_YEAR.search(sentence) and _REFERENCE_TAIL.search(sentence))


def verb_like(word: str) -> bool:
    """Whether ``word`` reads as a verb: an auxiliary, a common base or irregular past form, or a lower-case word
    with a verb's ending ("-ed", "-es", "-ing", "-s")."""
    low = word.lower().replace("\u2019", "'")
    if low in _AUX or low in _BASE_VERBS or low in _IRREGULAR_PAST or low.endswith("n't"):
        return True
    if not word[:1].islower() or len(low) < 4:
        return False
    return low.endswith(("ed", "es", "ing")) or (
        low.endswith("s") and not low.endswith(("ss", "us", "is", "ous", "ics"))
    )


def lead_fault(sentence: str, settings: AnswerKindSettings) -> str | None:
    """Why ``sentence`` may not open an answer (module docstring), or ``None`` when it may."""
    if sentence.rstrip().endswith(":"):
        return LEAD_IN
    if sentence.rstrip().endswith("?"):
        return QUESTION
    if _CONTENTS_END.search(sentence):
        return HEADING
    words = _WORD.findall(sentence)
    number = _SECTION_NUMBER.match(sentence)
    if number:
        after = _WORD.findall(sentence[number.end() :])[: settings.lead_heading_max_words]
        heading = [w for w in after if w[:1].isupper()]
        dotted = number.group(1) is not None
        if (dotted and heading) or len(heading) >= 2 or any(w.lower() in SECTION_WORDS for w in heading):
            return HEADING
    if _CAPTION.match(sentence):
        return CAPTION
    if not is_row(sentence):  # a table row's "Local = 1" is no code
        marks = sum(len(p.findall(sentence)) for p in (_CODE_CALL, _CODE_OPERATOR, _CODE_NAME))
        if marks >= settings.lead_code_min_marks and marks >= settings.lead_code_share * len(
            sentence.split()
        ):
            return CODE
    if len(words) >= settings.lead_min_words_capitalised:
        capitalised = sum(w[:1].isupper() for w in words) / len(words)
        if capitalised >= settings.lead_max_capitalised_share:
            return CAPITALISED
    if not any(verb_like(w) for w in words):
        return NO_VERB
    return None
