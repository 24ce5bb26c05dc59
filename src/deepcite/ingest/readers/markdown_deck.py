"""A slide deck written in Markdown inside a web page (remark.js and its kind): the page's ``<textarea>`` holds
every slide as Markdown, slides parted by a line of ``---`` (or ``--`` for a slide built up step by step), and the
page shows nothing else; a browser renders it by script, so the page's main content is that textarea.

Each slide is read as Markdown (:func:`deepcite.ingest.readers.text.markdown_blocks`) with its number as its page,
as the PPTX reader numbers slides: a heading names the section after it, a bullet is a paragraph of its own. A
slide's properties (``class: center, middle``, ``name: intro``, ``background-image: …``, ``layout: true``) and its
presenter notes (after a line ``???``) are no part of what it shows and are left out.
"""

from __future__ import annotations

import re

from lxml import html as lxml_html

from deepcite.ingest.readers.base import Block
from deepcite.ingest.readers.text import markdown_blocks

_NEW_SLIDE = re.compile(r"^\s*---\s*$", re.MULTILINE)
_BUILD_STEP = re.compile(r"^\s*--\s*$", re.MULTILINE)  # the same slide built up one step more
_PROPERTY = re.compile(r"^[a-z][\w-]*:\s.*$")  # "class: center, middle" opening a slide
_HEADING = re.compile(r"^#{1,6}\s+\S", re.MULTILINE)
_NOTES = re.compile(r"^\?\?\?\s*$", re.MULTILINE)


def deck_markdown(page: lxml_html.HtmlElement) -> str | None:
    """The Markdown of the deck ``page`` shows: the text of its ``<textarea>`` when that parts slides with ``---``
    and holds a Markdown heading; else ``None`` (a form's text box, a page of prose)."""
    for box in page.iter("textarea"):
        text = box.text or ""
        if _NEW_SLIDE.search(text) and _HEADING.search(text):
            return text
    return None


def deck_blocks(markdown: str) -> list[Block]:
    """The deck's slides as blocks, each slide's with its number (from 1) as its page (module docstring)."""
    blocks: list[Block] = []
    for number, slide in enumerate(_NEW_SLIDE.split(markdown), start=1):
        shown = _NOTES.split(slide, maxsplit=1)[0]
        lines = shown.strip("\n").splitlines()
        while lines and _PROPERTY.match(lines[0].strip()):
            lines.pop(0)  # the slide's properties, before what it shows
        text = _BUILD_STEP.sub("", "\n".join(lines))
        blocks.extend(markdown_blocks(text, page=number))
    return blocks
