"""What a web page says about itself: its title, authors, year and publisher from the page's own metadata.

Read before hidden content is dropped (JSON-LD sits in a ``<script>``, inline XBRL facts in a hidden header),
in this order, the first that names a field wins:

- scholarly meta tags (``citation_title``, ``citation_author``, ``citation_publication_date``,
  ``citation_journal_title``, ``citation_conference_title``, ``citation_publisher``), as Google Scholar reads
  them;
- JSON-LD (schema.org): ``name`` or ``headline``, ``author``, ``datePublished``, ``publisher``;
- Dublin Core and Open Graph meta tags (``dc.title``, ``dc.creator``, ``dc.date``, ``og:title``,
  ``article:published_time``, ``og:site_name``) and ``<meta name="author">``;
- an SEC filing's inline XBRL cover facts (``dei:EntityRegistrantName``, ``dei:DocumentType``,
  ``dei:DocumentPeriodEndDate``, ``dei:DocumentFiscalYearFocus``): "Galaxy Gaming, Inc. Form 10-K for the
  period ended December 31, 2021", published by the registrant, dated by its fiscal year;
- the page's own heading (trafilatura's title), then the ``<title>`` last (a file name there is no title).

No date is guessed from the text: a page that states no date of its own has no year.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lxml import html as lxml_html

from deepcite.ingest.readers.bibliographic import Bibliographic, real_authors, real_title, year_of

_TITLE_TAGS = ("citation_title", "dc.title", "dcterms.title", "og:title", "twitter:title")
_AUTHOR_TAGS = ("citation_author", "dc.creator", "dcterms.creator", "author", "article:author")
_DATE_TAGS = (
    "citation_publication_date",
    "citation_date",
    "citation_online_date",
    "dc.date",
    "dc.date.issued",
    "dcterms.issued",
    "dcterms.date",
    "article:published_time",
)
_VENUE_TAGS = ("citation_journal_title", "citation_conference_title", "citation_publisher", "dc.publisher")
_SITE_TAGS = ("og:site_name",)
_MAX_AUTHOR_CHARS = 80  # a longer "author" is page furniture, not a name


# a script's text wrapped as XHTML character data (``<![CDATA[ … ]]>``, maybe inside a JS comment)
_CDATA = re.compile(r"^\s*(?:/\*\s*)?<!\[CDATA\[(?:\s*\*/)?|(?:/\*\s*)?\]\]>(?:\s*\*/)?\s*$")
# a page title's last part naming the site after " | " or " · " ("… | AutoGen", "… · V8"): at most three words
_SITE_SUFFIX = re.compile(r"\s+[|·]\s+[^|·]{1,40}$")


def _without_site(title: str, site: str) -> str:
    """``title`` without the site's name after it: a short last part after '|' or '·', or the page's own site
    name (og:site_name) after ' - '."""
    if site and title.endswith(f" - {site}"):
        return title.removesuffix(f" - {site}")
    found = _SITE_SUFFIX.search(title)
    return title[: found.start()] if found and len(found.group(0).split()) <= 4 else title


def page_metadata(tree: lxml_html.HtmlElement, headline: str = "") -> Bibliographic:
    """The page's title, authors, year and publisher from its metadata (module docstring); ``headline``, the
    title the page's own heading gives (trafilatura's: the part of ``<title>`` its first heading repeats, else
    that heading), stands before the ``<title>``, which often names the site alone."""
    tags = _meta_tags(tree)
    linked = _json_ld(tree)
    filing = _xbrl_cover(tree)

    def first(names: tuple[str, ...]) -> str:
        return next((tags[n][0] for n in names if tags.get(n)), "")

    authors = next((tags[n] for n in _AUTHOR_TAGS if tags.get(n)), []) or _ld_names(linked.get("author"))
    publisher = _ld_names(linked.get("publisher"))
    title_tag = tree.find(".//title")
    title = (
        real_title(first(_TITLE_TAGS[:1]))
        or real_title(_ld_text(linked.get("name")) or _ld_text(linked.get("headline")))
        or real_title(first(_TITLE_TAGS[1:]))
        or filing.title
        or real_title(headline)
        or real_title(" ".join(title_tag.text_content().split()) if title_tag is not None else "")
    )
    return Bibliographic(
        title=_without_site(title, first(_SITE_TAGS)),
        authors=[a for a in real_authors(authors) if len(a) <= _MAX_AUTHOR_CHARS],
        year=year_of(first(_DATE_TAGS) or _ld_text(linked.get("datePublished"))) or filing.year,
        venue=first(_VENUE_TAGS) or (publisher[0] if publisher else "") or filing.venue or first(_SITE_TAGS),
    )


def _meta_tags(tree: lxml_html.HtmlElement) -> dict[str, list[str]]:
    """``<meta name|property=… content=…>`` by lower-cased name, every value in page order."""
    found: dict[str, list[str]] = {}
    for meta in tree.iter("meta"):
        key = (meta.get("name") or meta.get("property") or "").strip().lower()
        value = " ".join((meta.get("content") or "").split())
        if key and value:
            found.setdefault(key, []).append(value)
    return found


def _json_ld(tree: lxml_html.HtmlElement) -> dict[str, Any]:
    """The page's first schema.org object that names a work (an article, a book, a report …), or {}."""
    for script in tree.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(_CDATA.sub("", script.text or ""))
        except ValueError:
            continue
        for item in _items(data):
            if isinstance(item, dict) and (item.get("name") or item.get("headline")) and item.get("@type"):
                return item
    return {}


def _items(data: Any) -> Iterator[Any]:
    """The objects of a JSON-LD document: a list's items, an ``@graph``'s members, the object itself."""
    if isinstance(data, list):
        for item in data:
            yield from _items(item)
    elif isinstance(data, dict):
        yield data
        yield from _items(data.get("@graph", []))


def _ld_text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _ld_names(value: Any) -> list[str]:
    """The names of a JSON-LD author or publisher: a string, an object with a name, or a list of them."""
    values = value if isinstance(value, list) else [value]
    names = [v if isinstance(v, str) else v.get("name", "") if isinstance(v, dict) else "" for v in values]
    return [n for n in (_ld_text(n) for n in names) if n]


def _xbrl_cover(tree: lxml_html.HtmlElement) -> Bibliographic:
    """An inline-XBRL filing's cover: its registrant, form and period as the title, the registrant as the
    publisher, the fiscal year as the year; blank for any other page."""
    facts: dict[str, str] = {}
    for el in tree.iter():
        if isinstance(el.tag, str) and el.tag.lower().endswith("nonnumeric"):
            name = (el.get("name") or "").lower()
            if name.startswith("dei:") and name not in facts:
                facts[name] = " ".join(el.text_content().split())
    registrant = facts.get("dei:entityregistrantname", "")
    form = facts.get("dei:documenttype", "")
    if not (registrant and form):
        return Bibliographic()
    period = facts.get("dei:documentperiodenddate", "")
    year = facts.get("dei:documentfiscalyearfocus", "")
    return Bibliographic(
        title=f"{registrant} Form {form}" + (f" for the period ended {period}" if period else ""),
        year=int(year) if re.fullmatch(r"(?:19|20)\d\d", year) else year_of(period),
        venue=registrant,
    )
