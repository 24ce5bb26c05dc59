"""Why a follow-up (bridge) query read from evidence never runs: the noise, each kind with its reason
(:mod:`deepcite.research.followup_terms` reads the candidates).

A candidate that is a statistics fragment ("CI 0.91", "p < 0.05", "95%"), a date or bare number ("2001-03"), a
table or figure reference, an abbreviation the passage defines ("IFG" for "impaired fasting glucose (IFG)"), a
label of common words ("Statin group"), a sentence (another paper's whole title), a venue or publisher
("Proceedings of …", "Association for Computational Linguistics", or any name read from such a line), a name in an
author list, section words ("Main Results Table", "Introduction"), a heading run into the sentence below it
("Qualitative Analysis Although DPR"), a lettered heading ("D Joint Training of Retriever"), a cited work's author
("Efron and Tibshirani, 1993"), symbols ("λ = 1.1", "GPT- 4o") or any name of a reference list (a passage with
``reference_list_min_entries`` entry years) is never searched: it is returned in ``skipped`` with the reason, for
the research report. Neither is the title of a file or a publication (it names the document, which the evidence
holds already: :func:`document_names`), nor a name that shares no word with the question when its passage barely
bears on the question (less than ``bridge_min_question_share`` of the question's terms): a hop from it would drift
to an unrelated document.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import PurePath

from deepcite.config import FollowupSettings
from deepcite.models import Chunk
from deepcite.names import names_in
from deepcite.research.bridge import mentioned_keys, relation_stems
from deepcite.research.entities import content_words
from deepcite.research.followup_shapes import (
    acronym_defined,
    in_author_list,
    in_venue_line,
    is_acronym,
    is_cited_author,
    is_heading_run_on,
    is_label,
    is_quoted_phrase,
    is_sentence_like,
)
from deepcite.research.followup_words import (
    CONTRACTION_ENDINGS,
    DATE_WORDS,
    FILE_EXTENSIONS,
    FURNITURE,
    SECTION_WORDS,
    STATISTICS,
    STATISTICS_SYMBOLS,
    VENUE_WORDS,
    VERSION_WORDS,
)
from deepcite.retrieval.graph.extract import entity_key
from deepcite.text import STOP_WORDS, split_sentences, tokenize

STATISTICS_FRAGMENT = "a statistics fragment"
DATE_OR_NUMBER = "a date or a bare number"
FURNITURE_REFERENCE = "a table or figure reference"
STRAY_ACRONYM = "a stray acronym"
LABEL = "a label of common words, not a name"
WHOLE_TITLE = "a passage's whole title, not a name"
SENTENCE = "a sentence, not a name"
DOCUMENT_TITLE = "a document's title, not a name"
VENUE = "a venue or publisher"
AUTHOR_LIST = "an author list"
SECTION = "section words"
SYMBOLS = "symbols, not a name"
REFERENCE_LIST = "read from a reference list"
HEADING_RUN_ON = "a heading run into a sentence, not a name"
OFF_QUESTION = "read from a sentence of the document that does not bear on the question"
LETTERED = "a lettered heading or a small-caps word split apart, not a name"
CITED_AUTHOR = "a cited work's author"
DRIFT = "drifts from the question: shares no word with it, read from a passage that barely bears on it"
FILE_NAME = "a file name or an identifier in code, not a name"
CONTRACTION = "a contraction, not a name"
VERSION_TAG = "a release or version tag, not a name"

# numbers (with their separators), words (with inner apostrophes, dots and hyphens), single symbols
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|[^\W\d_]+(?:['’.-][^\W\d_]+)*\.?|[^\w\s]")
_YEAR = re.compile(r"1\d{3}|20\d{2}")
_SYMBOLS = re.compile(
    r"[^\w\s'’.,&()/:+?!\"“”–-]|[_@#|\\]"
)  # "λ = 1.1", "R@5", "GPT-4o |": a formula or markup
# a name that opens with a lone capital letter (not the word "A" or "I"): an appendix heading's letter ("D Joint
# Training of Retriever") or a small-caps word the PDF split ("S CIENCEPARSE")
_LETTERED = re.compile(r"[B-HJ-Z]\s+[A-Z]")
_BROKEN_WORD = re.compile(r"\w-\s|\s-\w")  # a word broken at a line end: "GPT- 4o", "PaSa -7b"
# a yes/no question ("Is the Distance Worth It?"): another paper's question-form title, not a name
_ASKED = re.compile(
    r"^(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|may|must)\s.*\?$", re.I
)
# a file's name ("wiki_duck.html") or a name in code: words joined by "_" ("snowfall_perc"), a lower-case word
# numbered ("query1")
_FILE_NAME = re.compile(r"\S+\.([A-Za-z0-9]{1,5})")
_IDENTIFIER = re.compile(r"[^\W\d_]+(?:_[^\W_]+)+|[a-z]+\d+")
_CONTRACTED = re.compile(r"([^\W\d_]+)['’]([A-Za-z]{1,2})")
# a release: "v0.5.5", "v2", "1.2.3", "2.0.1-rc1", "RC1", "beta2" ("V2", a rocket, and "GPT-4o" are names)
_VERSION = re.compile(
    r"(?:[vV]\d+(?:\.\d+)+|v\d+|\d+(?:\.\d+){2,})(?:[-.+]?(?i:rc|alpha|beta|a|b|pre|dev|post)\.?\d*)?"
    r"|(?i:rc|alpha|beta|pre|preview|dev|nightly|snapshot|post)[-.]?\d+"
)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
# what parts a web page's title into its name and its site's ("Duck - Wikipedia", "Pricing | Upwork")
_TITLE_PARTS = re.compile(r"\s+[-–—|·]\s+")


def kind_reason(term: str) -> str | None:
    """Why ``term`` can never name a hop whatever it was read from (``None`` when it may): a file's name or an
    identifier in code ("wiki_duck.html", "query1"), a contraction ("We'd", "don't"), a release or version tag
    ("RC1", "v0.5.5", "Version 2.0")."""
    term = term.strip()
    tokens = term.split()
    versioned = any(t.lower() in VERSION_WORDS for t in tokens)
    tagged = [t for t in tokens if _VERSION.fullmatch(t) or (versioned and _NUMBER.fullmatch(t))]
    if tagged and all(t in tagged or t.lower() in VERSION_WORDS for t in tokens):
        return VERSION_TAG
    if len(tokens) != 1:
        return None
    ext = _FILE_NAME.fullmatch(term)
    if (ext and ext.group(1).lower() in FILE_EXTENSIONS) or _IDENTIFIER.fullmatch(term):
        return FILE_NAME
    contracted = _CONTRACTED.fullmatch(term)
    if contracted:
        base, ending = contracted.group(1).lower(), contracted.group(2).lower()
        if ending in CONTRACTION_ENDINGS and (base in STOP_WORDS or (base.endswith("n") and ending == "t")):
            return CONTRACTION
    return None


def of_a_document(chunk: Chunk) -> bool:
    """Whether the passage is part of a document whose title names the document rather than an entity: a file
    the user ingested, or a publication (PMID, DOI or authors); an encyclopedia passage's title is its entity."""
    return bool(chunk.file or chunk.pmid or chunk.doi or chunk.authors)


def _name_words(name: str) -> str:
    """The words of a name, numbers and stop words aside, in one order: "release notes Lantern" and "Lantern 2.3
    release notes" read alike."""
    return " ".join(sorted(w for w in content_words(entity_key(name)) if not _NUMBER.fullmatch(w)))


def document_names(chunks: Iterable[Chunk]) -> frozenset[str]:
    """What names the documents of ``chunks`` (those :func:`of_a_document`): each title, the parts of a web
    page's title ("Duck" and "Wikipedia" of "Duck - Wikipedia"), the file's name and its stem, each as its words
    (:func:`names_a_document`). A hop named so would search for a document the research holds already."""
    names: set[str] = set()
    for chunk in chunks:
        if not of_a_document(chunk):
            continue
        title = chunk.title.strip()
        names.update(_name_words(part) for part in [title, *_TITLE_PARTS.split(title)])
        if chunk.file:
            file = PurePath(chunk.file).name
            names.update((_name_words(file), _name_words(PurePath(file).stem)))
    names.discard("")
    return frozenset(names)


def names_a_document(term: str, documents: Collection[str]) -> bool:
    """Whether ``term`` holds the words of a name of ``documents`` (:func:`document_names`) and no others, in any
    order and numbers aside ("15 National Flag of Canada Day", "release notes Lantern")."""
    words = _name_words(term) if documents else ""
    return bool(words) and words in documents


def bearing_names(chunk: Chunk, question: str, share: float) -> set[str]:
    """The names a passage of a document may give a hop, as written: those of its sentences holding at least
    ``share`` of the question's relation words (:func:`~deepcite.research.bridge.relation_stems`: its terms
    that are neither words of the document's title nor of a name the question gives; all its terms when none
    is left). A document's subject is in all of its sentences, what the question asks of it only in some. A
    passage of a document that names none of the names the question gives (in its text or its title) is about
    something else: it gives none."""
    named = names_in(question)
    if named and not mentioned_keys(chunk, {key for key in map(entity_key, named) if key}):
        return set()
    asked = relation_stems(question, chunk.title, named) or set(tokenize(question))
    if not asked:
        return set(names_in(chunk.text))
    return {
        n
        for x in split_sentences(chunk.text)
        if len(set(tokenize(x)) & asked) / len(asked) >= share
        for n in names_in(x)
    }


def noise_reason(
    term: str,
    settings: FollowupSettings,
    *,
    title: bool = False,
    context: str | None = None,
    evidence: str = "",
) -> str | None:
    """Why ``term`` would be a noisy follow-up query (``None`` when it is a fine one).

    ``title`` says the term is a passage's title, so a sentence-like one is reported as a copied title;
    ``context`` is the text a name was read from, so a label of its common words is told from a name, and an
    abbreviation that ``context`` or the rest of the ``evidence`` defines from an acronym that is a name.
    """
    kind = kind_reason(term)
    if kind is not None:
        return kind
    tokens = _TOKEN.findall(term)
    words = [t for t in tokens if t[0].isalpha()]
    numbers = [t for t in tokens if t[0].isdigit()]
    symbols = {t for t in tokens if not t[0].isalnum()}
    stats = [w for w in words if w.rstrip(".") in STATISTICS]
    if numbers and (stats or symbols & STATISTICS_SYMBOLS):
        return STATISTICS_FRAGMENT
    if _SYMBOLS.search(term) or _BROKEN_WORD.search(term):
        return SYMBOLS
    content = [
        w
        for w in words
        if len(w) > 1
        and w.rstrip(".") not in STATISTICS
        and w.lower().rstrip(".") not in DATE_WORDS
        and w.lower() not in FURNITURE
    ]
    if not content:
        if any(w.lower() in FURNITURE for w in words):
            return FURNITURE_REFERENCE
        return STATISTICS_FRAGMENT if stats else DATE_OR_NUMBER
    if len(content) == 1 and any(_YEAR.fullmatch(n) for n in numbers):  # "1968 Place", "Class of 1999"
        return DATE_OR_NUMBER
    lowered = [w.lower().rstrip(".") for w in content]
    if any(w in VENUE_WORDS for w in lowered) or (context is not None and in_venue_line(term, context)):
        return VENUE
    if all(w in SECTION_WORDS or w in FURNITURE for w in lowered):
        return SECTION
    if context is not None and in_author_list(term, context):
        return AUTHOR_LIST
    if context is not None and is_cited_author(term, context):
        return CITED_AUTHOR
    if is_heading_run_on(words):
        return HEADING_RUN_ON
    if _LETTERED.match(term):  # "D Joint Training of Retriever", "S CI Domain"
        return LETTERED
    if numbers and any(w.lower() in FURNITURE for w in words[:1]):
        return FURNITURE_REFERENCE
    if (
        context is not None
        and len(tokens) == 1
        and is_acronym(term)
        and acronym_defined(term, f"{context} {evidence}")
    ):
        return STRAY_ACRONYM
    if is_sentence_like(term, settings) or _ASKED.match(term):
        return WHOLE_TITLE if title else SENTENCE
    if context is not None and is_label(term, context) and not is_quoted_phrase(term, settings):
        return LABEL
    return None
