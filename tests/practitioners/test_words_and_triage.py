"""Words read as words, who the care is for and urgency that fits (issue 48), on the shipped catalogue."""

from __future__ import annotations

import pytest

from deepcite.config import PractitionerSettings
from deepcite.practitioners.catalogue import Catalogue, match_intents, named_specialties
from deepcite.practitioners.offline import (
    Conversation,
    find_population,
    offline_insights,
    past_reading,
    stated_age,
)
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
    # a pregnancy outranks a child's cue in the same turn: the baby here is the unborn one
    assert find_population(conversation("I'm pregnant and the baby is breech"), CATALOGUE) == "pregnancy"
    assert find_population(conversation("I'm pregnant", "my baby has a rash"), CATALOGUE) == "child"


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
        (("my 14 year old son has been cutting himself",), "crisis"),  # told by a parent
        # a faint is an emergency when it is happening now, not a feeling or a past event
        (("I sometimes feel like I'm passing out when I stand up too fast",), "routine"),
        (("I passed out last week at work",), "routine"),
        (("my mother passed out a few minutes ago",), "emergency"),
    ],
)
def test_urgency_fits_what_is_happening_now(turns: tuple[str, ...], level: str) -> None:
    assert offline_insights(conversation(*turns), CATALOGUE, SETTINGS, []).urgency == level


def test_lay_mood_words_reach_prescribers_and_talk_therapists() -> None:
    found = [m.intent.id for m in match_intents("so anxious lately and I can't stop worrying", CATALOGUE)]
    assert {"psychiatry", "talk_therapy"} <= set(found)
    found = [m.intent.id for m in match_intents("I still have nightmares and flashbacks", CATALOGUE)]
    assert {"psychiatry", "talk_therapy"} <= set(found)


def test_grief_is_talk_therapy_not_hospice() -> None:
    found = [m.intent.id for m in match_intents("someone to talk to since my husband died", CATALOGUE)]
    assert found[0] == "talk_therapy"
    assert "hospice_palliative" not in found


def test_a_pregnancy_need_points_to_obstetrics_or_midwives() -> None:
    first = [
        m.intent.id
        for m in match_intents("I'm pregnant and the baby is breech, maybe a c-section", CATALOGUE)
    ]
    assert first[0] == "obstetric_care"
    assert CATALOGUE.by_id["obstetric_care"].specialties == ["OBSTETRICS/GYNECOLOGY"]
    first = [m.intent.id for m in match_intents("I want a natural birth with a midwife", CATALOGUE)]
    assert first[0] == "midwifery"
    assert CATALOGUE.by_id["midwifery"].specialties == ["CERTIFIED NURSE MIDWIFE (CNM)"]
    first = [m.intent.id for m in match_intents("just found out I'm pregnant", CATALOGUE)]
    assert first[0] == "pregnancy"  # both care for an ordinary pregnancy


def test_a_past_procedure_asks_for_its_aftercare_not_the_surgeon() -> None:
    past = past_reading(SETTINGS)

    def read(text: str) -> list[tuple[str, float, bool]]:
        return [(m.intent.id, m.score, m.triggers[0].past) for m in match_intents(text, CATALOGUE, 1, past)]

    had = read("I had a knee replacement last month and still can't bend it")
    assert [(i, p) for i, _, p in had] == [("physical_therapy", True), ("orthopedic", True)]
    assert had[1][1] == pytest.approx(3.0 * SETTINGS.analysis.past_trigger_factor)
    assert read("exercises to get stronger after my back surgery")[0][0] == "physical_therapy"
    assert read("I need a knee replacement") == [("orthopedic", 3.0, False)]
    # a diagnosis named as past gives way to what is asked now
    assert read("help with my diet after a heart attack")[0][0] == "nutrition"
    # "have had", "has had" are still going on
    assert read("I've had headaches most afternoons for a few months")[0] == ("neurology", 2.5, False)
    assert read("my toddler has had a cough and runny nose")[0][2] is False
    # the surgeon is no specialty the patient asked for by name
    text = "rehab and physical therapy after hip replacement"
    named = named_specialties(text, CATALOGUE, ["specialty", "procedure"], 1, past)
    assert "PHYSICAL THERAPIST IN PRIVATE PRACTICE" in named and "ORTHOPEDIC SURGERY" not in named
    assert "ORTHOPEDIC SURGERY" in named_specialties(text, CATALOGUE, ["specialty", "procedure"], 1)
