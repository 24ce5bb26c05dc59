"""Check set over real documents: verbatim answer phrases with their pages, and whether a read or a hit holds them.

A phrase counts as found on a page when it occurs, after NFKC and whitespace normalisation (and case
folding), in the text a reader gave for that page (for formats without pages: anywhere in the file), or
in a chunk whose page span holds that page. An answer given as several phrases (a table row's label and
its value) counts only when all of them are in the same page text or chunk. Each question names its
``kind`` (``table``, ``multi-column``, ``prose``, ``scan``, ``slide`` …) so hit rates can be reported per
kind, and whether it was written ``blind``: from the source document itself, before deepcite's reading of
that file was looked at. ``eval/real_docs_questions.jsonl`` is the project's set.

:func:`check_quotes` measures the answers' quotes: each cited passage's quote must be the chunk text at its
offsets, and for paged files (PDF) lie on the cited page (``Citation.quote_page``, the page the quote starts
on, where a citation opens) as the reader read it (white space ignored). It also counts quotes on the chunk's
first page (where citations opened before quote pages) and on any page the chunk spans.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from deepcite.answer.pipeline import Citation
from deepcite.errors import InputError
from deepcite.ingest.readers import ReadResult
from deepcite.models import Chunk


class CheckQuestion(BaseModel):
    """One question: the file it is about, a short verbatim answer phrase (or phrases that must occur
    together; ``None`` for a question the files do not answer), the page it is on (the slide number for
    slides; ``None`` for formats without pages), its kind, whether it was written blind, and for a yes/no
    question the verdict its answer phrase settles. ``where`` (prose, table, list, slide …) and ``deep`` (past
    the first third of a long document) describe where the answer is, for per-place figures."""

    id: str
    file: str
    question: str
    answer: str | list[str] | None
    page: int | None = None
    kind: str = "prose"
    blind: bool = False
    verdict: Literal["yes", "no"] | None = None
    where: str | None = None
    deep: bool = False

    @property
    def answerable(self) -> bool:
        """Whether the files state the answer (the question has an answer phrase)."""
        return self.answer is not None

    @property
    def in_table(self) -> bool:
        """Whether the answer phrase was copied from a table row (matched with the row's column headers between its
        cells: :func:`deepcite.evaluation.answer_check.states_answer`)."""
        return self.where == "table"

    def phrases(self) -> list[str]:
        """The normalised answer phrases, all of which a text must hold (none for an unanswerable question)."""
        if self.answer is None:
            return []
        return [normalize(a) for a in ([self.answer] if isinstance(self.answer, str) else self.answer)]


def load_questions(path: Path) -> list[CheckQuestion]:
    """The questions of a JSON Lines check set; a bad line is an :class:`InputError` naming it."""
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(CheckQuestion.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise InputError(
                f"{path.name}:{number}: not a check question ({exc.__class__.__name__}); fix it"
            ) from exc
    return questions


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: how phrases and texts are compared."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def found_on_page(result: ReadResult, question: CheckQuestion) -> bool:
    """Whether a reader's result holds the answer phrase on the question's page."""
    for read in result.documents:
        blocks = read.blocks or []
        if question.page is None or not blocks:
            if holds(read.document.text, question):
                return True
            continue
        if holds(" ".join(b.text for b in blocks if b.page == question.page), question):
            return True
    return False


def chunk_hit(chunk: Chunk, question: CheckQuestion) -> tuple[bool, bool]:
    """(the chunk is of the question's file and holds the phrase, and its page span holds the page)."""
    if chunk.file != question.file or not holds(chunk.text, question):
        return False, False
    if question.page is None:
        return True, True
    last = chunk.page_end or chunk.page
    return True, chunk.page is not None and last is not None and chunk.page <= question.page <= last


def holds(text: str, question: CheckQuestion) -> bool:
    """Whether ``text`` holds every answer phrase of ``question`` (normalised); never for an unanswerable one."""
    normalized = normalize(text)
    phrases = question.phrases()
    return bool(phrases) and all(phrase in normalized for phrase in phrases)


class QuoteCheck(BaseModel):
    """Counts over the cited passages of some answers: quotes that are the chunk text at their offsets, and
    for passages of paged files, quotes on the cited page (the page a citation opens at), on the chunk's
    first page, or on any page the chunk spans."""

    citations: int = 0
    in_chunk: int = 0
    paged: int = 0
    on_cited_page: int = 0
    on_first_page: int = 0
    on_chunk_pages: int = 0

    def add(self, other: QuoteCheck) -> QuoteCheck:
        return QuoteCheck(**{k: getattr(self, k) + getattr(other, k) for k in QuoteCheck.model_fields})

    def rates(self) -> dict[str, float | int]:
        """The shares, with the counts they are of."""
        return {
            "citations": self.citations,
            "quote_in_chunk": round(self.in_chunk / self.citations, 3) if self.citations else 0.0,
            "paged_citations": self.paged,
            "quote_on_cited_page": round(self.on_cited_page / self.paged, 3) if self.paged else 0.0,
            "quote_on_chunk_first_page": round(self.on_first_page / self.paged, 3) if self.paged else 0.0,
            "quote_on_chunk_pages": round(self.on_chunk_pages / self.paged, 3) if self.paged else 0.0,
        }


def page_texts(result: ReadResult) -> dict[int, str]:
    """A read file's text per page, white space removed (empty for formats without pages)."""
    pages: dict[int, list[str]] = {}
    for read in result.documents:
        for block in read.blocks:
            if block.page is not None:
                pages.setdefault(block.page, []).append(block.text)
    return {page: _squeezed(" ".join(texts)) for page, texts in pages.items()}


def check_quotes(citations: Iterable[Citation], pages_of: Callable[[str], dict[int, str]]) -> QuoteCheck:
    """Check the quotes of ``citations`` (those a text cites); ``pages_of(file)`` gives a file's
    :func:`page_texts`."""
    check = QuoteCheck()
    for citation in citations:
        check.citations += 1
        quote = citation.quote
        check.in_chunk += bool(quote) and citation.text[citation.quote_start : citation.quote_end] == quote
        if not citation.file or citation.page is None:
            continue
        pages = pages_of(citation.file)
        if not pages:
            continue
        check.paged += 1
        squeezed = _squeezed(quote)
        spanned = range(citation.page, (citation.page_end or citation.page) + 1)
        on_page = {page: bool(squeezed) and squeezed in pages.get(page, "") for page in spanned}
        check.on_cited_page += on_page.get(citation.quote_page or citation.page, False)
        check.on_first_page += on_page[citation.page]
        check.on_chunk_pages += any(on_page.values())
    return check


def _squeezed(text: str) -> str:
    """NFKC, case-folded, every white space removed."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())
