"""The first reading weighs a passage by the question's names it mentions (research.bridge.unnamed_weight): the
first hop's answer stands on the page of a name the question gives, not on a better-ranked page about something
else that only shares the question's relation words."""

from __future__ import annotations

from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate, Chunk
from deepcite.research.bridge import read_bridge

QUESTION = "In which city was the composer of the Velmora Suite born?"


def _passage(doc: str, title: str, text: str) -> Candidate:
    return Candidate(chunk=Chunk(chunk_id=doc, doc_id=doc, title=title, text=text))


# ranked first by the search: a composer's page, with the question's relation words, that never names the suite
OTHER = _passage(
    "brisk", "Harlan Brisk", "Harlan Brisk taught music for many years. He was a composer of songs in Tessin."
)
# second: the page of the work the question names, which states its composer
SUITE = _passage(
    "suite", "Velmora Suite", "The Velmora Suite is an orchestral work in four movements by Odo Renwick."
)


def _best(unnamed_weight: float, topic: tuple[str, ...] = ("Velmora Suite",)) -> str:
    settings = BridgeSettings(unnamed_weight=unnamed_weight)
    return read_bridge(QUESTION, [OTHER, SUITE], topic=topic, settings=settings)[0].name


def test_a_passage_naming_none_of_the_questions_names_reads_weaker() -> None:
    assert _best(1.0) == "Tessin"  # off: the first-ranked page's names win
    assert _best(0.6) == "Odo Renwick"  # the suite's own page states the first hop's answer


def test_no_name_or_no_passage_naming_one_leaves_the_reading_as_it_was() -> None:
    assert _best(0.6, topic=()) == _best(1.0, topic=())
    assert _best(0.6, topic=("Quenby Hall",)) == _best(1.0)
