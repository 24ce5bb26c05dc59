"""The answer as a report a researcher can keep: Markdown, its references as BibTeX or RIS, its evidence
table as CSV.

    text = render_report(result, ReportFormat.from_str("markdown"))

The Markdown report holds the question, the quick summary, the answer by aspect, each sub-question's
answer, a reference list keyed by the same ``[n]`` ids the text cites (title, authors and year where known,
PMID and DOI links, file and pages, section), the evidence table (:mod:`deepcite.answer.evidence`: each
cited sentence, the quote of the passage it cites, its page, support score and verdict) and the citation
check's counts. BibTeX and RIS hold one entry per cited source document (its passages' ids listed in a
note), so a reference manager imports each study once. CSV is the evidence table alone. The command line
(``deepcite ask --format``) and the HTTP API (``POST /api/report``, ``GET /api/answers/{id}/report``) all
render through this module.

Everything the Markdown report quotes (the question, texts, titles, quotes, file names, sections, links) stays
text wherever the file is rendered, escaped for Markdown only: a ``<`` that would open an HTML tag, comment or
autolink and an ``&`` that would open an entity become entities (``p<0.001`` and ``A & B`` stay as written),
Markdown's link brackets and emphasis marks in one-line fields are escaped (a text's ``[n]`` citation markers
are kept), and only http(s) URLs become links. BibTeX escapes its own special characters, RIS and CSV none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import quote

from deepcite.answer.citations import CITATION_RE
from deepcite.answer.evidence import EvidenceRow, evidence_csv, evidence_rows
from deepcite.answer.pipeline import AnswerResult, Citation
from deepcite.models import _ChoiceEnum

PUBMED_URL = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
DOI_URL = "https://doi.org/{doi}"


class ReportFormat(_ChoiceEnum):
    MARKDOWN = "markdown"
    BIBTEX = "bibtex"
    RIS = "ris"
    CSV = "csv"  # the evidence table

    @property
    def media_type(self) -> str:
        return _MEDIA_TYPES[self]

    @property
    def extension(self) -> str:
        return _EXTENSIONS[self]


_MEDIA_TYPES = {
    ReportFormat.MARKDOWN: "text/markdown; charset=utf-8",
    ReportFormat.BIBTEX: "application/x-bibtex; charset=utf-8",
    ReportFormat.RIS: "application/x-research-info-systems; charset=utf-8",
    ReportFormat.CSV: "text/csv; charset=utf-8",
}
_EXTENSIONS = {
    ReportFormat.MARKDOWN: "md",
    ReportFormat.BIBTEX: "bib",
    ReportFormat.RIS: "ris",
    ReportFormat.CSV: "csv",
}


def render_report(result: AnswerResult, fmt: ReportFormat) -> str:
    """The report of ``result`` in ``fmt`` (see the module docstring)."""
    if fmt is ReportFormat.MARKDOWN:
        return markdown_report(result)
    if fmt is ReportFormat.BIBTEX:
        return bibtex_references(cited_sources(result))
    if fmt is ReportFormat.CSV:
        return evidence_csv(evidence_rows(result))
    return ris_references(cited_sources(result))


def report_filename(result: AnswerResult, fmt: ReportFormat) -> str:
    """A file name for the report: ``deepcite-<first words of the question>.<ext>``."""
    words = re.findall(r"[a-z0-9]+", result.query.lower())[:8]
    kind = "-evidence" if fmt is ReportFormat.CSV else ""
    return f"deepcite-{'-'.join(words) or result.request_id}{kind}.{fmt.extension}"


def cited_references(result: AnswerResult) -> list[Citation]:
    """The citations the texts cite, by id (every citation of the response when none is cited)."""
    cited = set(result.citation_check.cited_ids)
    return [c for c in result.citations if c.id in cited] or list(result.citations)


def cited_sources(result: AnswerResult) -> list[list[Citation]]:
    """The cited passages grouped by source document (PMID, DOI, file or document id), first cited first."""
    groups: dict[str, list[Citation]] = {}
    for citation in cited_references(result):
        groups.setdefault(_source_key(citation), []).append(citation)
    return list(groups.values())


# -- Markdown -------------------------------------------------------------------------------------------
def markdown_report(result: AnswerResult) -> str:
    """The summary, the answer by aspect, sub-answers, references and the citation check, as Markdown."""
    check = result.citation_check
    lines = [
        f"# {_md_line(result.query)}",
        "",
        "## Summary",
        "",
        _md_prose(result.summary),
        "",
        "## Answer",
        "",
    ]
    lines += [_demote(_md_prose(result.answer)), ""]
    if result.subanswers:
        lines += ["## Sub-questions", ""]
        for sub in result.subanswers:
            lines += [f"### {_md_line(sub.subquestion)}", "", _md_prose(sub.answer), ""]
    lines += ["## References", ""]
    lines += [f"{c.id}. {_reference_line(c)}" for c in cited_references(result)] or ["None."]
    rows = evidence_rows(result)
    if rows:
        lines += ["", "## Evidence table", "", *_evidence_table(rows)]
    request_id = re.sub(r"[`\s]+", " ", result.request_id).strip()  # a code span cannot hold a backtick
    lines += [
        "",
        "## Citation check",
        "",
        f"{check.sentences} sentences checked: {check.cited} cited, {check.repaired} replaced by the unknown "
        f"phrase, {check.dropped} dropped, {check.invalid_ids} invalid citation ids removed.",
        "",
        f"Request `{request_id}`; numbers in square brackets refer to the references above.",
        "",
    ]
    return "\n".join(lines)


def _evidence_table(rows: list[EvidenceRow]) -> list[str]:
    """The evidence rows as a Markdown table (pipes and line breaks in the texts escaped)."""

    def cell(value: object) -> str:
        return _md_prose(re.sub(r"\s+", " ", str(value))).replace("|", "\\|").strip()

    lines = [
        "| Claim | Quote | Document | Page | Support | Verdict |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        page = "" if row.page is None else str(row.page)
        score = "" if row.score is None else f"{row.score:.2f}"
        document = f"[{row.citation}] {_md_line(row.title or row.doc_id)}"
        lines.append(
            f"| {cell(row.claim)} | {cell(row.quote)} | {document} | {page} | {score} | {cell(row.verdict)} |"
        )
    return lines


def _demote(text: str) -> str:
    """The long answer's ``## aspect`` headings one level down, under ``## Answer``."""
    return re.sub(r"^(#{1,5}) ", r"#\1 ", text, flags=re.M)


def _authors(names: Sequence[str], most: int = 3) -> str:
    if len(names) > most:
        return ", ".join(names[:most]) + " et al."
    return ", ".join(names)


def _reference_line(c: Citation) -> str:
    parts: list[str] = []
    who = _md_line(_authors(c.authors))
    if who or c.year:
        parts.append(f"{who} ({c.year})" if who and c.year else who or f"({c.year})")
    parts.append(f"*{_md_line(c.title or c.doc_id)}*")
    if c.venue:
        parts.append(_md_line(c.venue))
    links = []
    if c.pmid:
        links.append(f"PMID [{_md_label(c.pmid)}]({PUBMED_URL.format(pmid=quote(c.pmid, safe=''))})")
    if c.doi:
        links.append(f"DOI [{_md_label(c.doi)}]({DOI_URL.format(doi=quote(c.doi, safe='/'))})")
    if c.url and not (c.pmid or c.doi) and re.match(r"https?://", c.url, flags=re.I):
        links.append(f"<{quote(c.url, safe=_URL_SAFE)}>")
    where = _md_line(_location(c))
    section = f"section: {_md_line(c.section)}" if c.section else ""
    tail = "; ".join(x for x in [*links, where, section] if x)
    return ". ".join(parts) + (f". {tail}." if tail else ".")


# what a URL keeps as it is in an autolink; anything else (spaces, quotes, angle brackets) is %-encoded
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~"


def _html(text: str) -> str:
    """What a Markdown renderer would read as HTML, as text: a ``<`` before a letter, ``/``, ``!`` or ``?`` (a
    tag, comment or autolink) and an ``&`` starting an entity become entities; any other ``<``, ``>`` or ``&``
    (``p<0.001``, ``A & B``) is shown as it is and stays as written."""
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", re.sub(r"&(?=#?\w+;)", "&amp;", text))


def _md_prose(text: str) -> str:
    """A text the report quotes as paragraphs (summary, answer, sub-answer): HTML as text, square brackets
    escaped except in citation markers (``CITATION_RE``: no link can be made), a line's leading ``>`` escaped,
    the text's own headings and emphasis kept."""
    out, last = [], 0
    for match in CITATION_RE.finditer(text):
        out += [_escape_brackets(_html(text[last : match.start()])), match.group()]
        last = match.end()
    out.append(_escape_brackets(_html(text[last:])))
    return re.sub(r"^(\s{0,3})>", r"\1\\>", "".join(out), flags=re.M)  # a line of its own, not a block quote


def _escape_brackets(text: str) -> str:
    return re.sub(r"([\[\]])", r"\\\1", text)


def _md_line(text: str) -> str:
    """A one-line field (question, heading, title, author, file, section): line breaks as spaces, HTML as
    text, Markdown's marks escaped."""
    return _md_escape(_html(re.sub(r"\s+", " ", text).strip()))


def _md_label(text: str) -> str:
    """A link's text (a PMID or DOI): HTML as text, brackets escaped, the rest as it is."""
    return _escape_brackets(_html(re.sub(r"\s+", " ", text).strip()))


def _md_escape(text: str) -> str:
    return re.sub(r"([\\*_`\[\]#|])", r"\\\1", text)


def _location(c: Citation) -> str:
    """``paper.pdf, pp. 3–4`` (file and pages as far as known)."""
    pages = ""
    if c.page is not None:
        pages = f"pp. {c.page}–{c.page_end}" if c.page_end not in (None, c.page) else f"p. {c.page}"
    return ", ".join(x for x in (c.file or "", pages) if x)


# -- BibTeX and RIS -------------------------------------------------------------------------------------
def _source_key(c: Citation) -> str:
    return f"pmid:{c.pmid}" if c.pmid else f"doi:{c.doi.lower()}" if c.doi else c.file or c.doc_id


def _first(group: list[Citation], field: str) -> object:
    return next((getattr(c, field) for c in group if getattr(c, field)), None)


def _note(group: list[Citation]) -> str:
    cited = ", ".join(f"[{c.id}]" + (f" {_location(c)}" if _location(c) else "") for c in group)
    return f"deepcite passages {cited}"


def bibtex_references(sources: list[list[Citation]]) -> str:
    """One BibTeX entry per source: ``@article`` when it has a PMID or DOI, ``@inproceedings`` when its venue is
    a proceedings, else ``@misc``; the venue as its ``journal``, ``booktitle`` or ``publisher``."""
    entries, keys = [], set()
    for group in sources:
        head = group[0]
        authors: list[str] = list(_first(group, "authors") or [])
        year, pmid, doi = _first(group, "year"), _first(group, "pmid"), _first(group, "doi")
        stem = re.sub(r"[^a-z0-9]", "", (_surname(authors[0]) if authors else "source").lower()) or "source"
        word = next(iter(re.findall(r"[a-z]{4,}", (head.title or head.doc_id).lower())), "")
        key = f"{stem}{year or ''}{word}"
        n = 1
        while key in keys:
            n += 1
            key = f"{stem}{year or ''}{word}{n}"
        keys.add(key)
        venue = str(_first(group, "venue") or "")
        kind = "article" if pmid or doi else "inproceedings" if venue.startswith("Proceedings") else "misc"
        fields = {
            "title": head.title or head.doc_id,
            "author": " and ".join(authors),
            _BIB_VENUE[kind]: venue,
            "year": str(year or ""),
            "doi": str(doi or ""),
            "pmid": str(pmid or ""),
            "url": PUBMED_URL.format(pmid=pmid) if pmid else str(_first(group, "url") or ""),
            "file": str(_first(group, "file") or ""),
            "note": _note(group),
        }
        body = ",\n".join(f"  {name} = {{{_bib_escape(value)}}}" for name, value in fields.items() if value)
        entries.append(f"@{kind}{{{key},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")


def _surname(name: str) -> str:
    """The family name in "Lo, Kyle", "Hart RG" (PubMed's surname and initials) or "Kyle Lo"."""
    if "," in name:
        return name.split(",")[0]
    words = name.split()
    return words[0] if len(words) > 1 and words[-1].isupper() else words[-1] if words else ""


_BIB_VENUE = {"article": "journal", "inproceedings": "booktitle", "misc": "publisher"}  # where the venue goes


def _bib_escape(text: str) -> str:
    return re.sub(r"([&%$#_{}])", r"\\\1", text)


def ris_references(sources: list[list[Citation]]) -> str:
    """One RIS record per source (``TY  - JOUR`` with a PMID or DOI, else ``GEN``), its venue as ``T2`` (a
    journal or proceedings) or ``PB`` (a publisher), ending ``ER  -``."""
    records = []
    for group in sources:
        head = group[0]
        pmid, doi, year = _first(group, "pmid"), _first(group, "doi"), _first(group, "year")
        lines = [f"TY  - {'JOUR' if pmid or doi else 'GEN'}", f"TI  - {head.title or head.doc_id}"]
        lines += [f"AU  - {name}" for name in _first(group, "authors") or []]
        if year:
            lines.append(f"PY  - {year}")
        if venue := _first(group, "venue"):
            lines.append(
                f"{'T2' if pmid or doi or str(venue).startswith('Proceedings') else 'PB'}  - {venue}"
            )
        if doi:
            lines.append(f"DO  - {doi}")
        if pmid:
            lines += [f"AN  - PMID:{pmid}", f"UR  - {PUBMED_URL.format(pmid=pmid)}"]
        elif _first(group, "url"):
            lines.append(f"UR  - {_first(group, 'url')}")
        if _first(group, "file"):
            lines.append(f"L1  - {_first(group, 'file')}")
        lines += [f"N1  - {_note(group)}", "ER  - "]
        records.append("\n".join(lines))
    return "\n\n".join(records) + ("\n" if records else "")
