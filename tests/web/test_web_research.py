"""A research run with the web source: web pages join each sub-question's own evidence (stand-in web)."""

from __future__ import annotations

import httpx
import pytest

from deepcite.config import Settings
from deepcite.research.agent import ResearchAgent
from deepcite.research.web.source import WebSearchSource
from deepcite.retrieval.collection import Collection
from deepcite.server.app import create_app
from web.standin import StandinWeb, serve_app

QUESTION = "Does atrial fibrillation increase the risk of stroke, and how is it treated?"

pytestmark = pytest.mark.slow


def test_research_keeps_web_evidence_under_the_subquestion_that_found_it(
    indexed: tuple[Settings, Collection], standin: StandinWeb
) -> None:
    settings, collection = indexed
    web = standin.settings(settings.web, page_timeout_s=3.0)
    agent = ResearchAgent(collection, settings.research, web_source=WebSearchSource(web))

    result = agent.process(QUESTION, max_hops=3)
    pack = result.pack

    assert standin.queries[-len(result.subquestions) :] == result.subquestions
    web_by_sub = {
        sub: [c for c in cands if c.chunk.source == "web"] for sub, cands in pack.subquery_evidence.items()
    }
    assert any(web_by_sub.values()), "some sub-question found web evidence"
    for sub, cands in web_by_sub.items():
        for cand in cands:
            assert cand.chunk.metadata["subquestion"] == sub
            assert cand.subquestions == [sub]
            assert cand.chunk.url and cand.chunk.url.startswith(standin.base_url)
            assert cand.provenance[0].mode == "web"
    # local passages are still there, and web pages are in the final evidence next to them
    assert any(c.chunk.source != "web" for c in pack.final_evidence)
    assert any(c.chunk.source == "web" for c in pack.final_evidence)
    # never the localhost page (not allow-listed); the 404 and the hanging page are errors, not crashes
    assert not any("offsite" in (c.chunk.url or "") for c in pack.final_evidence)
    assert any("missing.html" in e and "404" in e for e in pack.errors)
    assert any("no answer within" in e for e in pack.errors)


def test_research_without_web_source_has_no_web_evidence(indexed: tuple[Settings, Collection]) -> None:
    settings, collection = indexed
    agent = ResearchAgent(collection, settings.research)
    pack = agent.process(QUESTION, max_hops=2).pack
    assert pack.final_evidence
    assert not any(c.chunk.source == "web" for c in pack.final_evidence)


def test_api_response_lists_web_evidence_per_subquestion(
    indexed: tuple[Settings, Collection], standin: StandinWeb
) -> None:
    settings, collection = indexed
    web = settings.web.model_copy(
        update={
            "enabled": True,
            "mcp_url": standin.mcp_url,
            "allowed_domains": ["127.0.0.1"],
            "max_results": 2,
        }
    )
    app = create_app(
        settings.model_copy(update={"web": web}), store=collection.store, embedder=collection.embedder
    )
    with serve_app(lambda port: app) as port:
        body = httpx.post(
            f"http://127.0.0.1:{port}/api/unified-search",
            json={"query": QUESTION, "collection": "demo", "max_hops": 2},
            timeout=600,
        ).json()

    assert body["success"] is True
    web_citations = {c["id"]: c for c in body["citations"] if c["source"] == "web"}
    assert web_citations, "web pages are numbered with the rest of the context"
    for citation in web_citations.values():
        assert citation["url"].startswith(standin.base_url) and citation["title"]
    with_web = [s for s in body["subanswers"] if set(s["evidence"]) & set(web_citations)]
    assert with_web, "a sub-question lists the web pages its own search found"
    for sub in with_web:
        # a page summarised for one sub-question is never listed under another
        others = [o for o in body["subanswers"] if o["subquestion"] != sub["subquestion"]]
        mine = set(sub["evidence"]) & set(web_citations)
        assert all(not (mine & set(o["evidence"])) for o in others)
