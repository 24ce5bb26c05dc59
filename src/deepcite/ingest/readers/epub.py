"""EPUB books: chapters in spine order (the reading order the book declares), headings as sections."""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path

from lxml import etree

from deepcite.config import IngestSettings
from deepcite.ingest.readers.archive import zip_bomb
from deepcite.ingest.readers.base import Block, ReadResult, SkipReason, document_from_blocks
from deepcite.ingest.readers.bibliographic import (
    Bibliographic,
    copyright_line_year,
    real_authors,
    real_title,
    year_of,
)
from deepcite.ingest.readers.html import html_blocks, parse_html

_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
}
_FRONT_CHARS = 5000  # a book's front matter (title page, copyright notice) lies within its first characters
_XML = etree.XMLParser(resolve_entities=False, no_network=True)


class EpubReader:
    """Every chapter's text (the Project Gutenberg header and licence too: nothing is dropped)."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        if bomb := zip_bomb(path, settings):
            return bomb
        with zipfile.ZipFile(path) as book:
            container = etree.fromstring(book.read("META-INF/container.xml"), _XML)
            rootfile = container.find(".//c:rootfile", _NS)
            if rootfile is None:
                return ReadResult.skipped(SkipReason.CORRUPT, "the EPUB names no package file (OPF)")
            opf_path = rootfile.get("full-path", "")
            opf = etree.fromstring(book.read(opf_path), _XML)
            base = posixpath.dirname(opf_path)
            manifest = {
                item.get("id"): item.get("href") for item in opf.iterfind(".//opf:manifest/opf:item", _NS)
            }
            blocks: list[Block] = []
            for itemref in opf.iterfind(".//opf:spine/opf:itemref", _NS):
                href = manifest.get(itemref.get("idref"))
                if not href:
                    continue
                tree = parse_html(book.read(posixpath.normpath(posixpath.join(base, href))))
                chapter, _ = html_blocks(tree, blocks[-1].section if blocks else None)
                blocks.extend(chapter)
        about = Bibliographic(
            title=real_title(opf.findtext(".//dc:title", namespaces=_NS)),
            authors=real_authors(c.text or "" for c in opf.iterfind(".//dc:creator", _NS)),
            # the OPF's date, else the copyright line of the book's front (its title page: "Copyright, 1916")
            year=year_of(opf.findtext(".//dc:date", namespaces=_NS))
            or copyright_line_year("\n".join(b.text for b in blocks)[:_FRONT_CHARS]),
            venue=" ".join((opf.findtext(".//dc:publisher", namespaces=_NS) or "").split()),
        )
        return document_from_blocks(blocks, doc_id=doc_id, name=name, about=about)
