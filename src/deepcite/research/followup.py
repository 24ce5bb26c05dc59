"""Follow-up (bridge) queries read from evidence as a person would pick them, and the noise that never runs.

    found = followup_terms(parent, "Do statins reduce the risk of stroke after surgery?",
                           exclude=[], per_passage=6, settings=FollowupSettings())
    found.terms      # ['statin pretreatment', 'ischemic stroke']: noun phrases that bear on the question
    found.skipped    # [SkippedQuery(text='CI 0.91', reason='a statistics fragment'), ...]
    followup_subquestion(found.terms)   # 'What is known about statin pretreatment and ischemic stroke?'

A passage's follow-ups are its title when the title reads as a name, then the names in its text; when none
of those is left, the noun phrases of its text that share a word with the question and add one. A candidate
that is a statistics fragment ("CI 0.91", "p < 0.05", "95%"), a date or bare number ("2001-03"), a table or
figure reference, an abbreviation the passage defines ("IFG" for "impaired fasting glucose (IFG)"), a label of
common words ("Statin group"), a sentence (another paper's whole title), a venue or publisher ("Proceedings of
…", "Association for Computational Linguistics", or any name read from such a line), a name in an author list,
section words ("Main Results Table", "Introduction"), a heading run into the sentence below it ("Qualitative
Analysis Although DPR"), a lettered heading ("D Joint Training of Retriever"), a cited work's author ("Efron and
Tibshirani, 1993"), symbols ("λ = 1.1", "GPT- 4o") or any name of a reference list (a passage with
``reference_list_min_entries`` entry years) is never searched: it is
returned in ``skipped`` with the reason, for the research report. Neither is the title of a file or a publication
(it names the document, which the evidence holds already), nor a name that shares no word with the question when
its passage barely bears on the question (less than ``bridge_min_question_share`` of the question's terms): a
hop from it would drift to an unrelated document.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from deepcite.config import FollowupSettings
from deepcite.models import Candidate, Chunk, SkippedQuery
from deepcite.names import names_in
from deepcite.research.bridge import relation_stems
from deepcite.research.entities import content_words
from deepcite.research.followup_words import (
    CONTRACTION_ENDINGS,
    DATE_WORDS,
    FILE_EXTENSIONS,
    FURNITURE,
    NUMBER_WORDS,
    PHRASE_BREAKS,
    PREFIXES,
    SECTION_WORDS,
    SENTENCE_OPENERS,
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
_PHRASE_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*|[^\w\s]+|\S+")
_SENTENCE_END = re.compile(r"[?!]$|[a-z]{3}\.$")
_SENTENCE_OPEN = re.compile(r"(?:^|[.!?:]\s*|\n\s*)$")
_MIN_PHRASE_WORD = 3  # shorter words ("pH", "of") never make a noun phrase
_YEAR = re.compile(r"1\d{3}|20\d{2}")
_SENTENCE_BREAK = re.compile(r"[.!?]\s")  # a name read across a sentence end ("QALYs. For") ends there
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_NAME_PART = re.compile(r"[\s/-]+")
_QUALIFIER = re.compile(r"(?<=\S)\s*\([^()]*\)$")  # "Kiss and Tell (1945 film)": the name, then what it is
# what follows a cited author's name: "et al.", a year, or co-authors then a year ("Efron and Tibshirani, 1993")
_CITATION_TAIL = re.compile(
    r"(?:\s+et\s+al\b|(?:\s*(?:,|\band\b|&)\s*[A-Z][\w'’-]+)*\s*(?:,\s*|[(\[])(?:1[89]|20)\d\d[a-z]?\b)"
)


@dataclass
class FollowupTerms:
    """The follow-up queries read from one passage, and the candidates skipped as noise."""

    terms: list[str] = field(default_factory=list)
    skipped: list[SkippedQuery] = field(default_factory=list)


def _is_acronym(word: str) -> bool:
    """Capitals only, or capitals and a plural "s" ("QALYs"), at least two letters."""
    letters = [c for c in word.removesuffix("s") if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _defined(acronym: str, context: str) -> bool:
    """Whether ``context`` defines ``acronym`` as the abbreviation of common words: it stands in brackets after a
    word in lower case ("impaired fasting glucose (IFG)") or one a sentence opens with. An acronym never
    defined so is a name ("NASA", "ABBA"), and so is the short form of a name ("International Boxing
    Federation (IBF)"), which other texts write alone."""
    definitions = re.finditer(rf"(^|[.!?]\s+)?(\S+)\s*[(\[]\s*{re.escape(acronym)}\s*[)\],;]", context)
    return any(d.group(1) is not None or not d.group(2)[:1].isupper() for d in definitions)


def _label(term: str, context: str) -> bool:
    """Whether every word of a capitalised name is a label prefix, an acronym, a stop word, or a word ``context``
    also writes in lower case ("Statin group", "Non-AF", "Postoperative AF"): a label, not a name."""
    lower = set(_LOWER_WORD.findall(context))
    parts = [p.strip("()[]'\".,;:") for p in _NAME_PART.split(term)]
    plain = False  # a word that is no acronym: a name of acronyms alone ("AC/DC") is no label
    for part in filter(None, parts):
        low = part.lower()
        if low in lower or low in PREFIXES:
            plain = True
        elif not (_is_acronym(part) or low in STOP_WORDS):
            return False
    return plain


def _quoted_phrase(term: str, settings: FollowupSettings) -> bool:
    """Whether a name that starts in lower case (so the passage quotes it: "batting title") is a noun phrase of
    ``phrase_min_words`` or more words, each no stop word and at least ``_MIN_PHRASE_WORD`` letters long: a
    term of art, searched. A quoted word, foreign words ("sheol", "de facto") or a phrase of small words ("et
    al", "in some instances") is none."""
    words = term.split()
    return (
        term[:1].islower()
        and len(words) >= settings.phrase_min_words
        and all(len(w) >= _MIN_PHRASE_WORD and w.lower() not in STOP_WORDS for w in words)
    )


def _sentence_like(term: str, settings: FollowupSettings) -> bool:
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


_SYMBOLS = re.compile(
    r"[^\w\s'’.,&()/:+?!\"“”–-]|[_@#|\\]"
)  # "λ = 1.1", "R@5", "GPT-4o |": a formula or markup
# a name that opens with a lone capital letter (not the word "A" or "I"): an appendix heading's letter ("D Joint
# Training of Retriever") or a small-caps word the PDF split ("S CIENCEPARSE")
_LETTERED = re.compile(r"[B-HJ-Z]\s+[A-Z]")
_BROKEN_WORD = re.compile(r"\w-\s|\s-\w")  # a word broken at a line end: "GPT- 4o", "PaSa -7b"
_PERSON = re.compile(r"[A-Z][a-zà-ÿ'’-]+(?:\s+[A-Z]\.)*(?:\s+[A-Z][\w'’-]+){1,2}")
# a reference entry's year: "Xiong. 2022. QAFactEval …", "(2019). Title", "2020a."
_REFERENCE_YEAR = re.compile(r"(?:[.,]\s|\()(?:19|20)\d\d[a-z]?\)?\.\s")
# a yes/no question ("Is the Distance Worth It?"): another paper's question-form title, not a name
_ASKED = re.compile(
    r"^(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|may|must)\s.*\?$", re.I
)
_SEGMENT = re.compile(r"[^\n.!?;]+")


def _segment_of(term: str, context: str) -> str | None:
    """The line or sentence of ``context`` that holds ``term`` (its first occurrence), if any."""
    at = context.lower().find(term.lower())
    if at < 0:
        return None
    for m in _SEGMENT.finditer(context):
        if m.start() <= at < m.end():
            return m.group(0)
    return None


def _in_venue_line(term: str, context: str) -> bool:
    """Whether ``term`` stands in a venue, publisher or copyright line of ``context`` ("Proceedings of the 25th
    Conference on Computational Natural Language Learning, Online")."""
    segment = _segment_of(term, context)
    if segment is None:
        return False
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", segment)}
    return bool(words & VENUE_WORDS) or "©" in segment


def _heading_run_on(words: Sequence[str]) -> bool:
    """Whether a word after a term's first (``words``, its tokens that are words) is a capitalised sentence
    opener ("Qualitative Analysis Although DPR", "Evaluation We"): a heading read together with the first
    words of the sentence below it."""
    return any(w[0].isupper() and w.lower().rstrip(".") in SENTENCE_OPENERS for w in words[1:])


def _cited_author(term: str, context: str) -> bool:
    """Whether every place ``context`` names ``term`` is a citation of a work by it ("Efron and Tibshirani,
    1993", "Guo et al. (2021)", "(Radev, 2013)")."""
    places = [m.end() for m in re.finditer(rf"(?<!\w){re.escape(term)}(?!\w)", context)]
    return bool(places) and all(_CITATION_TAIL.match(context, end) for end in places)


def _in_author_list(term: str, context: str) -> bool:
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
    held = f" {entity_key(chunk.title)} {entity_key(chunk.text)} "
    if named and not any(f" {key} " in held for key in map(entity_key, named) if key):
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
    if any(w in VENUE_WORDS for w in lowered) or (context is not None and _in_venue_line(term, context)):
        return VENUE
    if all(w in SECTION_WORDS or w in FURNITURE for w in lowered):
        return SECTION
    if context is not None and _in_author_list(term, context):
        return AUTHOR_LIST
    if context is not None and _cited_author(term, context):
        return CITED_AUTHOR
    if _heading_run_on(words):
        return HEADING_RUN_ON
    if _LETTERED.match(term):  # "D Joint Training of Retriever", "S CI Domain"
        return LETTERED
    if numbers and any(w.lower() in FURNITURE for w in words[:1]):
        return FURNITURE_REFERENCE
    if (
        context is not None
        and len(tokens) == 1
        and _is_acronym(term)
        and _defined(term, f"{context} {evidence}")
    ):
        return STRAY_ACRONYM
    if _sentence_like(term, settings) or _ASKED.match(term):
        return WHOLE_TITLE if title else SENTENCE
    if context is not None and _label(term, context) and not _quoted_phrase(term, settings):
        return LABEL
    return None


def noun_phrases(text: str, question: str, settings: FollowupSettings) -> list[str]:
    """Noun phrases of ``text`` that bear on ``question``: runs of ``phrase_min_words`` to ``phrase_max_words``
    content words (no verb of a finding, number, acronym or punctuation inside) that share a word with the
    question and add at least one, in order of appearance, without repeats."""
    asked = set(tokenize(question))
    out: list[str] = []
    seen: set[str] = set()
    run: list[str] = []

    def close() -> None:
        if settings.phrase_min_words <= len(run) <= settings.phrase_max_words:
            stems = set(tokenize(" ".join(run)))
            phrase = " ".join(run)
            if stems & asked and stems - asked and phrase.lower() not in seen:
                seen.add(phrase.lower())
                out.append(phrase)
        run.clear()

    for m in _PHRASE_TOKEN.finditer(text):
        word = m.group(0)
        low = word.lower()
        if (
            not word[0].isalpha()
            or len(word) < _MIN_PHRASE_WORD
            or low in STOP_WORDS
            or low in PHRASE_BREAKS
            or low in DATE_WORDS
            or low in FURNITURE
            or any(part in NUMBER_WORDS for part in low.split("-"))
            or word in STATISTICS
            or _is_acronym(word)
            or low.endswith("ly")
        ):
            close()
            continue
        opens = not run and bool(_SENTENCE_OPEN.search(text[: m.start()]))
        run.append(low if opens and word[1:].islower() else word)
    close()
    return out


def followup_terms(
    parent: Candidate,
    question: str,
    *,
    exclude: Iterable[str] = (),
    evidence: str = "",
    documents: Collection[str] = (),
    per_passage: int,
    settings: FollowupSettings,
) -> FollowupTerms:
    """The follow-up queries of one evidence passage that the question does not already name.

    Its title when the title reads as a name, then up to ``per_passage`` names from its text (in a document,
    from its sentences holding ``document_name_min_question_share`` of the question's terms); when neither
    gives one, up to ``phrases_per_passage`` of its :func:`noun_phrases`. A candidate whose content words all
    appear in the question, or that ``exclude`` holds (followed already), is passed over; a noisy one
    (:func:`noise_reason`; an abbreviation counts as defined when the passage or the rest of the ``evidence``
    text defines it), or one naming a document of ``documents`` (:func:`document_names`), is skipped and
    reported.
    """
    asked, asked_stems = content_words(question), set(tokenize(question))
    used = {e.lower() for e in exclude}
    found = FollowupTerms()
    reported: set[str] = set()
    text = parent.chunk.text
    held = set(tokenize(text))
    bears = (
        not asked_stems or len(held & asked_stems) / len(asked_stems) >= settings.bridge_min_question_share
    )

    def skip(term: str, reason: str) -> None:
        if term.lower() not in reported:
            reported.add(term.lower())
            found.skipped.append(SkippedQuery(text=term, reason=reason))

    def consider(term: str, *, title: bool = False, name: bool = False) -> bool:
        words = content_words(term)
        if not words or words <= asked or set(tokenize(term)) <= asked_stems or term.lower() in used:
            return False
        reason = noise_reason(term, settings, title=title, context=text if name else None, evidence=evidence)
        if reason is None and names_a_document(term, documents):
            reason = DOCUMENT_TITLE
        if reason is None and not name:  # a phrase read from a venue line or an author list
            reason = (
                VENUE if _in_venue_line(term, text) else AUTHOR_LIST if _in_author_list(term, text) else None
            )
        if reason is None and not bears and not set(tokenize(term)) & asked_stems:
            reason = DRIFT
        if reason is not None:
            skip(term, reason)
            return False
        used.add(term.lower())
        found.terms.append(term)
        return True

    if (
        len(_REFERENCE_YEAR.findall(text)) >= settings.reference_list_min_entries
    ):  # names of cited works' authors
        for name in names_in(text)[:per_passage]:
            skip(name, REFERENCE_LIST)
        return found
    title = parent.chunk.title.strip()
    if title and of_a_document(parent.chunk):
        skip(title, DOCUMENT_TITLE)  # a file's or a paper's title names the document, which is found already
    elif title:
        consider(title, title=True)
    taken = 0
    bearing: set[str] | None = None  # a document's names: only those of sentences bearing on the question
    if of_a_document(parent.chunk) and asked_stems:
        share = settings.document_name_min_question_share
        bearing = {n.lower() for n in bearing_names(parent.chunk, question, share)}
    for found_name in names_in(text):
        name = _SENTENCE_BREAK.split(found_name)[0].rstrip(".")
        if taken >= per_passage:
            break
        if title and name.lower() == title.lower():
            continue
        if bearing is not None and found_name.lower() not in bearing:
            if not content_words(name) <= asked:  # what it is says more than where it stood
                noise = noise_reason(name, settings, context=text, evidence=evidence)
                skip(name, noise or (DRIFT if not bears else OFF_QUESTION))
            continue
        taken += consider(name, name=True)
    if not found.terms:
        phrases = noun_phrases(text, question, settings)
        taken = 0
        for phrase in phrases:
            if taken >= settings.phrases_per_passage:
                break
            taken += consider(phrase)
    return found


def clean_entities(
    entities: Iterable[str], settings: FollowupSettings
) -> tuple[list[str], list[SkippedQuery]]:
    """``entities`` (proposed by the entity graph or read as chain answers) split into those fit to search and
    the noisy ones, each with its reason."""
    kept: list[str] = []
    skipped: list[SkippedQuery] = []
    for entity in entities:
        reason = noise_reason(entity, settings)
        if reason is None:
            kept.append(entity)
        else:
            skipped.append(SkippedQuery(text=entity, reason=reason))
    return kept, skipped


def followup_subquestion(terms: list[str]) -> str:
    """The sub-question of a follow-up hop, as a person would ask it: "What is known about A, B and C?"."""
    names = terms[0] if len(terms) == 1 else f"{', '.join(terms[:-1])} and {terms[-1]}"
    return f"What is known about {names}?"
