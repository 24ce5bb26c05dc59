"""Bridge entities from evidence: names in text, and the follow-ups a passage gives."""

from __future__ import annotations

from deepcite.config import FollowupSettings
from deepcite.models import Candidate
from deepcite.names import names_in
from deepcite.research.followup_terms import followup_terms
from research.helpers import chunk

FILM = (
    "Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer. It was written "
    "by F. Hugh Herbert and Howard Dimsdale. It was released on July 13, 1945 by Roger O. Egeberg."
)


def test_names_stop_at_sentence_ends_and_keep_initials() -> None:
    names = names_in(FILM)
    assert "Shirley Temple" in names and "Howard Dimsdale" in names and "Roger O. Egeberg" in names
    assert "F. Hugh Herbert" in names
    assert not any(n.startswith(("It", "July")) for n in names)


def test_quoted_phrases_are_names() -> None:
    assert names_in('the song "Oh My God" was released')[0] == "Oh My God"


def test_bridge_entities_skip_what_the_question_names() -> None:
    cand = Candidate(chunk=chunk("k", FILM, title="Kiss and Tell (1945 film)"))
    question = "What position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"
    entities = followup_terms(cand, question, per_passage=6, settings=FollowupSettings()).terms
    assert "Shirley Temple" in entities
    assert "Corliss Archer" not in entities  # the question already names her
    assert entities[0] == "Kiss and Tell (1945 film)"  # the title adds "1945 film" beyond the question


def test_bridge_entities_exclude_those_already_followed() -> None:
    cand = Candidate(chunk=chunk("k", FILM, title="Kiss and Tell"))
    entities = followup_terms(
        cand, "who?", exclude=["Shirley Temple"], per_passage=10, settings=FollowupSettings()
    ).terms
    assert "Shirley Temple" not in entities and "Howard Dimsdale" in entities
