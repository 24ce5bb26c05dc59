"""Anchor text (retrieval/graph/anchors.py): a page is also found by the sentences other documents name it in,
on crafted fictional pages through a real Engine (Qdrant's engine in-process, the entity graph in SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import GraphSettings, Settings
from deepcite.engine import Engine
from deepcite.models import Document, Filters, SearchMode
from deepcite.research.agent import ResearchAgent
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.graph.aliases import AliasTable, alias_entries
from deepcite.retrieval.graph.anchors import anchor_texts, naming_sentence
from deepcite.service import SearchRequest

SONG = Document(
    id="velvet-harbor",
    title="Velvet Harbor",
    text="Velvet Harbor is a ballad released in 2011. It was written and sung by Mara Quell for Tidewater "
    "Records. The song reached the charts in three countries.",
)
SINGER = Document(
    id="mara-quell",
    title="Mara Quell",
    text="Mara Quell is a singer and songwriter. She was born in Port Elmo, a fishing town on the Ostland coast.",
)
OTHERS = [
    Document(
        id="juno-vell",
        title="Juno Vell",
        text="Juno Vell is a stage performer who was born in Dunmore. She toured with a choir.",
    ),
    Document(
        id="ash-teller",
        title="Ash Teller",
        text="Ash Teller is a street performer, born in Carrow, who sang in river towns.",
    ),
]
# pages of other things, so that a song's name is a rare word of the collection and of its anchor text, as in any
# real one: towns, and painters each born in one of them (whose sentences are the towns' anchor text)
TOWNS = ["Dunmore", "Carrow", "Port Elmo", "Brackwater", "Selby Cross", "Hollin", "Marrick", "Tarn Vale"]
OTHERS += [
    Document(
        id=f"town-{n}", title=f"{town} (town)", text=f"{town} is a town of {900 + 100 * n} people on a river."
    )
    for n, town in enumerate(TOWNS)
]
OTHERS += [
    Document(
        id=f"painter-{n}",
        title=f"Edda Rusk {n}",
        text=f"Edda Rusk {n} is a painter of landscapes. She was born in {town} and studied in the capital.",
    )
    for n, town in enumerate(TOWNS[3:])
]
QUESTION = "Where was the performer of Velvet Harbor born?"


def _engine(tmp_path: Path, weight: float, embedder: Embedder) -> Engine:
    settings = Settings(data_dir=tmp_path / f"data-{weight}")
    return Engine(
        settings.model_copy(update={"graph": GraphSettings(anchor_weight=weight)}), embedder=embedder
    )


def _search(
    engine: Engine, mode: SearchMode, filters: Filters | None = None, groups: list[str] | None = None
) -> list[str]:
    request = SearchRequest(query=QUESTION, collection="songs", mode=mode, k=2, filters=filters)
    return [hit.doc_id for hit in engine.search(request, groups).hits]


def test_the_sentence_naming_a_page_is_its_anchor_text() -> None:
    text = "Velvet Harbor is a ballad. It was sung by Mara Quell for Tidewater Records. It charted."
    assert naming_sentence(text, "mara quell") == "It was sung by Mara Quell for Tidewater Records."
    assert naming_sentence(text, "Juno Vell") is None


@pytest.mark.parametrize("mode", [SearchMode.BM25, SearchMode.HYBRID])
def test_the_second_hops_page_is_found_by_what_the_first_says_of_it(
    tmp_path: Path, mode: SearchMode, minilm: Embedder
) -> None:
    with _engine(tmp_path, 0.0, minilm) as plain:
        plain.ingest("songs", [SONG, SINGER, *OTHERS])
        assert "mara-quell" not in _search(plain, SearchMode.BM25)  # her page says "born", not the song
    with _engine(tmp_path, 1.0, minilm) as anchored:
        anchored.ingest("songs", [SONG, SINGER, *OTHERS])
        assert "mara-quell" in _search(anchored, mode)
        request = SearchRequest(query=QUESTION, collection="songs", mode=mode, k=2)
        [hit] = [h for h in anchored.search(request).hits if h.doc_id == "mara-quell"]
        assert hit.graph is not None and (hit.graph.entity, hit.graph.edge) == ("Velvet Harbor", "anchor")
        # the anchor text never reaches past the caller's filters
        others = Filters(doc_ids=["velvet-harbor", "juno-vell", "ash-teller"])
        assert "mara-quell" not in _search(anchored, mode, others)


def test_a_long_document_and_the_naming_document_itself_lend_no_anchor_text(
    tmp_path: Path, minilm: Embedder
) -> None:
    label = Document(
        id="tidewater",
        title="Tidewater Records",
        text="\n\n".join(
            f"Section {n}. " + "Tidewater Records signed folk singers from the coast. " * 40 for n in range(4)
        ),
    )
    with _engine(tmp_path, 1.0, minilm) as engine:
        engine.ingest("songs", [SONG, SINGER, label])
        collection = engine.corpus.collection("songs")
        rows = collection.graph.rows()
        assert rows.doc_ids.count("tidewater") > 3  # a long document, not a page
        table = AliasTable(alias_entries(rows), prefix_min_words=2, max_pages=3)
        read: list[str] = []

        def fetch(docs: list[str]) -> list:
            read.extend(docs)
            return list(collection.store.scroll("songs", Filters(doc_ids=docs)))

        texts = anchor_texts(rows, fetch, table, max_page_chunks=3, max_sentences=30, max_title_words=8)
        assert sorted(read) == ["mara-quell", "velvet-harbor"]  # only the pages named and those naming them
        pages = {doc for _, doc, _ in texts}
        assert "mara-quell" in pages and "tidewater" not in pages
        [singer] = [sentences for (_, doc, _), sentences in texts.items() if doc == "mara-quell"]
        assert singer == [("Velvet Harbor", "It was written and sung by Mara Quell for Tidewater Records.")]


def test_a_user_reads_no_anchor_text_lent_by_a_document_they_may_not_read(
    tmp_path: Path, minilm: Embedder
) -> None:
    restricted = SONG.model_copy(update={"acl": ["label-staff"]})  # the song's page: the label's staff only
    with _engine(tmp_path, 1.0, minilm) as engine:
        engine.ingest("songs", [restricted, SINGER, *OTHERS])
        # the singer's page is public, but what the restricted page says of her must not lift it for others
        assert "mara-quell" not in _search(engine, SearchMode.BM25, groups=["fans"])
        assert "mara-quell" in _search(engine, SearchMode.BM25, groups=["label-staff"])
        assert "mara-quell" in _search(engine, SearchMode.BM25)  # no ACL restriction: a trusted caller


class _Recording:
    """The collection as the research's retriever, recording whether each search asked for anchor text."""

    def __init__(self, collection: Collection) -> None:
        self.collection = collection
        self.rrf_k = collection.rrf_k
        self.asked: list[bool] = []

    def search(
        self, query: str, *, mode: SearchMode, k: int, filters: Filters | None = None, anchors: bool = True
    ):
        self.asked.append(anchors)
        return self.collection.search(query, mode=mode, k=k, filters=filters, anchors=anchors)

    def embed(self, texts: list[str]):
        return self.collection.embed(texts)


def test_the_research_reads_anchor_text_only_when_set_to(tmp_path: Path, minilm: Embedder) -> None:
    with _engine(tmp_path, 1.0, minilm) as engine:
        engine.ingest("songs", [SONG, SINGER, *OTHERS])
        collection = engine.corpus.collection("songs")
        plain = _Recording(collection)
        ResearchAgent(plain, collection.settings.research).process(QUESTION)
        assert plain.asked and not any(plain.asked)  # research.retrieval.anchor_text is off by default
        reading = _Recording(collection)
        ResearchAgent(reading, collection.settings.research.tuned(retrieval={"anchor_text": True})).process(
            QUESTION
        )
        assert reading.asked and all(reading.asked)
