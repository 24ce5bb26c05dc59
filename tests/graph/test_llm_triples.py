"""LLM triple extraction at ingest (graph.llm_triples): relation edges the walk follows, the cache, resuming an
interrupted ingest, and the offline fallback. Real Edge store, real SQLite, real MiniLM, the real OpenAI-compatible
client handed to the ingest pipeline as the Engine hands it; the LLM itself is the stand-in HTTP server of
tests/llm/fake_openai_server.py (no LLM runs here)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llm.fake_openai_server import Fail, FakeOpenAIServer

from deepcite.config import GraphSettings, LLMSettings, Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.llm.client import LLMClient, Message
from deepcite.llm.factory import get_llm
from deepcite.models import Document
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder

QUESTION = "Who is the spouse of the performer of Green?"
# the song's page does not name its performer (only the LLM's triple does), so offline nothing leads from
# "Green" to Marla Quint's page; the distractors share the question's words
DOCS = [
    Document(
        id="green",
        title="Green (song)",
        text="Green is a 1998 song by the singer from Oslo, on the album Meadow.",
    ),
    Document(
        id="quint",
        title="Marla Quint",
        text="Marla Quint is a Canadian singer. Quint married the painter Oskar Brandt in 2004.",
    ),
    Document(id="d1", title="Spouses of performers", text="The spouse of a performer often travels on tour."),
    Document(
        id="d2", title="Green room", text="A green room is where a performer waits before going on stage."
    ),
    Document(
        id="d3", title="Performing arts", text="Who is a performer? Any artist who performs on a stage."
    ),
    Document(
        id="d4", title="Oak Valley", text="Oak Valley is a town in Ohio with a green park and a theatre."
    ),
]
# what the stand-in LLM reads in each passage, by title
FACTS: dict[str, dict[str, Any]] = {
    "Green (song)": {
        "entities": ["Green", "Marla Quint"],
        "triples": [["Green", "performed by", "Marla Quint"]],
    },
    "Marla Quint": {
        "entities": ["Marla Quint", "Oskar Brandt"],
        "triples": [["Marla Quint", "married", "Oskar Brandt"]],
    },
}
PASSAGE = re.compile(r"Passage (\d+):\n(.*?)(?=\n\nPassage \d+:\n|\Z)", re.S)


def asked_titles(body: dict[str, Any]) -> list[str]:
    """The titles of the passages one request asks about."""
    return [text.split(". ", 1)[0] for _, text in PASSAGE.findall(body["messages"][-1]["content"])]


def triples_reply(body: dict[str, Any]) -> str:
    """The stand-in's answer: each passage's facts from FACTS (none for the others)."""
    items = [
        {"passage": int(n), **FACTS.get(text.split(". ", 1)[0], {"entities": [], "triples": []})}
        for n, text in PASSAGE.findall(body["messages"][-1]["content"])
    ]
    return json.dumps({"passages": items})


def settings_for(tmp_path: Path, server: FakeOpenAIServer | None, **graph: Any) -> Settings:
    llm = (
        LLMSettings(base_url=server.base_url, model="stand-in-model", max_retries=0)
        if server
        else LLMSettings()
    )
    # the walk led by the question's entities alone (no first-hop passages seed it)
    graph = {"llm_triples": server is not None, "passage_seed_weight": 0.0, **graph}
    return Settings(data_dir=tmp_path / "data", llm=llm, graph=GraphSettings(**graph))


def pipeline(col: Collection, llm: LLMClient | None = None) -> IngestPipeline:
    """The collection's ingest with the LLM client of its settings (as the Engine builds it), or ``llm``."""
    return IngestPipeline(col, llm=llm or get_llm(col.settings))


class CtrlCOnRequest:
    """Stand-in for the user pressing Ctrl-C while the LLM reads: from request number ``at`` on, a request
    raises KeyboardInterrupt instead of being sent (it reaches the ingest through the extraction's wait, as
    the signal would); the earlier ones go to the real client. No signal, so nothing depends on when one
    lands, and no request slips out after the interrupt however the threads are scheduled."""

    def __init__(self, llm: LLMClient, at: int) -> None:
        self.llm, self.at, self.calls = llm, at, 0

    @property
    def model(self) -> str:
        return self.llm.model

    def chat(self, messages: Sequence[Message], **options: Any) -> str:
        self.calls += 1
        if self.calls >= self.at:
            raise KeyboardInterrupt
        return self.llm.chat(messages, **options)

    async def achat(self, messages: Sequence[Message], **options: Any) -> str:
        return await self.llm.achat(messages, **options)


def ranked_docs(col: Collection) -> list[str]:
    return [p.doc_id for p in col.graph_walk(QUESTION, seed_chunk_ids=[]).passages]


def test_triples_add_relations_that_lead_the_walk_to_a_passage_offline_entities_miss(
    tmp_path: Path, minilm: Embedder
) -> None:
    offline = open_collection("songs", settings_for(tmp_path / "offline", None), embedder=minilm)
    IngestPipeline(offline).ingest(DOCS)
    assert "quint" not in ranked_docs(offline)  # nothing offline links the song to its performer
    with FakeOpenAIServer(triples_reply) as server:
        col = open_collection("songs", settings_for(tmp_path, server), embedder=minilm)
        report = pipeline(col).ingest(DOCS)
    assert report.triples is not None
    assert (report.triples.asked, report.triples.extracted, report.triples.triples) == (6, 6, 2)
    assert report.triples.requests == 2 and not report.triples.failed  # 4 passages a request
    assert col.graph.stats().relations == 2
    walk = col.graph_walk(QUESTION, seed_chunk_ids=[])
    assert [p.doc_id for p in walk.passages][:2] == ["green", "quint"]
    link = next(p.link for p in walk.passages if p.doc_id == "quint")
    assert link.entity == "Marla Quint" and link.relation == "Green (song) performed by Marla Quint"
    col.delete_document("green")  # its triple goes with it
    assert col.graph.stats().relations == 1 and "quint" not in ranked_docs(col)


def test_cached_replies_are_not_asked_again(tmp_path: Path, minilm: Embedder) -> None:
    with FakeOpenAIServer(triples_reply) as server:
        col = open_collection("songs", settings_for(tmp_path, server, llm_triples_batch=1), embedder=minilm)
        pipeline(col).ingest(DOCS)
        assert len(server.requests) == 6 and col.triple_cache.count() == 6
        pipeline(col).rebuild_graph()  # every passage again, all from the cache
        pipeline(col).ingest(DOCS)  # nothing changed
        assert len(server.requests) == 6
        assert col.graph.stats().relations == 2
        changed = Document(id="d4", title="Oak Valley", text="Oak Valley is a village in Ohio.")
        report = pipeline(col).ingest([*DOCS[:5], changed])
        assert [t for body in server.requests[6:] for t in asked_titles(body)] == ["Oak Valley"]
        assert report.triples is not None and (report.triples.asked, report.triples.cached) == (1, 0)


def test_an_interrupted_ingest_resumes_asking_only_for_passages_not_done(
    tmp_path: Path, minilm: Embedder
) -> None:
    with FakeOpenAIServer(triples_reply) as server:
        settings = settings_for(tmp_path, server, llm_triples_batch=1, llm_triples_concurrency=1)
        col = open_collection("songs", settings, embedder=minilm)
        llm = get_llm(settings)
        assert llm is not None
        with pytest.raises(KeyboardInterrupt):  # Ctrl-C while the third passage is being read
            pipeline(col, CtrlCOnRequest(llm, at=3)).ingest(DOCS)
        first = [t for body in server.requests for t in asked_titles(body)]
        done = col.triple_cache.count()
        assert done == len(first) == 2 and col.count() == 0  # interrupted before the batch was written
        report = pipeline(Collection(col.name, col.store, settings, minilm)).ingest(DOCS)
        again = [t for body in server.requests[len(first) :] for t in asked_titles(body)]
    assert len(again) == len(DOCS) - done  # only what the cache lacks
    assert set(again) | set(first[:done]) == {d.title for d in DOCS}
    assert report.triples is not None and report.triples.cached == done
    assert col.count() == len(DOCS) and col.graph.stats().relations == 2


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        # the schema fitting drops the entry whose triples are not a list, so its passage is missing
        ('{"passages": [{"passage": "one", "triples": "none"}]}', "passage missing from the reply"),
        (Fail(500), "HTTP 500"),
    ],
)
def test_a_bad_reply_leaves_the_offline_entities_and_counts_why(
    tmp_path: Path, minilm: Embedder, answer: str | Fail, reason: str
) -> None:
    with FakeOpenAIServer(lambda body: answer) as server:
        col = open_collection("songs", settings_for(tmp_path, server, llm_triples_batch=3), embedder=minilm)
        report = pipeline(col).ingest(DOCS)
    assert report.triples is not None
    assert report.triples.failed == {reason: 6} and report.triples.extracted == 0
    assert col.count() == 6 and col.graph.stats().passages == 6 and col.graph.stats().relations == 0
    assert col.triple_cache.count() == 0  # a failure is asked again next time
    assert "green" in ranked_docs(col)  # the offline graph still answers


def test_no_llm_configured_keeps_the_offline_graph(tmp_path: Path, minilm: Embedder) -> None:
    settings = settings_for(tmp_path, None, llm_triples=True)
    report = IngestPipeline(open_collection("songs", settings, embedder=minilm)).ingest(DOCS)
    assert report.triples is None and report.written == 6
