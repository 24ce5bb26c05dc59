"""Links from a web-search tool: parsing its answer (JSON or text) and telling which links are the same page
or allowed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_URL_KEYS = ("url", "link", "href", "uri")
_TITLE_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "description", "summary", "content", "text")
_LIST_KEYS = ("results", "items", "web", "hits", "data", "organic")
_TRACKING = re.compile(r"^(utm_.*|fbclid|gclid|mc_cid|mc_eid|ref|ref_src)$", re.IGNORECASE)
_MARKDOWN_LINK = re.compile(r"\[([^\]]{1,300})\]\((https?://[^\s)]+)\)")
_BARE_URL = re.compile(r"https?://[^\s<>\"')\]]+")


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
