"""The web-search evidence adapter against a real MCP server and real HTTP pages (stand-ins for the web)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from deepcite.config import WebSearchSettings
from deepcite.errors import LLMError
from deepcite.research.web.links import domain_allowed, normalize_link, parse_tool_results
from deepcite.research.web.pages import extractive_summary, html_to_text
from deepcite.research.web.source import WebSearchSource
from web.standin import PAGES, StandinWeb

QUESTION = "Does atrial fibrillation raise the risk of stroke?"


def _settings(web: StandinWeb, **overrides: Any) -> WebSearchSettings:
    values: dict[str, Any] = {
        "enabled": True,
        "mcp_url": web.mcp_url,
        "allowed_domains": ["127.0.0.1"],
        "max_results": 10,
        "concurrency": 2,
        "page_timeout_s": 3.0,  # ample for a local page; the hanging page still fails
    }
    return WebSearchSettings(**{**values, **overrides})


def test_normalize_link_removes_what_does_not_change_the_page() -> None:
    a = normalize_link("HTTPS://www.Example.org:443/a/b/?utm_source=x&z=1&a=2#frag")
    assert a == "https://example.org/a/b?a=2&z=1"
    assert normalize_link("https://example.org/a/b?z=1&a=2") == a
    assert normalize_link("http://example.org:8080/") == "http://example.org:8080"
    assert normalize_link("https://example.org/a?id=1") != normalize_link("https://example.org/a?id=2")


def test_domain_allow_list_takes_subdomains_and_empty_means_all() -> None:
    assert domain_allowed("https://pubmed.ncbi.nlm.nih.gov/1/", ["nih.gov"])
    assert domain_allowed("https://www.nih.gov/x", ["nih.gov"])
    assert not domain_allowed("https://notnih.gov/x", ["nih.gov"])
    assert not domain_allowed("https://nih.gov.evil.com/x", ["nih.gov"])
    assert domain_allowed("https://anything.example/x", [])


def test_tool_results_are_read_from_structured_json_text_and_markdown() -> None:
    structured = {"results": [{"url": "https://a.org/1", "title": "A", "snippet": "s"}, {"title": "no link"}]}
    found = parse_tool_results(structured, [])
    assert [(r.url, r.title, r.rank) for r in found] == [("https://a.org/1", "A", 1)]
    text = '[{"link": "https://b.org/2", "name": "B", "description": "d"}]'
    found = parse_tool_results(None, [text])
    assert [(r.url, r.title, r.snippet) for r in found] == [("https://b.org/2", "B", "d")]
    nested = {"web": {"results": [{"href": "https://c.org/3"}]}}
    assert [r.url for r in parse_tool_results(nested, [])] == ["https://c.org/3"]
    markdown = "1. [First](https://d.org/4) - about d\n2. [Second](https://e.org/5)"
    assert [(r.url, r.title) for r in parse_tool_results(None, [markdown])] == [
        ("https://d.org/4", "First"),
        ("https://e.org/5", "Second"),
    ]


def test_html_text_skips_scripts_navigation_and_footers() -> None:
    title, text = html_to_text((PAGES / "af-stroke.html").read_text(encoding="utf-8"))
    assert title == "Atrial fibrillation and stroke: what patients should know"
    assert "five times the risk of stroke" in text
    for noise in ("ignore me", "font-family", "Home | Conditions", "Copyright"):
        assert noise not in text


def test_html_text_of_a_decoded_xhtml_page_leaves_hidden_blocks_out() -> None:
    page = (
        '<?xml version="1.0" encoding="iso-8859-1"?><html><head><title>Warfarin – dosing</title></head>'
        "<body><article><p>Warfarin doses are adjusted to keep the INR between two and three in most "
        "patients.</p><div style='display:none'>tracking pixel text</div><p hidden>secret note</p>"
        "</article></body></html>"
    )
    title, text = html_to_text(page)
    assert title == "Warfarin – dosing" and "INR between two and three" in text
    assert "tracking pixel" not in text and "secret note" not in text
    assert html_to_text("") == ("", "")


def test_extractive_summary_keeps_the_sentences_about_the_question_in_page_order() -> None:
    settings = WebSearchSettings(summary_sentences=2)
    _, text = html_to_text((PAGES / "af-stroke.html").read_text(encoding="utf-8"))
    summary = extractive_summary("which stroke risk score", text, settings)
    assert "five times the risk of stroke" in summary
    assert "most common" not in summary and "Newsletter" not in summary
    assert summary.index("five times") < summary.index("CHA2DS2-VASc")


async def _evidence(settings: WebSearchSettings) -> tuple[list, list[str]]:
    return await WebSearchSource(settings).evidence(QUESTION)


async def test_web_evidence_per_subquestion_from_allowed_pages(standin: StandinWeb) -> None:
    chunks, errors = await _evidence(_settings(standin))

    assert QUESTION in standin.queries
    urls = [c.url for c in chunks]
    assert all(c.source == "web" for c in chunks)
    assert all(c.metadata["subquestion"] == QUESTION for c in chunks)
    # the tracking-parameter copy of the stroke page is the same link: read once
    assert sum("af-stroke.html" in u for u in urls) == 1
    assert any("anticoagulants.html" in u for u in urls)
    # the localhost link is outside the allow-list: never fetched, never evidence
    assert not any("offsite" in u for u in urls)
    stroke = next(c for c in chunks if "af-stroke.html" in c.url)
    assert stroke.title == "Atrial fibrillation and stroke: what patients should know"
    assert "five times the risk of stroke" in stroke.text
    assert stroke.doc_id == normalize_link(stroke.url)
    # the missing page (404) and the page that never answers are recorded, the rest still arrived
    assert any("missing.html" in e and "404" in e for e in errors)
    assert any("slow/af-stroke.html" in e and "no answer within" in e for e in errors)
    assert len(errors) == 2


async def test_results_stay_under_the_subquestion_that_found_them(standin: StandinWeb) -> None:
    source = WebSearchSource(_settings(standin, max_results=2))
    risk, treatment = (
        "stroke risk of atrial fibrillation",
        "how is atrial fibrillation treated with anticoagulants",
    )
    first, _ = await source.evidence(risk)
    second, _ = await source.evidence(treatment)
    assert first and second
    assert len(first) <= 2 and len(second) <= 2
    assert {c.metadata["subquestion"] for c in first} == {risk}
    assert {c.metadata["subquestion"] for c in second} == {treatment}
    # a page found by both keeps one chunk per sub-question, each summarised for its own sub-question
    assert not {c.chunk_id for c in first} & {c.chunk_id for c in second}


async def test_empty_allow_list_admits_every_domain(standin: StandinWeb) -> None:
    chunks, _ = await _evidence(_settings(standin, allowed_domains=[]))
    assert any("offsite.html" in c.url for c in chunks)


async def test_unreachable_tool_is_an_error_not_an_exception() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = WebSearchSettings(enabled=True, mcp_url=f"http://127.0.0.1:{port}/mcp", tool_timeout_s=5)
    chunks, errors = await _evidence(settings)
    assert chunks == []
    assert len(errors) == 1 and "cannot call web_search" in errors[0] and "DEEPCITE_WEB_MCP_URL" in errors[0]


async def test_unknown_tool_is_reported(standin: StandinWeb) -> None:
    chunks, errors = await _evidence(_settings(standin, tool_name="no_such_tool"))
    assert chunks == []
    assert len(errors) == 1 and "no_such_tool" in errors[0]


class _StandinLLM:
    """Stand-in for a remote LLM: answers with a fixed summary, or fails like an outage."""

    def __init__(self, reply: str | None) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    @property
    def model(self) -> str:
        return "stand-in"

    def chat(self, messages: Sequence[Any], **_: Any) -> str:
        raise NotImplementedError

    async def achat(self, messages: Sequence[Any], **_: Any) -> str:
        self.prompts.append(messages[-1]["content"])
        if self.reply is None:
            raise LLMError("stand-in LLM is down")
        return self.reply


async def test_llm_writes_the_summary_when_configured_and_extractive_takes_over_on_failure(
    standin: StandinWeb,
) -> None:
    settings = _settings(standin, allowed_domains=["127.0.0.1"], max_results=1)
    llm = _StandinLLM("Atrial fibrillation raises stroke risk about five-fold.")
    chunks, _ = await WebSearchSource(settings, llm=llm).evidence(QUESTION)
    assert [c.text for c in chunks] == ["Atrial fibrillation raises stroke risk about five-fold."]
    assert "five times the risk of stroke" in llm.prompts[0] and QUESTION in llm.prompts[0]

    down = _StandinLLM(None)
    chunks, errors = await WebSearchSource(settings, llm=down).evidence(QUESTION)
    assert len(chunks) == 1 and "five times the risk of stroke" in chunks[0].text
    assert down.prompts


def test_blocking_search_reuses_one_event_loop_until_closed(standin: StandinWeb) -> None:
    """The synchronous executor's calls run on one long-lived portal, not a new thread and loop per call."""
    with WebSearchSource(_settings(standin, max_results=1)) as source:
        first, _ = source.search(QUESTION)
        portal = source._loop._portal
        second, _ = source.search("how is atrial fibrillation treated with anticoagulants")
        assert first and second and portal is not None and source._loop._portal is portal
    assert not source._loop.started
