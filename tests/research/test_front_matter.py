"""A question about the source itself ("Who wrote the report?") is answered by the document's first passage, a
byline that shares no word with the question: the research places each leading document's first passage inside
the answer's context (research.selection.front_matter_docs, front_matter_place), through the real agent over a
real Markdown report."""

from __future__ import annotations

import pytest

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.research.agent import ResearchAgent
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder

pytestmark = pytest.mark.slow

FISH = "pike perch trout eel carp roach bream tench chub dace rudd minnow".split()
TOPICS = [f"{fish} of the {side} shore" for side in ("north", "south", "east") for fish in FISH]


def _report() -> str:
    """A lake survey whose byline opens it, then sections that speak of the report and who wrote its parts."""
    sections = [
        "# Lake Vessen Survey\n\nPrepared by Jane Doe, Lakeside Institute, March 2024.\n\n"
        "Lake Vessen lies in a glacial valley; its basin holds cold, clear water all year.\n"
    ]
    for i, fish in enumerate(TOPICS):
        sections.append(
            f"## Section {i + 1}: {fish}\n\n"
            + " ".join(
                f"The report counts {fish} in reach {r} and wrote down the water's depth, colour and warmth there; "
                f"the field team wrote each count of {fish} in the report's log before noon."
                for r in range(3)
            )
            + "\n"
        )
    return "\n".join(sections)


@pytest.fixture(scope="module")
def report_collection(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    folder = tmp_path_factory.mktemp("front-matter")
    (folder / "lake-survey.md").write_text(_report(), "utf-8")
    collection = open_collection(
        "front-matter", Settings(data_dir=tmp_path_factory.mktemp("front-matter-data")), embedder=minilm
    )
    IngestPipeline(collection).ingest(folder)
    return collection


def _context(collection: Collection, docs: int) -> list[tuple[int, list[str]]]:
    settings = collection.settings.research.tuned(selection={"front_matter_docs": docs})
    pack = ResearchAgent(collection, settings).process("Who wrote the report?").pack
    return [(c.chunk.position, [p.kind for p in c.provenance]) for c in pack.final_evidence[:12]]


def test_the_first_passage_joins_the_context_of_a_question_about_the_source(
    report_collection: Collection,
) -> None:
    shipped = _context(report_collection, Settings().research.selection.front_matter_docs)
    assert (0, ["front_matter"]) in shipped[: Settings().research.selection.front_matter_place]
    assert 0 not in [position for position, _ in _context(report_collection, 0)]  # search alone misses it
