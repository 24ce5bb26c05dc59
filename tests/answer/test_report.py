"""Reports to keep: Markdown with a numbered reference list, and the same references as BibTeX and RIS."""

from __future__ import annotations

import re

import pytest

from deepcite.answer.citations import CitationCheck, ClaimCheck
from deepcite.answer.evidence import evidence_rows
from deepcite.answer.pipeline import AnswerResult, Citation, SubAnswer
from deepcite.answer.report import ReportFormat, render_report, report_filename
from deepcite.errors import InputError


def citation(i: int, **fields: object) -> Citation:
    base = {
        "id": i,
        "chunk_id": f"c{i}",
        "doc_id": f"d{i}",
        "text": "passage",
        "score": 0.5,
        "title": f"Study {i}",
    }
    return Citation.model_validate({**base, **fields})


@pytest.fixture
def result() -> AnswerResult:
    return AnswerResult(
        request_id="req-7",
        query="Does warfarin prevent stroke in atrial fibrillation?",
        summary="Warfarin reduced stroke by two thirds [1]. Bleeding was rare [3].",
        answer="## Stroke prevention\nWarfarin reduced stroke by two thirds [1].\n\n## Harms\nBleeding was rare [3].",
        subanswers=[SubAnswer(subquestion="How often does bleeding occur?", answer="Bleeding was rare [3].")],
        citations=[
            citation(1, pmid="111", year=2014, authors=["Hart RG", "Pearce LA", "Aguilar MI", "Smith J"]),
            citation(2, pmid="222"),  # in the context, never cited
            citation(3, doi="10.1000/x_y", file="trials/bleeding.pdf", page=4, page_end=5, section="Results"),
            citation(4, pmid="111", chunk_id="c4", year=2014),  # a second passage of study 1
        ],
        citation_check=CitationCheck(sentences=6, cited=6, cited_ids=[1, 3, 4]),
    )


def test_markdown_holds_summary_answer_subanswers_references_and_the_check(result: AnswerResult) -> None:
    text = render_report(result, ReportFormat.from_str("markdown"))
    assert text.startswith("# Does warfarin prevent stroke in atrial fibrillation?")
    assert "## Summary\n\nWarfarin reduced stroke by two thirds [1]." in text
    assert "### Stroke prevention" in text and "### Harms" in text  # aspects under ## Answer
    assert "### How often does bleeding occur?" in text
    refs = text.split("## References", 1)[1].split("## Citation check", 1)[0]
    assert re.findall(r"^(\d+)\. ", refs, flags=re.M) == ["1", "3", "4"]  # cited ids only, same numbers
    assert (
        "1. Hart RG, Pearce LA, Aguilar MI et al. (2014). *Study 1*. PMID [111](https://pubmed.ncbi.nlm.nih.gov/111/)."
        in refs
    )
    assert (
        "DOI [10.1000/x_y](https://doi.org/10.1000/x_y); trials/bleeding.pdf, pp. 4–5; section: Results."
        in refs
    )
    assert (
        "6 sentences checked: 6 cited, 0 replaced by the unknown phrase, 0 dropped, 0 invalid citation ids"
        in text
    )


def test_bibtex_has_one_entry_per_cited_study(result: AnswerResult) -> None:
    text = render_report(result, ReportFormat.BIBTEX)
    assert text.count("@article{") == 2  # passages 1 and 4 are one study
    assert "@article{hart2014study," in text
    assert "author = {Hart RG and Pearce LA and Aguilar MI and Smith J}" in text
    assert "doi = {10.1000/x\\_y}" in text and "file = {trials/bleeding.pdf}" in text
    assert "note = {deepcite passages [1], [4]}" in text
    assert "222" not in text  # in the context but never cited


def test_ris_records_end_with_er(result: AnswerResult) -> None:
    text = render_report(result, ReportFormat.RIS)
    records = text.strip().split("\n\n")
    assert len(records) == 2 and all(
        r.startswith("TY  - JOUR") and r.rstrip().endswith("ER  -") for r in records
    )
    assert "AU  - Hart RG" in records[0] and "PY  - 2014" in records[0] and "AN  - PMID:111" in records[0]
    assert "DO  - 10.1000/x_y" in records[1] and "L1  - trials/bleeding.pdf" in records[1]


def test_file_name_and_unknown_format(result: AnswerResult) -> None:
    assert (
        report_filename(result, ReportFormat.RIS)
        == "deepcite-does-warfarin-prevent-stroke-in-atrial-fibrillation.ris"
    )
    with pytest.raises(InputError, match="markdown, bibtex, ris"):
        ReportFormat.from_str("docx")


HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def test_markdown_keeps_what_it_quotes_as_text(result: AnswerResult) -> None:
    """A question, sub-question, passage title, file, section, claim or quote holding HTML or Markdown link
    syntax stays text: no raw tag, no link but the report's own, headings on one line."""
    hostile = result.model_copy(
        update={
            "query": f"Does warfarin work? {HOSTILE}\n# injected heading",
            "summary": f"Warfarin works [1]. {HOSTILE} [click](javascript:alert(3)) [1, 3].",
            "answer": f"## Harms {HOSTILE}\nBleeding was rare [3].",
            "subanswers": [SubAnswer(subquestion=f"Bleeding? {HOSTILE}", answer=f"Rare {HOSTILE} [3].")],
            "citations": [
                citation(1, pmid="111", title=f"Study {HOSTILE}", text=f"{HOSTILE} passage"),
                citation(3, doi="10.1000/x_y", file=f"a{HOSTILE}.pdf", section=f"Results {HOSTILE}"),
                citation(4, url="javascript:alert(4)", title="[x](javascript:alert(5))"),
            ],
            "citation_check": CitationCheck(
                sentences=3,
                cited=3,
                cited_ids=[1, 3, 4],
                claims=[
                    ClaimCheck(
                        part="summary",
                        claim=f"Claim {HOSTILE} | cell",
                        id=1,
                        supported=True,
                        quote_start=0,
                        quote_end=len(HOSTILE),
                    )
                ],
            ),
        }
    )
    text = render_report(hostile, ReportFormat.MARKDOWN)
    assert not re.search(r"<[A-Za-z/!?]", text.replace("<https://", ""))  # no tag of any kind
    assert "&lt;script>alert(2)&lt;/script>" in text
    first = text.splitlines()[0]
    assert first.startswith("# Does warfarin work? &lt;img src=x onerror=alert(1)>&lt;script>")
    assert first.endswith("\\# injected heading")  # one heading: the question's line break is a space
    assert "### Bleeding? &lt;img" in text and "### Harms &lt;img" in text
    assert "\\[click\\](javascript:alert(3))" in text and "\\[x\\](javascript:alert(5))" in text
    assert not re.search(r"(?<!\\)\]\(javascript", text)  # escaped brackets: text, never a link
    assert "javascript:alert(4)" not in text  # a URL becomes a link only when it is http(s)
    assert "Warfarin works [1]." in text and "[1, 3]." in text  # citation markers are kept
    assert "PMID [111](https://pubmed.ncbi.nlm.nih.gov/111/)" in text
    table = text.split("## Evidence table", 1)[1].splitlines()
    row = next(line for line in table if "Claim &lt;" in line)
    assert "Claim &lt;img" in row and "\\| cell" in row
    assert len(re.split(r"(?<!\\)\|", row)) == 8  # six cells: the claim's pipe is escaped


def test_each_format_escapes_for_itself_only(result: AnswerResult) -> None:
    """A p-value, an ampersand or a written entity reads as written: Markdown escapes only what would be
    markup, BibTeX its own specials, RIS and CSV nothing."""
    said = "Stroke fell (p<0.001; HR > 0.5) in R&D & care, not &amp; [1]."
    quoted = result.model_copy(
        update={
            "summary": said,
            "citations": [citation(1, pmid="111", title="Risk & benefit, p<0.05", text=said)],
            "citation_check": CitationCheck(
                sentences=1,
                cited=1,
                cited_ids=[1],
                claims=[ClaimCheck(part="summary", claim=said, id=1, supported=True, quote_end=len(said))],
            ),
        }
    )
    markdown = render_report(quoted, ReportFormat.MARKDOWN)
    assert "(p<0.001; HR > 0.5) in R&D & care, not &amp;amp; [1]." in markdown
    assert "&lt;0" not in markdown and "&gt;" not in markdown
    assert "*Risk & benefit, p<0.05*" in markdown
    assert "title = {Risk \\& benefit, p<0.05}" in render_report(quoted, ReportFormat.BIBTEX)
    assert "TI  - Risk & benefit, p<0.05" in render_report(quoted, ReportFormat.RIS)
    assert "(p<0.001; HR > 0.5) in R&D & care" in render_report(quoted, ReportFormat.CSV)


def test_the_evidence_table_has_one_row_per_claim_and_citation(result: AnswerResult) -> None:
    """The summary and the answer saying the same sentence with the same citation give one row."""
    claim = "Warfarin reduced stroke by two thirds."
    said = ClaimCheck(part="summary", claim=claim, id=1, supported=True, quote_end=8)
    checked = result.model_copy(
        update={
            "citation_check": CitationCheck(
                claims=[
                    said,
                    said.model_copy(
                        update={"part": "answer", "claim": " warfarin reduced  stroke by two thirds."}
                    ),
                    said.model_copy(update={"part": "answer", "id": 3}),
                ]
            )
        }
    )
    rows = evidence_rows(checked)
    assert [(r.part, r.citation) for r in rows] == [("summary", 1), ("answer", 3)]
    assert render_report(checked, ReportFormat.CSV).count(claim) == 2


def test_references_and_the_evidence_table_carry_authors_year_and_venue(result: AnswerResult) -> None:
    paper = citation(
        1,
        title="S2ORC: The Semantic Scholar Open Research Corpus",
        authors=["Kyle Lo", "Lucy Lu Wang"],
        year=2020,
        venue="Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
        text="S2ORC is a large corpus of academic papers.",
    )
    filing = citation(2, title="Galaxy Gaming, Inc. Form 10-K", year=2021, venue="Galaxy Gaming, Inc.")
    cited = result.model_copy(
        update={
            "citations": [paper, filing],
            "citation_check": CitationCheck(
                cited_ids=[1, 2],
                claims=[
                    ClaimCheck(part="summary", claim="S2ORC is large.", id=1, supported=True, quote_end=8)
                ],
            ),
        }
    )
    bibtex = render_report(cited, ReportFormat.BIBTEX)
    assert "@inproceedings{lo2020semantic," in bibtex  # the first author's surname
    assert "author = {Kyle Lo and Lucy Lu Wang}" in bibtex and "year = {2020}" in bibtex
    assert "booktitle = {Proceedings of the 58th Annual Meeting" in bibtex
    assert "publisher = {Galaxy Gaming, Inc.}" in bibtex and "year = {2021}" in bibtex
    ris = render_report(cited, ReportFormat.RIS)
    assert "AU  - Kyle Lo" in ris and "PY  - 2020" in ris and "T2  - Proceedings of the 58th" in ris
    assert "PB  - Galaxy Gaming, Inc." in ris
    markdown = render_report(cited, ReportFormat.MARKDOWN)
    assert (
        "Kyle Lo, Lucy Lu Wang (2020). *S2ORC: The Semantic Scholar Open Research Corpus*. Proceedings"
        in markdown
    )
    (row,) = evidence_rows(cited)
    assert (row.authors, row.year, row.venue) == ("Kyle Lo; Lucy Lu Wang", 2020, paper.venue)
    header = render_report(cited, ReportFormat.CSV).splitlines()[0]
    assert "title,authors,year,venue," in header
