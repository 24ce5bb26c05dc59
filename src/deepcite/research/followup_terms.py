"""Follow-up (bridge) queries read from evidence as a person would pick them.

    found = followup_terms(parent, "Do statins reduce the risk of stroke after surgery?",
                           exclude=[], per_passage=6, settings=FollowupSettings())
    found.terms      # ['statin pretreatment', 'ischemic stroke']: noun phrases that bear on the question
    found.skipped    # [SkippedQuery(text='CI 0.91', reason='a statistics fragment'), ...]
    followup_subquestion(found.terms)   # 'What is known about statin pretreatment and ischemic stroke?'

A passage's follow-ups are its title when the title reads as a name, then the names in its text; when none
of those is left, the noun phrases of its text that share a word with the question and add one. A candidate that
is noise (:func:`~deepcite.research.followup.noise_reason`: a statistics fragment, a date, a defined abbreviation,
a venue, a document's own title …) is never searched: it is returned in ``skipped`` with the reason, for the
research report.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from deepcite.config import FollowupSettings
from deepcite.models import Candidate, SkippedQuery
from deepcite.names import names_in
from deepcite.research.entities import content_words
from deepcite.research.followup import (
    AUTHOR_LIST,
    DOCUMENT_TITLE,
    DRIFT,
    OFF_QUESTION,
    REFERENCE_LIST,
    VENUE,
    bearing_names,
    names_a_document,
    noise_reason,
    of_a_document,
)
from deepcite.research.followup_shapes import MIN_PHRASE_WORD, in_author_list, in_venue_line, is_acronym
from deepcite.research.followup_words import (
    DATE_WORDS,
    FURNITURE,
    NUMBER_WORDS,
    PHRASE_BREAKS,
    STATISTICS,
)
from deepcite.text import STOP_WORDS, tokenize

_PHRASE_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*|[^\w\s]+|\S+")
_SENTENCE_OPEN = re.compile(r"(?:^|[.!?:]\s*|\n\s*)$")
_SENTENCE_BREAK = re.compile(r"[.!?]\s")  # a name read across a sentence end ("QALYs. For") ends there
# a reference entry's year: "Xiong. 2022. QAFactEval …", "(2019). Title", "2020a."
_REFERENCE_YEAR = re.compile(r"(?:[.,]\s|\()(?:19|20)\d\d[a-z]?\)?\.\s")


@dataclass
class FollowupTerms:
    """The follow-up queries read from one passage, and the candidates skipped as noise."""

    terms: list[str] = field(default_factory=list)
    skipped: list[SkippedQuery] = field(default_factory=list)


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
            or len(word) < MIN_PHRASE_WORD
            or low in STOP_WORDS
            or low in PHRASE_BREAKS
            or low in DATE_WORDS
            or low in FURNITURE
            or any(part in NUMBER_WORDS for part in low.split("-"))
            or word in STATISTICS
            or is_acronym(word)
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
    (:func:`~deepcite.research.followup.noise_reason`; an abbreviation counts as defined when the passage or the
    rest of the ``evidence`` text defines it), or one naming a document of ``documents``
    (:func:`~deepcite.research.followup.document_names`), is skipped and reported.
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
                VENUE if in_venue_line(term, text) else AUTHOR_LIST if in_author_list(term, text) else None
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


def followup_subquestion(terms: list[str]) -> str:
    """The sub-question of a follow-up hop, as a person would ask it: "What is known about A, B and C?"."""
    names = terms[0] if len(terms) == 1 else f"{', '.join(terms[:-1])} and {terms[-1]}"
    return f"What is known about {names}?"
