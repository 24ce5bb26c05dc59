"""Web search as an evidence source: any MCP server's ``web_search``-style tool, called per sub-question.

Usage::

    from deepcite.config import WebSearchSettings
    from deepcite.research.web_search import WebSearchSource

    settings = WebSearchSettings(mcp_url="http://127.0.0.1:9000/mcp", allowed_domains=["nih.gov"])
    source = WebSearchSource(settings)
    chunks, errors = await source.evidence("does atrial fibrillation raise stroke risk?")

For each sub-question the tool is called once; links outside ``allowed_domains`` (empty: all) are dropped;
the rest are de-duplicated by normalised link, then fetched and summarised concurrently (at most
``concurrency`` at a time, each within ``page_timeout_s``). Every page becomes a :class:`Chunk` with
``source="web"``, its URL and title, tagged with the sub-question that found it. A failing tool or page is
reported in the returned errors and never stops the run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
import httpx

from deepcite.config import ResearchSettings, Settings, WebSearchSettings
from deepcite.errors import ConfigError, DeepciteError
from deepcite.llm.client import LLMClient
from deepcite.models import Candidate, Chunk
from deepcite.research.protocols import Retriever, WebSource
from deepcite.research.state import ExecutorState
from deepcite.research.vectors import passage_text
from deepcite.research.web_pages import (
    ExtractiveSummarizer,
    LLMPageSummarizer,
    PageSummarizer,
    WebPage,
    fetch_page,
)
from deepcite.retrieval.fusion import rrf_contribution

log = logging.getLogger(__name__)

WEB_SOURCE = "web"
_URL_KEYS = ("url", "link", "href", "uri")
_TITLE_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "description", "summary", "content", "text")
_LIST_KEYS = ("results", "items", "web", "hits", "data", "organic")
_TRACKING = re.compile(r"^(utm_.*|fbclid|gclid|mc_cid|mc_eid|ref|ref_src)$", re.IGNORECASE)
_MARKDOWN_LINK = re.compile(r"\[([^\]]{1,300})\]\((https?://[^\s)]+)\)")
_BARE_URL = re.compile(r"https?://[^\s<>\"')\]]+")


class WebSearchError(DeepciteError):
    """The web_search tool could not be reached or answered something unusable."""

    http_status = 502


@dataclass
class WebResult:
    """One link the search tool returned, in its order."""

    url: str
    title: str = ""
    snippet: str = ""
    rank: int = 0


def normalize_link(url: str) -> str:
    """A link's identity: lower-case scheme and host without ``www.`` or default port, no fragment,
    no tracking parameters, sorted query, no trailing slash."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().removeprefix("www.")
    port = parts.port
    if port and not ((scheme == "http" and port == 80) or (scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/") or ""
    query = urlencode(
        sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING.match(k))
    )
    return urlunsplit((scheme, host, path, query, ""))


def domain_allowed(url: str, allowed: list[str]) -> bool:
    """True when ``url``'s host is one of ``allowed`` or a sub-domain of one (an empty list allows all)."""
    if not allowed:
        return True
    host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
    for entry in allowed:
        domain = entry.strip().lower().removeprefix("www.").strip(".")
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


def parse_tool_results(structured: Any, texts: list[str]) -> list[WebResult]:
    """Links from a web_search tool's answer: structured JSON, JSON text, or markdown/bare links in text."""
    items: list[Any] = []
    if structured is not None:
        items = _result_items(structured)
    if not items:
        for text in texts:
            try:
                items.extend(_result_items(json.loads(text)))
            except (json.JSONDecodeError, TypeError):
                items.extend(_links_in_text(text))
    results: list[WebResult] = []
    for item in items:
        result = item if isinstance(item, WebResult) else _result_from_mapping(item)
        if result is not None:
            result.rank = len(results) + 1
            results.append(result)
    return results


def _result_items(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in _LIST_KEYS:
            inner = value.get(key)
            if isinstance(inner, list):
                return inner
            if isinstance(inner, dict):  # e.g. {"web": {"results": [...]}}
                nested = _result_items(inner)
                if nested:
                    return nested
        if any(key in value for key in _URL_KEYS):
            return [value]
    return []


def _result_from_mapping(item: Any) -> WebResult | None:
    if isinstance(item, str) and item.startswith(("http://", "https://")):
        return WebResult(url=item)
    if not isinstance(item, dict):
        return None
    url = next((str(item[k]) for k in _URL_KEYS if isinstance(item.get(k), str) and item[k]), "")
    if not url.startswith(("http://", "https://")):
        return None
    title = next((str(item[k]) for k in _TITLE_KEYS if isinstance(item.get(k), str)), "")
    snippet = next((str(item[k]) for k in _SNIPPET_KEYS if isinstance(item.get(k), str)), "")
    return WebResult(url=url, title=title.strip(), snippet=snippet.strip())


def _links_in_text(text: str) -> list[WebResult]:
    found = [WebResult(url=url, title=title.strip()) for title, url in _MARKDOWN_LINK.findall(text)]
    if not found:
        found = [WebResult(url=url.rstrip(".,;")) for url in _BARE_URL.findall(text)]
    return found


async def call_search_tool(settings: WebSearchSettings, query: str) -> list[WebResult]:
    """Call the configured MCP server's search tool with ``query`` and return the links it found."""
    from mcp import ClientSession  # the MCP client loads only when web search is used
    from mcp.client.streamable_http import streamable_http_client

    if not settings.mcp_url:
        raise ConfigError("web search is enabled but no MCP server is set; set DEEPCITE_WEB_MCP_URL")
    arguments = {**settings.tool_arguments, settings.query_argument: query}
    try:
        with anyio.fail_after(settings.tool_timeout_s):
            async with (
                streamable_http_client(settings.mcp_url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool(settings.tool_name, arguments)
    except TimeoutError as exc:
        raise WebSearchError(
            f"the {settings.tool_name} tool at {settings.mcp_url} did not answer "
            f"within {settings.tool_timeout_s}s"
        ) from exc
    except Exception as exc:  # transport failures arrive as exception groups from the SDK's task groups
        raise WebSearchError(
            f"cannot call {settings.tool_name} at {settings.mcp_url}: {_root_message(exc)}; "
            "check DEEPCITE_WEB_MCP_URL and that the server is running"
        ) from exc
    texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
    if result.is_error:
        raise WebSearchError(f"the {settings.tool_name} tool failed: {' '.join(texts) or 'no message'}")
    return parse_tool_results(result.structured_content, texts)


def _root_message(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


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
        """Blocking twin of :meth:`evidence` for the (synchronous) executor; safe inside a running loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.evidence(subquestion))
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, self.evidence(subquestion)).result()

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


async def web_evidence(
    subquestion: str, settings: WebSearchSettings, llm: LLMClient | None = None
) -> tuple[list[Chunk], list[str]]:
    """Web evidence for one sub-question: ``(chunks, errors)``; see :class:`WebSearchSource`."""
    return await WebSearchSource(settings, llm=llm).evidence(subquestion)


def add_web_evidence(
    state: ExecutorState, source: WebSource, retriever: Retriever, settings: ResearchSettings
) -> ExecutorState:
    """Executor node (after ``select_evidence``): web pages for this round's sub-question join its evidence.

    Each page becomes a selected candidate of the round, under this sub-question only. Its score is
    the round's best selected score scaled by the reciprocal-rank ratio of its search rank, so a page
    ranks with the local evidence it was found beside. Errors are recorded and the round goes on.
    """
    sub = state.subquestion
    chunks, errors = source.search(sub)
    state.errors.extend(f"round {state.round}: {error}" for error in errors)
    state.counts["web"] = len(chunks)
    if not chunks:
        return state
    rows = retriever.embed([passage_text(chunk) for chunk in chunks])
    top = max((c.score for c in state.selected), default=0.0) or rrf_contribution(1, settings.merge_rrf_k)
    added: list[Candidate] = []
    for position, (chunk, row) in enumerate(zip(chunks, rows, strict=True), start=1):
        state.vectors[chunk.chunk_id] = row
        rank = int(chunk.metadata.get("web_rank") or position)
        score = top * rrf_contribution(rank, settings.merge_rrf_k) / rrf_contribution(1, settings.merge_rrf_k)
        cand = Candidate(
            chunk=chunk,
            score=score,
            features={f"r{state.round}:web:rank": float(rank), "web": score},
            provenance=[
                {
                    "round": state.round,
                    "query": sub,
                    "kind": "web",
                    "mode": WEB_SOURCE,
                    "subquestion": sub,
                    "rank": rank,
                    "score": score,
                }
            ],
            subquestions=[sub],
        )
        if cand.key not in state.evidence:
            state.evidence[cand.key] = cand.model_copy(deep=True)
            state.new_evidence += 1
        added.append(cand)
    state.selected = [*state.selected, *added]
    own = state.subquery_evidence.setdefault(sub, [])
    own.extend(c.model_copy(deep=True) for c in added)
    return state
