"""Web pages as evidence: fetch a page, pull its readable text, and summarise it for one sub-question.

The summary is extractive by default (the page's own sentences closest to the sub-question, in page
order), so it works offline; with an LLM client, :class:`LLMPageSummarizer` writes it and falls back to
the extractive summary on any failure.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import httpx
import trafilatura
from lxml import etree

from deepcite.config import WebSearchSettings
from deepcite.errors import DeepciteError
from deepcite.ingest.readers.html import html_title, parse_html
from deepcite.llm.client import LLMClient
from deepcite.text import split_sentences, tokenize

log = logging.getLogger(__name__)

_HTML_TYPES = ("text/html", "application/xhtml+xml")


class WebPageError(DeepciteError):
    """A web page could not be fetched or read."""

    http_status = 502


@dataclass
class WebPage:
    """A fetched page: where it ended up, its title and its readable text."""

    url: str
    title: str
    text: str


def html_to_text(html: str) -> tuple[str, str]:
    """``(title, text)`` of an HTML document: its ``<title>`` (else the title trafilatura finds, such as the
    first heading) and its main content as trafilatura extracts it (navigation, sidebars, footers, scripts
    and hidden blocks left out), one paragraph a line."""
    try:
        tree = parse_html(html)
    except (etree.ParserError, ValueError):  # an empty or unparsable document has no readable text
        return "", ""
    text = trafilatura.extract(
        tree, output_format="txt", include_tables=True, include_comments=False, favor_recall=True
    )
    found = trafilatura.extract_metadata(tree)
    title = html_title(tree) or (found.title if found is not None else None) or ""
    return title, text or ""


async def fetch_page(client: httpx.AsyncClient, url: str, settings: WebSearchSettings) -> WebPage:
    """GET ``url`` (redirects followed, at most ``max_page_bytes`` read) and extract its text."""
    if not url.lower().startswith(("http://", "https://")):
        raise WebPageError(f"{url}: only http(s) links are fetched")
    try:
        async with client.stream("GET", url, headers={"User-Agent": settings.user_agent}) as response:
            if response.status_code >= 400:
                raise WebPageError(f"{url}: HTTP {response.status_code}")
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind and kind not in _HTML_TYPES and not kind.startswith("text/"):
                raise WebPageError(f"{url}: content type {kind!r} is not a web page (html or text)")
            body = bytearray()
            async for piece in response.aiter_bytes():
                body.extend(piece)
                if len(body) >= settings.max_page_bytes:
                    break
            raw = bytes(body[: settings.max_page_bytes]).decode(
                response.encoding or "utf-8", errors="replace"
            )
            final_url = str(response.url)
    except httpx.HTTPError as exc:
        raise WebPageError(f"{url}: {type(exc).__name__}: {exc}") from exc
    if kind in _HTML_TYPES or (not kind and "<html" in raw[:2000].lower()):
        title, text = html_to_text(raw)
    else:
        title, text = "", raw.strip()
    if not text:
        raise WebPageError(f"{url}: the page has no readable text")
    return WebPage(url=final_url, title=title, text=text)


def extractive_summary(question: str, text: str, settings: WebSearchSettings) -> str:
    """The page's sentences that share the most terms with ``question``, in page order.

    Sentences are scored by distinct shared stemmed terms over the square root of their length; when no
    sentence shares a term, the page's opening sentences are used. The result is cut to
    ``summary_max_chars``.
    """
    wanted = set(tokenize(question))
    sentences = [s for line in text.split("\n") for s in split_sentences(line)]
    sentences = [s for s in sentences if len(tokenize(s)) >= settings.min_sentence_tokens] or sentences
    scored: list[tuple[float, int]] = []
    for index, sentence in enumerate(sentences):
        terms = set(tokenize(sentence))
        shared = len(terms & wanted)
        if shared:
            scored.append((shared / math.sqrt(len(terms)), index))
    if scored:
        best = sorted(scored, key=lambda pair: (-pair[0], pair[1]))[: settings.summary_sentences]
        picked = [sentences[i] for _, i in sorted(best, key=lambda pair: pair[1])]
    else:
        picked = sentences[: settings.summary_sentences]
    return _cut(" ".join(picked), settings.summary_max_chars)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


@runtime_checkable
class PageSummarizer(Protocol):
    """Writes a short passage of a page that bears on one sub-question."""

    async def summarize(self, question: str, page: WebPage) -> str: ...


class ExtractiveSummarizer:
    """Offline summaries: :func:`extractive_summary`."""

    def __init__(self, settings: WebSearchSettings) -> None:
        self.settings = settings

    async def summarize(self, question: str, page: WebPage) -> str:
        return extractive_summary(question, page.text, self.settings)


_SUMMARY_PROMPT = (
    "Summarise the web page below in at most {n} sentences, keeping only facts that bear on the question. "
    "Use ONLY the page text; never add knowledge of your own. If the page says nothing relevant, answer "
    "with its main point in one sentence.\n\n"
    "Question: {question}\n\nPage title: {title}\n\nPage text:\n{text}"
)


class LLMPageSummarizer:
    """Summaries written by an LLM from the page text only; the extractive summary on any failure."""

    def __init__(self, llm: LLMClient, settings: WebSearchSettings) -> None:
        self.llm = llm
        self.settings = settings

    async def summarize(self, question: str, page: WebPage) -> str:
        prompt = _SUMMARY_PROMPT.format(
            n=self.settings.summary_sentences,
            question=question,
            title=page.title,
            text=page.text[: self.settings.llm_page_chars],
        )
        try:
            reply = await self.llm.achat([{"role": "user", "content": prompt}])
        except Exception as exc:  # an LLM outage must not lose the page: fall back, say so in the log
            log.warning("LLM page summary failed for %s (%s); using the extractive summary", page.url, exc)
            return extractive_summary(question, page.text, self.settings)
        reply = reply.strip()
        return (
            _cut(reply, self.settings.summary_max_chars)
            if reply
            else extractive_summary(question, page.text, self.settings)
        )
