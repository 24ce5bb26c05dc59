"""A question's place noun that the lexicon puts at several levels, read at its lowest (``lowest_level``, issue 49):
"the state where" wants a state of a federation, and a country's page, which the lexicon also calls a state ("a
sovereign state"), no longer fits it when its page calls it a republic or a country. Fictional pages."""

from __future__ import annotations

from deepcite.research.answer_types import page_type, type_fit, wanted_types

QUESTION = "Which river rises in the state where the Harlow Tavern is located?"
COUNTRY = page_type("Nordland", "Nordland is a federal republic of twelve states in the north.", 10)
STATE = page_type("Carrowa", "Carrowa is a state of Nordland in the east.", 10)


def test_a_state_wanted_is_a_federations_state_at_the_lowest_level() -> None:
    every = wanted_types(QUESTION)
    lowest = wanted_types(QUESTION, lowest_level=True)
    assert type_fit([COUNTRY], every) == 1  # "state" names a country too
    assert type_fit([STATE], every) == 1
    assert type_fit([COUNTRY], lowest) == -1
    assert type_fit([STATE], lowest) == 1


def test_a_noun_of_one_level_wants_the_same_either_way() -> None:
    question = "Which river flows through the country where the Harlow Tavern is located?"
    assert wanted_types(question) == wanted_types(question, lowest_level=True)
