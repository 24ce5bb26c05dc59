"""Blocks from a tree of structured text: trafilatura's XML of a web page's main content (``head``, ``p``,
``list``/``item``, ``table``/``row``/``cell``, ``hi``) or HTML (``h1``–``h6``, ``p``, ``ul``/``li``,
``table``/``tr``/``td``, ``sup``), as Markdown renders to.

What comes out is prose, never markup: a heading is a block of kind ``heading`` that names the section
after it, a paragraph or list item is a paragraph of text, a table is read row by row with its header
(:mod:`deepcite.ingest.readers.tables`, as the DOCX and PDF readers do), and note markers (a superscript
"[1]", "a", "(1)") are left out. Everything under a heading that names a list of notes or sources
("References", "Footnotes", "External links" …) is of kind ``reference``.
"""

from __future__ import annotations

import re

from lxml import etree

from deepcite.ingest.readers.base import Block, TextKind
from deepcite.ingest.readers.clean import drop_note_markers, is_note_marker
from deepcite.ingest.readers.tables import table_lines

_HEADINGS = frozenset({"head", "h1", "h2", "h3", "h4", "h5", "h6"})
_PARAGRAPHS = frozenset({"p", "item", "li", "quote", "blockquote", "code", "pre", "dd", "dt", "caption"})
_LISTS = frozenset({"list", "ul", "ol", "dl"})
_TABLES = frozenset({"table"})
_ROWS = frozenset({"row", "tr"})
_CELLS = frozenset({"cell", "td", "th"})
_SKIPPED = frozenset({"graphic", "img", "figure", "script", "style", "comments"})
_BREAKS = frozenset({"lb", "br"})
# a heading that opens a list of notes or sources: what follows is reference entries, not prose
REFERENCE_HEADINGS = re.compile(
    r"^(?:references?|footnotes?|notes?|citations?|sources?|bibliography|works cited|further reading|"
    r"external links|see also|notes and references|literature cited)$",
    re.IGNORECASE,
)
_ENTRY_CARET = re.compile(r"^\^\s*(?:[a-z]\s+)*")  # a wiki note's back-link carets ("^ a b")
# units whose superscript 2 or 3 is a power ("km2" -> "km²"), not a note
_UNITS = frozenset({"m", "km", "cm", "mm", "ft", "in", "mi", "yd", "s", "m/s"})
SUPERSCRIPT_DIGITS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def tree_blocks(root: etree._Element, section: str | None = None, page: int | None = None) -> list[Block]:
    """The blocks of ``root``'s text in document order; ``section`` is the section before its first
    heading."""
    walker = _Walker(section, page)
    walker.walk(root)
    walker.flush()
    return walker.blocks


class _Walker:
    def __init__(self, section: str | None, page: int | None) -> None:
        self.blocks: list[Block] = []
        self.section = section
        self.page = page
        self.kind = TextKind.PROSE
        self.paragraphs: list[str] = []

    def flush(self) -> None:
        if self.paragraphs:
            self.blocks.append(Block("\n\n".join(self.paragraphs), self.page, self.section, kind=self.kind))
            self.paragraphs = []

    def walk(self, element: etree._Element) -> None:
        for child in element:
            if not isinstance(child.tag, str):
                continue
            tag = _local(child.tag)
            if tag in _SKIPPED:
                pass
            elif tag in _HEADINGS:
                self.heading(child)
            elif tag in _TABLES:
                self.table(child)
            elif tag in _LISTS:
                self.walk(child)
            elif tag in _PARAGRAPHS and not _holds_blocks(child):
                self.paragraph(inline_text(child))
            else:  # a container (div, section, main, body) or a stray inline element
                if child.text and child.text.strip() and tag not in {"div", "section", "main", "body"}:
                    self.paragraph(inline_text(child))
                    continue
                self.walk(child)
            if child.tail and child.tail.strip():
                self.paragraph(child.tail)

    def heading(self, element: etree._Element) -> None:
        text = _words(drop_note_markers(inline_text(element)))
        if not text:
            return
        self.flush()
        self.section = text
        self.kind = TextKind.REFERENCE if REFERENCE_HEADINGS.match(text) else TextKind.PROSE
        self.blocks.append(Block(text, self.page, self.section, kind=TextKind.HEADING))

    def paragraph(self, text: str) -> None:
        text = _words(drop_note_markers(text))
        if self.kind == TextKind.REFERENCE:
            text = reference_entry(text)
        if text:
            self.paragraphs.append(text)

    def table(self, element: etree._Element) -> None:
        grid = [
            [
                _words(inline_text(cell))
                for cell in row
                if isinstance(cell.tag, str) and _local(cell.tag) in _CELLS
            ]
            for row in element.iter()
            if isinstance(row.tag, str) and _local(row.tag) in _ROWS
        ]
        if rows := table_lines(grid):
            self.flush()
            self.blocks.append(Block("\n".join(rows), self.page, self.section, table=True))


def reference_entry(text: str) -> str:
    """A reference entry's text without a wiki note's back-link carets ("^ a b Smith, J. (1912)." -> "Smith, J.
    (1912).")."""
    return _ENTRY_CARET.sub("", text).strip()


def inline_text(element: etree._Element) -> str:
    """The text of ``element`` and its descendants, note-marker superscripts left out, a power's digits
    written as superscript digits ("km²"), line breaks as spaces."""
    parts: list[str] = []
    _collect(element, parts, top=True)
    return "".join(parts)


def _collect(element: etree._Element, parts: list[str], top: bool = False) -> None:
    tag = _local(element.tag) if isinstance(element.tag, str) else ""
    if not top and tag in _SKIPPED:
        pass
    elif not top and tag in _BREAKS:
        parts.append(" ")
    elif not top and _superscript(element):
        text = "".join(element.itertext())
        before = "".join(parts).rstrip()
        power = re.fullmatch(r"-?\d{1,2}", text.strip()) and (
            before[-1:].isdigit() or before.split(" ")[-1] in _UNITS
        )
        if power:
            parts.append(text.strip().translate(SUPERSCRIPT_DIGITS))
        elif not is_note_marker(text):
            parts.append(text)
    else:
        if element.text:
            parts.append(element.text)
        for child in element:
            if isinstance(child.tag, str):
                _collect(child, parts)
            if child.tail:
                parts.append(child.tail)
        if not top and tag in _PARAGRAPHS | _CELLS:
            parts.append(" ")


def _superscript(element: etree._Element) -> bool:
    tag = _local(element.tag)
    return tag == "sup" or (tag == "hi" and "sup" in (element.get("rend") or ""))


def _holds_blocks(element: etree._Element) -> bool:
    blocks = _HEADINGS | _PARAGRAPHS | _LISTS | _TABLES | {"div", "section"}
    return any(isinstance(c.tag, str) and _local(c.tag) in blocks for c in element)


def _words(text: str) -> str:
    return " ".join(text.split())


def _local(tag: str) -> str:
    return etree.QName(tag).localname.lower() if tag.startswith("{") else tag.lower()
