"""The evidence table of an answer: one row per cited sentence and passage it cited, as the citation check
judged them (claim, quote, document with its authors, year and venue, page, support score, verdict), as records and as CSV. The page is
the one the quote starts on (``page_end`` the one its last sentence starts on, when later), as a citation
opens at it.

    rows = evidence_rows(result)
    text = evidence_csv(rows)

A sentence citing two passages gives two rows; a claim cited by the same passage in several parts (the
summary and the answer say it alike) gives one row, of the part that says it first. A citation the check
removed stays in the table with the verdict ``removed`` and the words it was checked against, so a reader
sees what was dropped and why.
"""

from __future__ import annotations

import csv
import io

from pydantic import BaseModel

from deepcite.answer.pipeline import AnswerResult


class EvidenceRow(BaseModel):
    """One cited sentence and one passage it cited."""

    part: str  # "summary", "answer" or the sub-question
    claim: str
    citation: int
    quote: str
    doc_id: str
    title: str
    authors: str = ""  # the document's authors, "; "-separated
    year: int | None = None
    venue: str | None = None
    file: str | None = None
    page: int | None = None  # the page the quote starts on
    page_end: int | None = None  # the page the quote's last sentence starts on, when later than ``page``
    score: float | None = None
    verdict: str


CSV_COLUMNS = tuple(EvidenceRow.model_fields)


def evidence_rows(result: AnswerResult) -> list[EvidenceRow]:
    """The rows of ``result``'s evidence table, in the order the texts cite (summary, answer, sub-answers),
    one per distinct claim and citation."""
    by_id = {c.id: c for c in result.citations}
    rows, seen = [], set()
    for claim in result.citation_check.claims:
        cited = by_id.get(claim.id)
        key = (claim_key(claim.claim), claim.id)
        if cited is None or key in seen:
            continue
        seen.add(key)
        page = cited.page_at(claim.quote_start)
        page_end = cited.page_at(max(claim.quote_end - 1, claim.quote_start))
        rows.append(
            EvidenceRow(
                part=claim.part,
                claim=claim.claim,
                citation=claim.id,
                quote=cited.text[claim.quote_start : claim.quote_end],
                doc_id=cited.doc_id,
                title=cited.title,
                authors="; ".join(cited.authors),
                year=cited.year,
                venue=cited.venue,
                file=cited.file,
                page=page,
                page_end=page_end if page_end != page else None,
                score=None if claim.score is None else round(claim.score, 4),
                verdict=claim.verdict,
            )
        )
    return rows


def claim_key(claim: str) -> str:
    """What makes two claims the same row: their words, case and spacing aside."""
    return " ".join(claim.lower().split())


def evidence_csv(rows: list[EvidenceRow]) -> str:
    """The rows as CSV with a header line (``csv`` module quoting: commas, quotes and line breaks survive)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.model_dump().items()})
    return out.getvalue()
