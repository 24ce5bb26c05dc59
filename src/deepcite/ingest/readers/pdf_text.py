"""A PDF's lines as blocks of one kind each: running lines dropped, sections found, what is not prose
labelled, hyphenated line ends joined as the document spells the word.

- **Running headers and footers.** Lines in the top or bottom margin (``ingest.margin_share``) that repeat
  on at least ``ingest.repeated_line_share`` of the pages (digits ignored), and lone page numbers there,
  are dropped.
- **Sections.** A short line that numbers the next section in sequence ("3 Method", "3.2 Data"), or names a
  well-known one (Abstract, References …), starts a section and is a block of kind ``heading``; everything
  after "References" or "Bibliography" is of kind ``reference`` until the next section heading.
- **What is not prose.** A caption ("Figure 2: …", "Table 1. …" and the lines that follow it closely), page
  furniture (copyright, licence and venue lines, "c 2020 Association for Computational Linguistics", a
  lone link, as a footnote's) and equation fragments (a line of symbols, a
  numbered display equation, a code line) are blocks of their own kind: searchable, never an answer.
- **Words.** A line-end hyphen is joined as :func:`deepcite.ingest.readers.clean.hyphen_join` decides from
  the words of the whole document ("re-" + "lationships" -> "relationships", "PaSa-" + "7b" -> "PaSa-7b").
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import groupby

from deepcite.config import IngestSettings
from deepcite.ingest.readers.base import Block, TextKind
from deepcite.ingest.readers.clean import join_lines, word_forms
from deepcite.ingest.readers.pdf_layout import Line
from deepcite.text import SENTENCE_END

_NUMBERED = re.compile(
    r"^((?:\d{1,2})(?:\.\d{1,2}){0,2}|[A-H](?:\.\d{1,2}){0,2})\.?\s+([A-Z][^.!?:;]{1,70})$"
)
_NAMED = re.compile(
    r"^(?:\d{1,2}\.?\s+)?(abstract|introduction|related work|background|conclusions?|discussion|"
    r"acknowledge?ments?|references|bibliography|appendix|limitations|ethics statement|résumé)\s*$",
    re.IGNORECASE,
)
_REFERENCES = frozenset({"references", "bibliography"})
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_CAPTION = re.compile(
    r"^(?:Figure|Fig\.|Table|Tab\.|Algorithm|Listing|Exhibit|Chart|Tableau)\s*[A-Z]?\d{1,2}(?:\.\d{1,2})?"
    r"\s*(?:[:.|–—]|-\s)"
)
_CAPTION_LINES, _CAPTION_GAP = 8, 1.45  # a caption goes on for lines closer than this many line heights
# a figure's or table's source line under it ("Source: GAO analysis of … | GAO-23-106826")
_SOURCE_NOTE = re.compile(r"^Sources?\s*:\s")
# a line this share of whose characters are set in a monospaced font is a code listing's; a prose line of
# fewer words between two of them is a fragment of the listing
_CODE_FONT_SHARE, _CODE_FRAGMENT_WORDS = 0.75, 5
_FURNITURE = re.compile(
    r"^(?:c|©|\(c\))\s?(?:19|20)\d\d\b|©|Association for Computational Linguistics\s*$|^Proceedings of\b"
    r"|^(?:Findings|Workshop) of the\b|^arXiv:\d{4}\.\d{4,5}|^Copyright\b|All rights reserved"
    r"|^Published as a conference paper|^Preprint\b|^Under review\b|^Licensed under\b"
    r"|^Permission to make digital|, pages \d+[–-]\d+|^\d{1,2}(?:st|nd|rd|th) (?:Annual )?(?:Meeting|Conference)"
    r"|^(?:\d{1,3}\s*)?(?:https?://|www\.)\S+$",
    re.IGNORECASE,
)
_MATH = re.compile(r"[=+×·∑∏∫∈∉⊂⊆∀∃≤≥≈≠→←↔⊺∥∗^_{}|∼√∂∇]|[\u0370-\u03ff]")
_EQUATION_NUMBER = re.compile(r"\(\d{1,2}[a-z]?\)\s*$")
_CODE = re.compile(
    r"^(?:\.\.\.\s|\$ |import \w|from \w+(?:\.\w+)* import |def \w+\(|class \w+[(:]|#\s\w|\w+(?:\.\w+)* = \S)|(?:^|\s)>>>\s"
)
_WORDISH = re.compile(r"[^\W\d_]{3,}")


def drop_running_lines(pages: list[list[Line]], settings: IngestSettings) -> list[list[Line]]:
    """Pages without their running headers, footers and page numbers. A running line comes in variants from
    page to page ("SNAS433D – REVISED MAY 2013 www.ti.com", "www.ti.com SNAS433D – REVISED MAY 2013", the
    same without the link), so a line in the margin band is one when each of its words is in the band on
    enough pages; a page's first or last lines above the band (a footer set at a word processor's 1-inch
    margin) are one when the same words, digits aside, end or start enough pages, and so is a lone page number
    there when enough pages end or start with one."""
    edges = [_edge_lines(page, settings.running_edge_lines) for page in pages]
    in_band = Counter(w for page in pages for w in set().union(*(_words(ln) for ln in page if ln.in_margin)))
    at_edge = Counter(k for lines in edges for k in {_words(ln) for ln in lines})
    enough = settings.repeated_line_share * len(pages)

    def running(line: Line, edge: set[int]) -> bool:
        words = _words(line)
        if len(pages) <= 2:
            return False
        if line.in_margin and words and all(in_band[w] >= enough for w in words):
            return True
        lone_number = not words and _PAGE_NUMBER.match(line.text) is not None
        return id(line) in edge and at_edge[words] >= enough and (bool(words) or lone_number)

    kept: list[list[Line]] = []
    for page, lines in zip(pages, edges, strict=True):
        edge = {id(line) for line in lines}
        kept.append(
            [
                line
                for line in page
                if not (running(line, edge) or (line.in_margin and _PAGE_NUMBER.match(line.text)))
            ]
        )
    return kept


def _words(line: Line) -> frozenset[str]:
    """A line's words, lower-cased, digits read as "#" and a number alone left out (a page number)."""
    return frozenset(w for w in re.sub(r"\d+", "#", line.text.lower()).split() if w != "#")


def _edge_lines(page: list[Line], count: int) -> list[Line]:
    """A page's ``count`` highest and ``count`` lowest lines of text (a table's or a figure's are none), by
    position: a page of table cells reads its footer's title and page number in the middle of its lines."""
    text = sorted((line for line in page if not (line.table or line.figure)), key=lambda line: line.top)
    return text[:count] + text[max(count, len(text) - count) :]


def page_blocks(pages: list[list[Line]]) -> list[Block]:
    """Blocks of one kind per page and section; hyphenated line ends joined."""
    vocabulary = word_forms(line.text for page in pages for line in page if not (line.table or line.figure))
    blocks: list[Block] = []
    section: str | None = None
    last_number: list[int] = []
    in_references = seen_references = False
    for page_no, lines in enumerate(pages, start=1):
        labelled: list[tuple[TextKind, str | None, str]] = []  # kind, section, text
        code: list[bool] = []  # whether each labelled line is a code listing's (set in a monospaced font)
        caption: list[Line] = []
        for line in lines:
            code.append(line.mono_share >= _CODE_FONT_SHARE)
            if line.table:
                labelled.append((TextKind.TABLE, section, line.text))
                continue
            if line.figure:
                labelled.append((TextKind.FIGURE, section, line.text))
                continue
            heading = _heading(line.text, last_number, seen_references)
            if heading is not None:
                section = heading
                in_references = heading == "References"
                seen_references = seen_references or in_references
                labelled.append((TextKind.HEADING, section, line.text))
                caption = []
                continue
            if caption and _continues(caption, line):
                caption.append(line)
                labelled.append((TextKind.CAPTION, section, line.text))
                continue
            caption = [line] if _CAPTION.match(line.text) else []
            if _SOURCE_NOTE.match(line.text):  # a figure's or table's source line, on its own
                labelled.append((TextKind.CAPTION, section, line.text))
                continue
            kind = TextKind.CAPTION if caption else _kind(line, in_references)
            labelled.append((kind, section, line.text))
        _code_fragments(labelled, code)
        on_page: list[Block] = []
        for (kind, block_section), run in groupby(labelled, key=lambda item: item[:2]):
            texts = [text for _, _, text in run]
            if kind == TextKind.TABLE:
                on_page += [Block(text, page_no, block_section, table=True) for text in texts]
            else:
                on_page.append(Block(join_lines(texts, vocabulary), page_no, block_section, kind=kind))
        blocks += _mend_interrupted(on_page, vocabulary)
    return blocks


# what a sentence goes on past when it is set around it on the page (a table stays where it is: its chunks
# are made apart from the prose, and moving it moves which captions lie next to it)
_INTERRUPTIONS = frozenset({TextKind.FIGURE, TextKind.CAPTION, TextKind.FURNITURE})


def _mend_interrupted(blocks: list[Block], vocabulary: Counter[str]) -> list[Block]:
    """A page's blocks with each sentence a figure, caption or footnote line interrupts read whole: a
    prose block ending mid-sentence and the prose block of its section that goes on after the interruption
    are joined (a line-end hyphen as the document spells the word), the interruption following them. The
    sentence is then one run of the page's text, as a quote of it must be."""
    out = list(blocks)
    i = 0
    while i < len(out):
        block = out[i]
        j = i + 1
        while j < len(out) and out[j].kind in _INTERRUPTIONS and out[j].section == block.section:
            j += 1
        resumes = j < len(out) and out[j].kind == TextKind.PROSE and out[j].section == block.section
        if block.kind == TextKind.PROSE and j > i + 1 and resumes and not SENTENCE_END.search(block.text):
            joined = join_lines([block.text, out[j].text], vocabulary)
            out[i : j + 1] = [Block(joined, block.page, block.section), *out[i + 1 : j]]
            continue  # the joined block may end mid-sentence again
        i += 1
    return out


def _code_fragments(labelled: list[tuple[TextKind, str | None, str]], code: list[bool]) -> None:
    """Label as code (kind ``equation``) the listing's own lines and the short fragments between two of them
    (a listing's line numbers, a string's quotes set on a baseline of their own: "4", ", ,")."""
    for i, (kind, section, text) in enumerate(labelled):
        if kind != TextKind.PROSE:
            continue
        between = 0 < i < len(labelled) - 1 and code[i - 1] and code[i + 1]
        if code[i] or (between and len(text.split()) < _CODE_FRAGMENT_WORDS):
            labelled[i] = (TextKind.EQUATION, section, text)
            code[i] = True


def _continues(caption: list[Line], line: Line) -> bool:
    """Whether ``line`` goes on with the caption above it: close below its last line, a few lines long."""
    last = caption[-1]
    gap = last.top - line.top
    return len(caption) < _CAPTION_LINES and 0 < gap <= _CAPTION_GAP * max(last.height, line.height, 1.0)


def _kind(line: Line, in_references: bool) -> TextKind:
    text = line.text
    if in_references:
        return TextKind.REFERENCE
    if _FURNITURE.search(text):
        return TextKind.FURNITURE
    if _CODE.search(text) or _equation(text):
        return TextKind.EQUATION
    return TextKind.PROSE


def _equation(text: str) -> bool:
    """A line of symbols: mathematics or a numbered display equation, with few words of prose."""
    chars = len(text.replace(" ", ""))
    if not chars or not _MATH.search(text):
        return False
    words = sum(len(w) for w in _WORDISH.findall(text))
    if _EQUATION_NUMBER.search(text) and "=" in text:
        return words < 0.6 * chars
    return words < 0.4 * chars


def _heading(text: str, last_number: list[int], after_references: bool) -> str | None:
    """The section a line starts, or ``None``; ``last_number`` tracks the top-level section number so a
    table row ("12 Paris 3.4") is not taken for a heading."""
    named = _NAMED.match(text)
    if named:
        word = named.group(1).lower()
        number = re.match(r"\d+", text)
        if number:
            last_number[:] = [int(number.group())]
        return "References" if word in _REFERENCES else text.strip()
    numbered = _NUMBERED.match(text)
    if not numbered or len(text) > 80 or not re.search(r"[^\W\d]{3}", numbered.group(2)):
        return None
    number = numbered.group(1)
    top = number.split(".")[0]
    if not top.isdigit() and not after_references:
        return None  # lettered sections are appendices, after the references
    if top.isdigit():
        value = int(top)
        current = last_number[0] if last_number else 0
        if "." in number and value != current:
            return None
        if "." not in number and value != current + 1:
            return None
        last_number[:] = [value]
    return text.strip()
