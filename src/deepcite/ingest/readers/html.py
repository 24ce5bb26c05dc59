"""HTML pages through trafilatura (main content only) and XHTML chapters through lxml (every word).

Before either runs, hidden content is dropped: scripts, styles, ``hidden`` and ``display:none`` elements,
and inline-XBRL headers (``ix:header``), which hold machine-readable facts, not prose. trafilatura takes a
page's first ``<article>`` for its main content (``(.//article)[1]``, a rule its maintainers keep,
adbar/trafilatura#931); on a page that lists articles side by side (a one-page app's cards, an index of posts)
that is the first card, and what trafilatura then recovers from the rest of the page leaves out headings and
loose text (the other cards' names and labels). Such a page is handed over with its listed articles as
sections and its body as its one article (:func:`one_article`). Styles are dropped before trafilatura reads
the page (it takes "hidden" anywhere in a style for hidden: an "overflow: hidden" card, an inline-XBRL
"-sec-ix-hidden" fact's words). The page's content blocks its main content leaves out (a landing page's
cards, a schedule's day headings) are put back in their place (:mod:`deepcite.ingest.readers.html_recall`,
``ingest.html_recall``). trafilatura gives
the main content as XML (headings, paragraphs, lists, tables), which :mod:`deepcite.ingest.readers.markup`
turns into prose blocks: headings as sections, tables row by row, note markers and ``[edit]`` left out. The
page's date line and byline, which trafilatura leaves out, open the text, and its footer's licence line closes
it (:mod:`deepcite.ingest.readers.html_front`). Title, authors, year and publisher come from the page's own
metadata (:mod:`deepcite.ingest.readers.html_meta`), never a date guessed from the text. A page that only shows a
slide deck written in Markdown (remark.js) is read slide by slide (:mod:`deepcite.ingest.readers.markdown_deck`).
"""

from __future__ import annotations

import re
from pathlib import Path

import trafilatura
from lxml import etree
from lxml import html as lxml_html

from deepcite.config import IngestSettings
from deepcite.ingest.readers.base import Block, ReadResult, document_from_blocks
from deepcite.ingest.readers.bibliographic import Bibliographic, byline_names, copyright_line_year
from deepcite.ingest.readers.clean import drop_note_markers
from deepcite.ingest.readers.html_front import back_matter, front_lines, front_matter
from deepcite.ingest.readers.html_meta import page_metadata
from deepcite.ingest.readers.html_recall import with_recovered
from deepcite.ingest.readers.markdown_deck import deck_blocks, deck_markdown
from deepcite.ingest.readers.markup import inline_text, tree_blocks

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_DROP_TAGS = frozenset({"script", "style", "noscript", "template"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
_INLINE = frozenset(
    {
        "a",
        "abbr",
        "b",
        "br",
        "cite",
        "code",
        "em",
        "i",
        "img",
        "mark",
        "q",
        "s",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "u",
    }
)
_BLOCKS = frozenset({"p", "div", "li", "tr", "blockquote", "pre", "dd", "dt", "td", "th", "section", "br"})


class HtmlReader:
    """A web page: its main content and the page's other content blocks (navigation, sidebars, footers,
    boilerplate and hidden blocks dropped)."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        data = path.read_bytes()
        tree = parse_html(data)
        metadata = trafilatura.extract_metadata(tree)
        # before the scripts and hidden facts go
        page = lxml_html.document_fromstring(data)
        about = page_metadata(page, metadata.title if metadata else "")
        if (deck := deck_markdown(page)) is not None:  # a Markdown slide deck the page renders by script
            return document_from_blocks(deck_blocks(deck), doc_id=doc_id, name=name, about=about)
        front = front_lines(tree, settings.html_front_matter_chars)
        for el in tree.iter():  # hidden elements are gone; trafilatura reads "hidden" in any style as hidden
            if isinstance(el.tag, str):  # ("overflow: hidden", an inline-XBRL "-sec-ix-hidden" fact's words)
                el.attrib.pop("style", None)
        xml = trafilatura.extract(
            one_article(tree),
            output_format="xml",
            include_tables=True,
            include_comments=False,
            include_formatting=True,  # superscripts marked, so note markers can be told from words
            favor_recall=True,
        )
        blocks = tree_blocks(etree.fromstring(xml.encode("utf-8"), _XML)) if xml else []
        if settings.html_recall:  # the page's content blocks trafilatura's main content leaves out
            blocks = with_recovered(blocks, parse_html(data), settings)
        main_text = " ".join(b.text for b in blocks)
        if lines := front_matter(front, main_text):
            blocks.insert(0, Block("\n\n".join(lines), None, blocks[0].section if blocks else None))
        blocks.extend(Block(line) for line in back_matter(front, main_text))  # the footer's licence line
        # the page's byline, else trafilatura's, where the metadata names no author; the date its date element
        # states, else its copyright line, where the metadata states none; never trafilatura's date, which it
        # guesses from the text
        byline = byline_names(front.byline) or [
            name
            for part in ((metadata.author or "") if metadata else "").split(";")
            for name in byline_names(part)
        ]
        copyright_year = copyright_line_year(tree.text_content())
        about = about.merged(Bibliographic(authors=byline, year=front.year or copyright_year))
        return document_from_blocks(blocks, doc_id=doc_id, name=name, about=about)


def parse_html(data: bytes | str) -> lxml_html.HtmlElement:
    """An HTML or XHTML document (bytes, or text already decoded) as an lxml tree, hidden content removed."""
    if isinstance(data, str):  # lxml refuses text that still declares its byte encoding
        data = _XML_DECLARATION.sub("", data, count=1)
    tree = lxml_html.document_fromstring(data)
    doomed = [el for el in tree.iter() if isinstance(el.tag, str) and _hidden(el)]
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()
    return tree


def one_article(tree: lxml_html.HtmlElement) -> lxml_html.HtmlElement:
    """``tree`` made to hold one ``<article>`` where it lists several side by side (cards, posts): those become
    ``<section>`` elements and the body's content is wrapped in one ``<article>``, the page being its own
    article; its divs that hold only text and inline elements (a stat box, a callout, a card's row of labels)
    become paragraphs, since trafilatura's main pass leaves a div's text out on a page with much paragraph
    text. A page with at most one ``<article>`` in each parent is left as it is."""
    listed = [
        article
        for article in tree.iter("article")
        if (parent := article.getparent()) is not None and sum(1 for el in parent if el.tag == "article") > 1
    ]
    body = tree.find("body")
    if not listed or body is None:
        return tree
    for article in listed:
        article.tag = "section"
    for div in body.iter("div"):
        if (
            all(child.tag in _INLINE for child in div if isinstance(child.tag, str))
            and div.text_content().strip()
        ):
            div.tag = "p"
    page = lxml_html.Element("article")
    page.text, body.text = body.text, None
    page.extend(list(body))
    body.append(page)
    return tree


def _hidden(el: lxml_html.HtmlElement) -> bool:
    tag = el.tag.lower()
    return (
        tag in _DROP_TAGS
        or tag.endswith(":header")  # ix:header, the hidden inline-XBRL facts
        or el.get("hidden") is not None
        or bool(_HIDDEN_STYLE.search(el.get("style") or ""))
    )


def html_blocks(tree: lxml_html.HtmlElement, section: str | None = None) -> tuple[list[Block], str | None]:
    """Every text of a (chapter's) tree in order, each heading starting a section; returns the blocks and
    the first heading."""
    body = tree.find("body") if tree.find("body") is not None else tree
    blocks: list[Block] = []
    current: list[str] = []
    first: str | None = None
    for el in body.iter():
        if not isinstance(el.tag, str):
            continue
        tag = _local(el.tag)
        if tag in _HEADINGS:
            heading = " ".join(inline_text(el).split())
            if heading:
                if current:
                    blocks.append(Block("\n\n".join(current), None, section))
                    current = []
                section, first = heading, first or heading
                current.append(heading)
            continue
        if tag in _BLOCKS and not any(
            _local(c.tag) in _BLOCKS | _HEADINGS for c in el if isinstance(c.tag, str)
        ):
            text = " ".join(drop_note_markers(inline_text(el)).split())
            if text:
                current.append(text)
    if current:
        blocks.append(Block("\n\n".join(current), None, section))
    return blocks, first


def _local(tag: str) -> str:
    return etree.QName(tag).localname.lower() if tag.startswith("{") else tag.lower()


def html_title(tree: lxml_html.HtmlElement) -> str | None:
    """The document's ``<title>``, white space collapsed (None without one)."""
    found = tree.find(".//title")
    return " ".join(found.text_content().split()) if found is not None else None
