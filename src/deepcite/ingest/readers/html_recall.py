"""The content blocks of a web page that trafilatura's main content leaves out: a landing page's cards, a
schedule's day headings and session titles.

trafilatura picks the page's main container and keeps what lies in it; on a page built of sections and cards
(a course's landing page, a programme) the container it picks is one section or a list of times, and the
rest of the page is lost ("Course Coordinator / Prof. Nikolaos Lavidas", "Target Audience", "Wednesday, July
23, 2026 - Medieval Languages"). On a news page what it leaves out is mostly boilerplate (menus, topic lists,
"related stories", sharing links, comments), so the page's other blocks are read only where they are content,
judged the way boilerplate detectors judge a block (jusText, Pomikálek 2011; boilerpipe, Kohlschütter et al.
2010), on the page's structure rather than on stop words:

- left out first: the page's landmarks (navigation, banner, footer, sidebars), its forms and controls, and
  every element trafilatura itself discards as boilerplate by its class or id (sharing, related stories,
  newsletter, ads, bylines, comments: ``trafilatura.xpaths``);
- a block is a run of text between block-level elements; one with more than ``html_recall_link_share`` of
  its characters inside links (a link to a mail address or a phone number not counted) is navigation;
- a block's group is the nearest element around it that holds other blocks (a list or a table taken whole).
  A group holding more than ``html_recall_link_share`` of its characters in links, or a form, is a box (a
  list of stories, a topic list, a sign-up box), and none of its blocks is content;
- a block of at least ``html_recall_words`` words is content outside a box;
- a heading is content where its group is a card: not the page itself (an element around the page's
  navigation or footer), not a box, not reached past an element that lost boilerplate (a "You might also
  like" whose list of stories is gone), and holding text besides headings;
- a shorter block (a label, a value, a date) is content only in the card of a heading kept before it: a card's
  label and value with the card's heading, a session's time with its day.

The blocks trafilatura's text already holds are found in the page's order (:func:`_aligned`), and each block
recovered goes in after the last one before it that trafilatura kept, a heading recovered naming the section
of what follows it; but a title set right after a label of the card around its own (a session's time, then
its title and description) is read as a paragraph with the label, so the two share a passage.
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass, field

from lxml import html as lxml_html
from trafilatura.xpaths import OVERALL_DISCARD_XPATH, REMOVE_COMMENTS_XPATH

from deepcite.config import IngestSettings
from deepcite.ingest.readers.base import Block, TextKind
from deepcite.ingest.readers.clean import drop_note_markers
from deepcite.ingest.readers.markup import REFERENCE_HEADINGS, inline_text, reference_entry

# the page's landmarks: an element around one is the page, not a card
_LANDMARKS = frozenset({"nav", "header", "footer", "aside", "menu"})
_LANDMARK_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
)
# a form and its controls: an element around one is a widget (a poll, a sign-up box), not a card
_CONTROLS = frozenset({"form", "input", "select", "textarea", "button"})
# elements whose text is no reading text
_CHROME = (
    _LANDMARKS | _CONTROLS | frozenset({"dialog", "option", "label", "figure", "iframe", "noscript", "svg"})
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# block-level elements: each starts a run of text; any other element (an unknown one too) runs on inline
_BLOCKS = frozenset(
    {
        "address",
        "article",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "hgroup",
        "hr",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
    | _HEADINGS
    | _CHROME
)
# containers whose items are one run of like blocks: a list's items, a table's cells
_RUNS = frozenset({"ul", "ol", "dl", "table", "thead", "tbody", "tfoot", "tr"})
# trafilatura's expressions look for its own names of lists and items
_TRAFILATURA_TAGS = {"ul": "list", "ol": "list", "dl": "list", "li": "item", "dt": "item", "dd": "item"}
_NOT_LINKS = re.compile(r"^(?:mailto|tel):", re.IGNORECASE)
_WORD = re.compile(r"\w+")


@dataclass(eq=False)
class Segment:
    """A run of a page's text between block-level elements: its text (white space collapsed), whether it is a
    heading, how many of its characters lie inside links, and the element that holds it."""

    text: str
    heading: bool
    linked: int
    element: lxml_html.HtmlElement
    words: int = field(init=False)
    ancestry: list[lxml_html.HtmlElement] = field(init=False)  # its element, then those around it
    label: bool = False  # a heading read as a paragraph (:func:`content_segments`)

    def __post_init__(self) -> None:
        self.words = len(_WORD.findall(self.text))
        self.ancestry = [self.element, *self.element.iterancestors()]


@dataclass
class PageText:
    """A page's blocks outside its chrome and boilerplate, in order, with what was taken out around them: the
    elements around one of its landmarks (and its body), those around a form control, and those a landmark,
    a control or boilerplate was taken out of. (Elements are held, not their ids: lxml makes a new Python
    object, with a new id, for an element no object holds.)"""

    segments: list[Segment]
    landmarked: frozenset[lxml_html.HtmlElement]
    widgets: frozenset[lxml_html.HtmlElement]
    emptied: frozenset[lxml_html.HtmlElement]


def with_recovered(blocks: list[Block], tree: lxml_html.HtmlElement, settings: IngestSettings) -> list[Block]:
    """``blocks`` (trafilatura's main content of the page ``tree``, which is pruned) with the page's content
    blocks they leave out (module docstring)."""
    page = page_text(tree)
    return recovered_blocks(blocks, page, content_segments(page, settings))


def page_text(tree: lxml_html.HtmlElement) -> PageText:
    """The blocks of ``tree``'s body outside its chrome and boilerplate (module docstring), in the page's
    order; ``tree`` is pruned in place."""
    body = tree.find("body") if tree.find("body") is not None else tree
    chrome = [el for el in body.iter() if isinstance(el.tag, str) and _chrome(el)]
    landmarked = {body} | {a for el in chrome if _landmark(el) for a in el.iterancestors()}
    widgets = {a for el in chrome if el.tag in _CONTROLS for a in el.iterancestors()}
    boilerplate = [el for el in chrome if _landmark(el) or el.tag in _CONTROLS] + _discarded(body)
    emptied = {parent for el in boilerplate if (parent := el.getparent()) is not None}
    glyphs = [a for a in body.iter("a") if not _WORD.search(a.text_content())]  # a heading's "¶", an icon
    for el in chrome + boilerplate + glyphs:
        if el.getparent() is not None:
            el.drop_tree()
    segments: list[Segment] = []
    _walk(body, segments)
    return PageText(segments, frozenset(landmarked), frozenset(widgets), frozenset(emptied))


def content_segments(page: PageText, settings: IngestSettings) -> list[Segment]:
    """Those of ``page``'s blocks that are content (module docstring), in their order."""
    held: dict[lxml_html.HtmlElement, list[Segment]] = {}
    for segment in page.segments:
        for element in segment.ancestry:
            held.setdefault(element, []).append(segment)

    def navigation(segment: Segment) -> bool:
        return segment.linked > settings.html_recall_link_share * len(segment.text) or not segment.words

    def box(element: lxml_html.HtmlElement) -> bool:
        """Whether ``element`` holds a form, or more than the link share of its text in links."""
        linked = sum(s.linked for s in held[element])
        return element in page.widgets or linked > settings.html_recall_link_share * sum(
            len(s.text) for s in held[element]
        )

    def group(segment: Segment, card: bool) -> lxml_html.HtmlElement | None:
        """The nearest element around ``segment`` that holds other segments, a list or a table taken whole;
        None where that is the page or, for a ``card``, is reached past an element that lost boilerplate."""
        for element in segment.ancestry:
            if element in page.landmarked or (card and element in page.emptied):
                return None
            if len(held[element]) > 1 and element.tag not in _RUNS:
                return element
        return None

    kept: list[Segment] = []
    cards: set[lxml_html.HtmlElement] = set()  # the cards of the headings kept so far
    before: Segment | None = None  # the block before, navigation aside
    for segment in page.segments:
        if navigation(segment):
            continue
        previous, before = before, segment
        if not segment.heading and segment.words >= settings.html_recall_words:
            if (element := group(segment, card=False)) is None or not box(element):
                kept.append(segment)
        elif (element := group(segment, card=True)) is None or box(element):
            continue
        elif segment.heading:
            if any(not s.heading and not navigation(s) for s in held[element]):
                kept.append(segment)
                cards.add(element)
                # a title set right after a label of the card around its own, a card of no other heading (a
                # session's time, then its title and description), reads with the label, as a paragraph
                segment.label = (
                    previous is not None
                    and not previous.heading
                    and previous.words < settings.html_recall_words
                    and element not in previous.ancestry
                    and (around := group(previous, card=False)) is not None
                    and around in segment.ancestry
                    and all(s is segment or not s.heading for s in held[around])
                )
        elif cards.intersection(segment.ancestry):
            kept.append(segment)
    return kept


def recovered_blocks(blocks: list[Block], page: PageText, kept: list[Segment]) -> list[Block]:
    """``blocks`` (trafilatura's main content) with each of ``kept`` (of ``page``'s blocks) they do not hold
    put in after the last block of the page before it that they do, a heading recovered naming the section of
    what follows it up to the next heading."""
    paragraphs = [_paragraphs(block) for block in blocks]
    texts = [reference_entry(s.text) for s in page.segments]  # as trafilatura's text is read (markup)
    held, at = _aligned(texts, [" ".join(p.split()) for ps in paragraphs for p in ps])
    recover = {id(s) for s in kept}
    inserts: dict[int, list[Segment]] = {}  # after paragraph u (-1: before the first) -> the blocks recovered
    last = -1
    for i, segment in enumerate(page.segments):
        if (u := at[i]) is not None:
            last = max(last, u)
        elif not held[i] and id(segment) in recover:
            inserts.setdefault(last, []).append(segment)
    if not inserts:
        return blocks
    out = _as_blocks(inserts.get(-1, []), blocks[0].section if blocks else None)
    section = _last_heading(out)
    u = 0
    for block, texts in zip(blocks, paragraphs, strict=True):
        if block.kind == TextKind.HEADING:
            section = None
        pending: list[str] = []
        for text in texts:
            pending.append(text)
            if u in inserts:
                out.append(_like(block, pending, section))
                pending = []
                out.extend(recovered := _as_blocks(inserts[u], section or block.section))
                section = _last_heading(recovered) or section
            u += 1
        if pending:
            out.append(_like(block, pending, section))
    return _merged(out)


def _aligned(texts: list[str], paragraphs: list[str]) -> tuple[list[bool], list[int | None]]:
    """Which of ``texts`` (a page's blocks) ``paragraphs`` (trafilatura's) hold, and the paragraph each held
    one stands at in the page's order (None: none to go by). Found: the longest runs of blocks equal to
    paragraphs in the same order, then each block left within a paragraph between those found for the blocks
    around it; such a block stands at its paragraph only where the next block found is in a later one (a title
    the first paragraph happens to contain stands before it)."""
    at: list[int | None] = [None] * len(texts)
    for match in difflib.SequenceMatcher(None, texts, paragraphs, autojunk=False).get_matching_blocks():
        for k in range(match.size):
            at[match.a + k] = match.b + k
    held = [u is not None for u in at]
    found = [i for i, u in enumerate(at) if u is not None]
    for i, text in enumerate(texts):
        if held[i]:
            continue
        k = bisect.bisect_left(found, i)
        low = at[found[k - 1]] if k else None
        high = at[found[k]] if k < len(found) else None
        window = range(low or 0, len(paragraphs) if high is None else high + 1)
        u = next((u for u in window if text in paragraphs[u]), None)
        held[i] = u is not None
        at[i] = u if u is not None and (high is None or u < high) else None
    return held, at


def _as_blocks(segments: list[Segment], section: str | None) -> list[Block]:
    """Blocks of ``segments`` (those recovered between two of trafilatura's paragraphs), each heading naming
    the section of what follows; under a heading that opens a list of notes or sources, reference entries
    (as :mod:`deepcite.ingest.readers.markup` reads them)."""
    out: list[Block] = []
    paragraphs: list[str] = []

    def flush() -> None:
        if paragraphs:
            references = section is not None and REFERENCE_HEADINGS.match(section) is not None
            texts = [reference_entry(p) for p in paragraphs] if references else paragraphs
            kind = TextKind.REFERENCE if references else TextKind.PROSE
            out.append(Block("\n\n".join(t for t in texts if t), None, section, kind=kind))
            paragraphs.clear()

    for segment in segments:
        if segment.heading and not segment.label:
            flush()
            section = segment.text
            out.append(Block(segment.text, None, section, kind=TextKind.HEADING))
        else:
            paragraphs.append(segment.text)
    flush()
    return out


def _merged(blocks: list[Block]) -> list[Block]:
    """``blocks`` with each run of prose blocks under one section (a paragraph recovered between two of
    trafilatura's) made one block."""
    out: list[Block] = []
    for block in blocks:
        before = out[-1] if out else None
        if (
            before is not None
            and block.kind == before.kind == TextKind.PROSE
            and not block.table
            and not before.table
            and (block.page, block.section) == (before.page, before.section)
        ):
            out[-1] = Block(f"{before.text}\n\n{block.text}", before.page, before.section, kind=before.kind)
        else:
            out.append(block)
    return out


def _last_heading(blocks: list[Block]) -> str | None:
    return next((b.section for b in reversed(blocks) if b.kind == TextKind.HEADING), None)


def _like(block: Block, paragraphs: list[str], section: str | None) -> Block:
    text = "\n\n".join(paragraphs)
    return Block(text, block.page, section or block.section, table=block.table, kind=block.kind)


def _paragraphs(block: Block) -> list[str]:
    if block.table or block.kind in (TextKind.HEADING, TextKind.TABLE):
        return [block.text]
    return [p for p in block.text.split("\n\n") if p.strip()]


def _discarded(body: lxml_html.HtmlElement) -> list[lxml_html.HtmlElement]:
    """The elements trafilatura discards as boilerplate by their class or id, reader comments among them (the
    reader leaves comments out). Its expressions are written for its own tree, whose lists are ``list`` and
    ``item``, and read "hidden" in a style as hidden, which here (hidden elements gone, ``parse_html``) is only
    an "overflow: hidden"; they run on the page so renamed and without styles."""
    renamed: list[tuple[lxml_html.HtmlElement, str]] = []
    for el in body.iter():
        if not isinstance(el.tag, str):
            continue
        el.attrib.pop("style", None)
        if (tag := _TRAFILATURA_TAGS.get(el.tag)) is not None:
            renamed.append((el, el.tag))
            el.tag = tag
    found = [el for expression in (*OVERALL_DISCARD_XPATH, *REMOVE_COMMENTS_XPATH) for el in expression(body)]
    for el, tag in renamed:
        el.tag = tag
    return found


def _chrome(el: lxml_html.HtmlElement) -> bool:
    return el.tag in _CHROME or (el.get("role") or "").lower() in _LANDMARK_ROLES


def _landmark(el: lxml_html.HtmlElement) -> bool:
    return el.tag in _LANDMARKS or (el.get("role") or "").lower() in _LANDMARK_ROLES


def _walk(
    element: lxml_html.HtmlElement, segments: list[Segment], heading: bool = False, link: bool = False
) -> None:
    """Append ``element``'s runs of text, its block-level children's in their place (``link``: ``element``
    lies in a link); an inline element that holds blocks (a link around a card, an inline-XBRL fact around a
    note) is read through."""
    heading = heading or element.tag in _HEADINGS
    if not _holds_block(element):  # the text of one block, its superscripts read in place
        _flush([_piece(element, link)], element, heading, segments)
        return
    run: list[tuple[str, int]] = []

    def read(el: lxml_html.HtmlElement, link: bool) -> None:
        nonlocal run
        run.append(_loose(el.text, link))
        for child in el:
            if not isinstance(child.tag, str):
                pass
            elif child.tag in _BLOCKS:
                _flush(run, element, heading, segments)
                run = []
                _walk(child, segments, heading, link)
            elif _holds_block(child):
                read(child, link or _link(child))
            else:
                run.append(_piece(child, link))
            run.append(_loose(child.tail, link))

    read(element, link)
    _flush(run, element, heading, segments)


def _piece(element: lxml_html.HtmlElement, link: bool) -> tuple[str, int]:
    """The text of ``element`` (an inline one, or a block of inline elements only) and how many of its
    characters lie in links (``link``: all, ``element`` lying in one)."""
    text = inline_text(element)
    if link or _link(element):
        return text, len(" ".join(text.split()))
    links = (a for a in element.iterdescendants("a") if _link(a))
    return text, sum(len(" ".join(inline_text(a).split())) for a in links)


def _loose(text: str | None, link: bool) -> tuple[str, int]:
    return text or "", len(" ".join((text or "").split())) if link else 0


def _holds_block(element: lxml_html.HtmlElement) -> bool:
    return any(isinstance(d.tag, str) and d.tag in _BLOCKS for d in element.iterdescendants())


def _link(element: lxml_html.HtmlElement) -> bool:
    """Whether ``element`` is a link to another page (not to a mail address or a phone number)."""
    return element.tag == "a" and not _NOT_LINKS.match(element.get("href") or "")


def _flush(
    run: list[tuple[str, int]], element: lxml_html.HtmlElement, heading: bool, out: list[Segment]
) -> None:
    text = " ".join(drop_note_markers("".join(t for t, _ in run)).split())
    if text:
        out.append(Segment(text, heading, min(sum(n for _, n in run), len(text)), element))
