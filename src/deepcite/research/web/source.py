"""Web search as an evidence source: any MCP server's ``web_search``-style tool, called per sub-question.

Usage::

    from deepcite.config import WebSearchSettings
    from deepcite.research.web.source import WebSearchSource

    settings = WebSearchSettings(mcp_url="http://127.0.0.1:9000/mcp", allowed_domains=["nih.gov"])
    with WebSearchSource(settings) as source:
        chunks, errors = source.search("does atrial fibrillation raise stroke risk?")

For each sub-question the tool is called once; links outside ``allowed_domains`` (empty: all) are dropped;
the rest are de-duplicated by normalised link, then fetched and summarised concurrently (at most
``concurrency`` at a time, each within ``page_timeout_s``). Every page becomes a :class:`Chunk` with
``source="web"``, its URL and title, tagged with the sub-question that found it. A failing tool or page is
reported in the returned errors and never stops the run.

The executor is synchronous; :meth:`WebSearchSource.search` runs :meth:`~WebSearchSource.evidence` on one
event loop the source keeps in a background thread (an AnyIO blocking portal), started on first use and
stopped by :meth:`~WebSearchSource.close`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from types import TracebackType
from urllib.parse import urlsplit

import httpx

from deepcite.config import Settings, WebSearchSettings
from deepcite.errors import DeepciteError
from deepcite.llm.client import LLMClient
from deepcite.llm.portal import BackgroundLoop
from deepcite.models import Chunk
from deepcite.research.web.links import WebResult, domain_allowed, normalize_link
from deepcite.research.web.mcp_client import call_search_tool
from deepcite.research.web.pages import (
    ExtractiveSummarizer,
    LLMPageSummarizer,
    PageSummarizer,
    WebPage,
    fetch_page,
)

log = logging.getLogger(__name__)

WEB_SOURCE = "web"


def web_chunk(subquestion: str, result: WebResult, page: WebPage, summary: str, tool: str) -> Chunk:
    """A summarised page as a chunk of the research context, tagged with the sub-question that found it."""
    link = normalize_link(result.url)
    digest = hashlib.sha1(f"{link}\n{subquestion}".encode()).hexdigest()[:16]
    return Chunk(
        chunk_id=f"web-{digest}",
        doc_id=link,
        text=summary,
        title=page.title or result.title or (urlsplit(result.url).hostname or result.url),
        url=page.url or result.url,
        source=WEB_SOURCE,
        metadata={
            "subquestion": subquestion,
            "web_rank": result.rank,
            "snippet": result.snippet,
            "domain": (urlsplit(page.url or result.url).hostname or "").lower(),
            "tool": tool,
        },
    )


class WebSearchSource:
    """Web evidence per sub-question through an MCP ``web_search`` tool (see the module docstring)."""

    def __init__(
        self,
        settings: WebSearchSettings,
        *,
        llm: LLMClient | None = None,
        summarizer: PageSummarizer | None = None,
    ) -> None:
        self.settings = settings
        self.summarizer = summarizer or (
            LLMPageSummarizer(llm, settings) if llm is not None else ExtractiveSummarizer(settings)
        )
        self._loop = BackgroundLoop()

    async def evidence(self, subquestion: str) -> tuple[list[Chunk], list[str]]:
        """Summarised web pages for ``subquestion`` (search order) and the errors met on the way."""
        errors: list[str] = []
        try:
            results = await call_search_tool(self.settings, subquestion)
        except DeepciteError as exc:
            log.warning("web search for %r failed: %s", subquestion, exc)
            return [], [f"web search for {subquestion!r}: {exc}"]
        kept = self._select(results)
        dropped = len(results) - len(kept)
        if dropped:
            log.info("web search for %r: %d links outside the allow-list or repeated", subquestion, dropped)
        semaphore = asyncio.Semaphore(self.settings.concurrency)
        async with httpx.AsyncClient(follow_redirects=True, timeout=self.settings.page_timeout_s) as client:
            outcomes = await asyncio.gather(
                *(self._read(client, semaphore, subquestion, result) for result in kept)
            )
        chunks = [chunk for chunk, _ in outcomes if chunk is not None]
        errors.extend(error for _, error in outcomes if error)
        return chunks, errors

    def search(self, subquestion: str) -> tuple[list[Chunk], list[str]]:
        """Blocking twin of :meth:`evidence` for the synchronous executor, run on the source's own loop."""
        return self._loop.call(self.evidence, subquestion)

    def close(self) -> None:
        """Stop the background event loop (a no-op when :meth:`search` never ran); the source can restart."""
        self._loop.close()

    def __enter__(self) -> WebSearchSource:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _select(self, results: list[WebResult]) -> list[WebResult]:
        seen: set[str] = set()
        kept: list[WebResult] = []
        for result in results:
            link = normalize_link(result.url)
            if link in seen or not domain_allowed(result.url, self.settings.allowed_domains):
                continue
            seen.add(link)
            kept.append(result)
            if len(kept) >= self.settings.max_results:
                break
        return kept

    async def _read(
        self, client: httpx.AsyncClient, semaphore: asyncio.Semaphore, subquestion: str, result: WebResult
    ) -> tuple[Chunk | None, str | None]:
        async with semaphore:
            try:
                async with asyncio.timeout(self.settings.page_timeout_s):
                    page = await fetch_page(client, result.url, self.settings)
                    summary = await self.summarizer.summarize(subquestion, page)
            except TimeoutError:
                return (
                    None,
                    f"web page {result.url}: no answer within {self.settings.page_timeout_s}s; skipped",
                )
            except DeepciteError as exc:
                return None, f"web page {exc}; skipped"
        if not summary.strip():
            return None, f"web page {result.url}: nothing to quote; skipped"
        return web_chunk(subquestion, result, page, summary, self.settings.tool_name), None


def web_source_for(settings: Settings, llm: LLMClient | None = None) -> WebSearchSource | None:
    """The web source ``settings.web`` describes, or None when web search is off."""
    return WebSearchSource(settings.web, llm=llm) if settings.web.enabled else None
