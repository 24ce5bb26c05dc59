"""Names to pages (retrieval/graph/aliases.py): the aliases read from a page, the page a mention names, and the
alias table the graph keeps, on crafted fictional pages (tests/fixtures/graph/alias_pages.jsonl)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from deepcite.config import EvidenceRankingSettings, GraphSettings
from deepcite.models import Candidate, Chunk
from deepcite.research.linking import rank_evidence
from deepcite.retrieval.graph.aliases import AliasTable, alias_entries, page_aliases
from deepcite.retrieval.graph.ppr import GraphWalker
from deepcite.retrieval.graph.store import EntityGraph

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "graph" / "alias_pages.jsonl"


def _chunks() -> list[Chunk]:
    rows = [json.loads(line) for line in PAGES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Chunk(chunk_id=r["id"], doc_id=r["id"], title=r["title"], text=r["text"]) for r in rows]


def _page(doc: str) -> Chunk:
    return next(c for c in _chunks() if c.doc_id == doc)


def _aliases(doc: str) -> list[str]:
    page = _page(doc)
    return list(page_aliases(page.title, page.text, max_words=6, lead_chars=300))


def test_a_page_is_known_by_its_title_head_lead_name_and_the_names_beside_it() -> None:
    assert _aliases("marlow-ridge") == ["marlow ridge ostland", "marlow ridge"]
    assert _aliases("velder-song") == ["velder"]  # the qualifier dropped, the quoted lead name the same
    assert "idris oswin calloway" in _aliases("calloway")  # "(born Idris Oswin Calloway)"
    orchestra = _aliases("quarry-orchestra")
    assert orchestra[0] == "quarry street orchestra"
    assert {"qso", "sallow players"} <= set(orchestra)  # the acronym and the "also known as" name


def test_a_one_word_lead_name_that_is_no_acronym_is_not_an_alias() -> None:
    aliases = page_aliases("Hollin Vray", "Vray was born in a mill town.", max_words=6, lead_chars=300)
    assert list(aliases) == ["hollin vray"]


def test_a_mention_names_the_page_whose_alias_it_opens_with() -> None:
    table = AliasTable(
        [("marlow ridge ostland", "c1", "marlow-ridge"), ("marlow ridge", "c1", "marlow-ridge")],
        prefix_min_words=2,
        max_pages=3,
    )
    [page] = table.pages("Marlow Ridge High School")  # the longer form of the page's head
    assert (page.doc_id, page.alias) == ("marlow-ridge", "marlow ridge")
    assert [p.doc_id for p in table.pages("Marlow Ridge")] == ["marlow-ridge"]
    assert table.pages("Marlow") == []  # a shorter name than every alias names no page
    strict = AliasTable([("marlow ridge", "c1", "marlow-ridge")], prefix_min_words=3, max_pages=3)
    assert strict.pages("Marlow Ridge High School") == []


def test_an_alias_shared_by_too_many_pages_names_none() -> None:
    entries = [("velder", f"c{i}", f"d{i}") for i in range(4)]
    assert AliasTable(entries, prefix_min_words=2, max_pages=3).pages("Velder") == []
    assert len(AliasTable(entries, prefix_min_words=2, max_pages=4).pages("Velder")) == 4


@pytest.fixture
def graph(tmp_path: Path) -> EntityGraph:
    graph = EntityGraph(tmp_path / "g.sqlite", GraphSettings())
    graph.add(_chunks())
    return graph


def test_the_graph_keeps_each_pages_aliases_as_its_title_mentions(graph: EntityGraph) -> None:
    table = AliasTable(alias_entries(graph.rows()), prefix_min_words=2, max_pages=3)
    assert [p.doc_id for p in table.pages("Idris Oswin Calloway")] == ["calloway"]
    assert [p.doc_id for p in table.pages("the Sallow Players")] == ["quarry-orchestra"]
    assert [p.doc_id for p in table.pages("Velder")] == ["velder-song"]
    # a name that is a page of its own names that page, not the shorter page its name opens with
    assert [p.doc_id for p in table.pages("Marlow Ridge High School")] == ["marlow-ridge-hs"]
    assert [p.doc_id for p in table.pages("Marlow Ridge Rowing Club")] == ["marlow-ridge"]


def test_a_graph_without_aliases_keeps_titles_only(tmp_path: Path) -> None:
    graph = EntityGraph(tmp_path / "g.sqlite", GraphSettings(aliases=False))
    graph.add(_chunks())
    table = AliasTable(alias_entries(graph.rows()), prefix_min_words=2, max_pages=3)
    assert table.pages("Idris Oswin Calloway") == []
    assert [p.doc_id for p in table.pages("Marlow Ridge")] == ["marlow-ridge"]  # the title's head


def test_the_walk_reaches_a_town_page_from_a_school_named_after_the_town(tmp_path: Path) -> None:
    chunks = [
        Chunk(
            chunk_id="pupil",
            doc_id="pupil",
            title="Orrin Tasker",
            text="Orrin Tasker is a Veranian cartographer. He was a pupil at Brackwater Vale Grammar School.",
        ),
        Chunk(
            chunk_id="town",
            doc_id="town",
            title="Brackwater Vale, Ostland",
            text="Brackwater Vale is a village on the Ostland plain with a slate quarry.",
        ),
        Chunk(chunk_id="other", doc_id="other", title="Slate", text="Slate is a fine-grained rock."),
    ]
    scores = {}
    for weight in (0.0, 1.0):
        graph = EntityGraph(tmp_path / f"g{weight}.sqlite", GraphSettings(prefix_weight=weight))
        graph.add(chunks)
        walk = GraphWalker(graph).walk("Where did Orrin Tasker go to school?")
        scores[weight] = {p.chunk_id: p.score for p in walk.passages}
    assert scores[0.0].get("town", 0.0) == 0.0  # no edge joins the school's name and the town's page
    assert scores[1.0]["town"] > 0.0


def test_the_pack_links_a_passage_to_the_page_its_name_is_a_longer_form_of() -> None:
    pack = [
        Candidate(chunk=_page("calloway")),
        Candidate(chunk=_page("quarry-orchestra")),
        Candidate(chunk=_page("velder-song")),
        Candidate(chunk=_page("marlow-ridge")),
    ]
    question = "On which river is the town of the school where Idris Calloway studied?"
    question_vector = np.array([1.0, 0.0], dtype=np.float32)
    vectors = np.array([[0.9, 0.44], [0.6, 0.8], [0.6, 0.8], [0.5, 0.87]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    settings = EvidenceRankingSettings()
    ranked = rank_evidence(question, question_vector, pack, vectors, settings)
    assert [c.chunk.doc_id for c in ranked][:2] == ["calloway", "marlow-ridge"]
    link = ranked[1].link
    assert link is not None and link.entity == "marlow ridge" and link.via == "Idris Calloway"
    off = rank_evidence(
        question, question_vector, pack, vectors, settings.model_copy(update={"alias_link_weight": 0.0})
    )
    assert [c.chunk.doc_id for c in off][-1] == "marlow-ridge"


def test_the_places_of_a_life_note_are_not_aliases() -> None:
    text = (
        "Hollis Bernard Varn (born March 12, 1909, Port Edley, Marrow County, died October 8, 1973, Lake "
        "Sorrel) was a clockmaker."
    )
    aliases = page_aliases("Hollis B. Varn", text, max_words=6, lead_chars=300)
    assert "hollis bernard varn" in aliases  # the lead name
    assert not {"port edley", "marrow county", "lake sorrel"} & set(aliases)
    named = page_aliases(
        "Cal Dorne",
        "Cal Dorne (born Calvin Ames Dorne; May 9, 1914) was a singer.",
        max_words=6,
        lead_chars=300,
    )
    assert "calvin ames dorne" in named  # a birth name before the dates still is one
