"""A web page's front matter as the page prints it: its date line and its byline.

trafilatura keeps a post's main text and leaves out the lines above it ("Published 21 November 2019 · Tagged
with WebAssembly", "Posted by Alon Zakai."), so "who wrote it" and "when was it published" had no sentence
to quote. :func:`front_matter` finds them in the page itself, outside navigation, sidebars and the page's
footer:

- the date line: the block around the first ``<time>`` (or ``itemprop="datePublished"``) element;
- the byline: the first element marked as the author (``itemprop``, ``rel``, ``class`` or ``id`` holding
  "author" or "byline"), else the first paragraph that reads "By …" or "Posted by …".

Each is the element's own text, white space collapsed, at most ``html_front_matter_chars`` characters (a
longer one is a whole section, not a line); a line the main text already holds is left out.

The page's licence line, which its footer prints and a reader of the main content leaves out with the
footer, closes the text (:func:`back_matter`): the last block of the page's footer (``<footer>`` outside an
article, ``role="contentinfo"``) that names a licence ("Licensed under the CC BY 4.0 License", "Released into
the public domain"), as long as a front line may be.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from lxml import html as lxml_html

from deepcite.ingest.readers.bibliographic import year_of

_OUTSIDE = frozenset({"nav", "aside", "form", "menu"})
_ARTICLE = frozenset({"article", "main"})
_BLOCK = frozenset({"p", "div", "li", "header", "section", "article", "address", "dd", "span", "small"})
_BREAKING = _BLOCK - {"span", "small"} | {"br", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "tr"}
_AUTHOR_MARKS = frozenset({"author", "authors", "byline"})
_MARK_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_DATE_PROP = frozenset({"datepublished", "datecreated"})
_BY_LINE_TAGS = frozenset({"p", "div", "span", "address"})
_BY_LINE = re.compile(r"^(?:posted |written |published |created )?by\s+[A-Z]", re.I)
# a licence the page is published under ("Licensed under the MIT License", "CC BY 4.0"); a bare copyright line
# ("© 2026 RiverWatch") names a holder, not terms, and dates the page (bibliographic.copyright_line_year)
_LICENCE = re.compile(r"\blicen[cs]e[ds]?\b|\bcreative commons\b|\bCC[ -](?:BY|0)\b|\bpublic domain\b", re.I)


@dataclass
class FrontLines:
    """A page's date line and byline as it prints them ("" where it has none), and the year its date element
    states (its ``datetime`` or ``content`` attribute, else its own text)."""

    date: str = ""
    byline: str = ""
    year: int | None = None
    licence: str = ""  # the footer's licence line


def front_lines(tree: lxml_html.HtmlElement, max_chars: int) -> FrontLines:
    """The page's date line and byline (module docstring)."""
    if max_chars <= 0:
        return FrontLines()
    body = tree.find("body") if tree.find("body") is not None else tree
    elements = list(_inside(body))
    date, year = _date_line(elements, max_chars)
    return FrontLines(
        date=date,
        byline=_byline(elements, max_chars) or "",
        year=year,
        licence=_licence_line(body, max_chars),
    )


def front_matter(found: FrontLines, main_text: str) -> list[str]:
    """The page's date line and byline, those not already in ``main_text``."""
    main = " ".join(main_text.split())
    lines: list[str] = []
    for line in (found.date, found.byline):
        if line and " ".join(line.split()) not in main and line not in lines:
            lines.append(line)
    return lines


def back_matter(found: FrontLines, main_text: str) -> list[str]:
    """The page's licence line, unless ``main_text`` already holds it."""
    return [found.licence] if found.licence and found.licence not in " ".join(main_text.split()) else []


def _date_line(elements: list[lxml_html.HtmlElement], max_chars: int) -> tuple[str, int | None]:
    for el in elements:
        if el.tag == "time" or (el.get("itemprop") or "").lower() in _DATE_PROP:
            block = next((a for a in el.iterancestors() if a.tag in _BLOCK), el)
            text = _text(block)
            year = year_of(el.get("datetime") or el.get("content") or _text(el))
            return (text if 0 < len(text) <= max_chars else _text(el)), year
    return "", None


def _byline(elements: list[lxml_html.HtmlElement], max_chars: int) -> str | None:
    for el in elements:
        marks = " ".join(el.get(a) or "" for a in ("itemprop", "rel", "class", "id"))
        words = {w.lower() for w in _MARK_WORD.findall(marks)}  # "authorCol_Hf19", not "authority-control"
        if words & _AUTHOR_MARKS and 0 < len(text := _text(el)) <= max_chars:
            return text
    for el in elements:
        if el.tag in _BY_LINE_TAGS and _BY_LINE.match(text := _text(el)) and len(text) <= max_chars:
            return text
    return None


def _licence_line(body: lxml_html.HtmlElement, max_chars: int) -> str:
    """The last block of the page's footer that names a licence (module docstring), or ""."""
    footers = [
        el
        for el in body.iter()
        if isinstance(el.tag, str)
        and (el.tag == "footer" or (el.get("role") or "").lower() == "contentinfo")
        and not any(a.tag in _ARTICLE for a in el.iterancestors())
    ]
    found = ""
    for footer in footers:
        for el in footer.iter():
            if not isinstance(el.tag, str) or el.tag not in _BREAKING:
                continue
            text = _text(el)
            inner = any(
                isinstance(c.tag, str) and c.tag in _BREAKING and _LICENCE.search(_text(c)) for c in el
            )
            if _LICENCE.search(text) and not inner and len(text) <= max_chars:
                found = text
    return found


def _inside(root: lxml_html.HtmlElement) -> Iterator[lxml_html.HtmlElement]:
    """``root`` and its elements in document order, in one walk, but those in navigation, a sidebar, a form or
    the page's footer (an article's own footer, which holds its byline, is in)."""
    # each entry: an element, and whether an element above it is navigation (…), a footer, an article
    stack: list[tuple[lxml_html.HtmlElement, bool, bool, bool]] = [(root, False, False, False)]
    while stack:
        el, outside, footer, article = stack.pop()
        if not isinstance(el.tag, str):
            continue
        outside = outside or el.tag in _OUTSIDE
        footer = footer or el.tag == "footer"
        article = article or el.tag in _ARTICLE
        if not (outside or (footer and not article)):
            yield el
        stack.extend((child, outside, footer, article) for child in reversed(el))


def _text(el: lxml_html.HtmlElement) -> str:
    """``el``'s text, a space where a block of it ends ("Chi Wang" / "Principal Researcher"), collapsed."""
    parts: list[str] = []

    def walk(node: lxml_html.HtmlElement) -> None:
        block = isinstance(node.tag, str) and node.tag in _BREAKING
        parts.append(" " if block else "")
        if isinstance(node.tag, str) and node.text:
            parts.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                parts.append(child.tail)
        parts.append(" " if block else "")

    walk(el)
    return " ".join("".join(parts).split())
