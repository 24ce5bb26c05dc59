"""Words read as words, who the care is for and urgency that fits (issue 48), on the shipped catalogue."""

from __future__ import annotations

import pytest

from deepcite.config import PractitionerSettings
from deepcite.practitioners.catalogue import Catalogue, match_intents
from deepcite.practitioners.offline import Conversation, find_population, offline_insights, stated_age
from deepcite.practitioners.replies import clean_query
from deepcite.practitioners.words import written_words

CATALOGUE = Catalogue.load()
SETTINGS = PractitionerSettings()


def conversation(*turns: str) -> Conversation:
    return Conversation(turns[-1], [("user", t) for t in turns[:-1]])


def test_contractions_and_possessives_stay_whole() -> None:
    assert written_words("I can\u2019t sleep, it's my daughter's knee") == [
        "i", "can't", "sleep", "it's", "my", "daughter's", "knee"
    ]  # fmt: skip
    reading = CATALOGUE.reading
    assert reading.meaning("can't sleep") == ["cannot", "sleep"]
    assert reading.meaning("my daughter's knee hurts") == ["my", "daughter", "knee", "pain"]
    # the cleaned request reads as written: no stray "t" or "s"
    assert clean_query(CATALOGUE, "I can't sleep") == "can't sleep"
    assert (
        clean_query(CATALOGUE, "my knee hurts\nactually, it's for my daughter")
        == "knee hurts actually daughter"
    )


def test_running_is_not_run_down() -> None:
    found = [m.intent.id for m in match_intents("my knee hurts after running", CATALOGUE)]
    assert "primary_care" not in found  # "run down" keeps its "down"
    assert {"orthopedic", "sports_medicine"} <= set(found)
    assert "primary_care" in [m.intent.id for m in match_intents("I feel run down", CATALOGUE)]


@pytest.mark.parametrize(
    ("text", "age"),
    [("my 4 year old's ears", 4), ("she's 88", 88), ("he is 6 months old", 0), ("a man in his 80s", 80),
     ("I'm 7 months pregnant", None), ("two years ago", None)],
)  # fmt: skip
def test_stated_ages(text: str, age: int | None) -> None:
    assert stated_age(text) == age


def test_who_the_care_is_for_follows_the_latest_turn() -> None:
    assert find_population(conversation("my knee hurts after running"), CATALOGUE) is None
    assert (
        find_population(conversation("my knee hurts", "actually, it's for my daughter"), CATALOGUE) == "child"
    )
    assert find_population(conversation("for my son", "sorry, my grandmother, she's 88"), CATALOGUE) == (
        "older adult"
    )
    assert find_population(conversation("I'm 82 and can't hear the TV"), CATALOGUE) == "older adult"
    assert find_population(conversation("back pain", "I'm 7 months pregnant"), CATALOGUE) == "pregnancy"
    # a new mother speaks of herself: the baby is no patient here
    assert find_population(conversation("feeling low since my baby was born"), CATALOGUE) == "pregnancy"


@pytest.mark.parametrize(
    ("turns", "level"),
    [
        (("crushing chest pain right now",), "emergency"),
        (("need a checkup for my heart after a heart attack",), "routine"),
        (("I think I'm having a heart attack",), "emergency"),
        (("my face is drooping and my speech is slurred",), "emergency"),
        (("my wife's arm has been weak since her stroke two years ago",), "routine"),
        (("chest pain when I climb stairs",), "routine"),
        (("my dad has chest pain", "it started ten minutes ago and he's sweating"), "emergency"),
        (("I keep thinking about killing myself",), "crisis"),
        (("I keep thinking about my weight",), "routine"),
        (("I tried to kill myself last year",), "crisis"),  # a crisis cue is never read as past
    ],
)
def test_urgency_fits_what_is_happening_now(turns: tuple[str, ...], level: str) -> None:
    assert offline_insights(conversation(*turns), CATALOGUE, SETTINGS, []).urgency == level
