"""Sentence splitting on real abstract passages (hand-labelled PubMedQA excerpts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepcite.text import split_sentences

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "answer" / "sentences.json").read_text("utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_split_matches_the_hand_labelled_boundaries(case: dict) -> None:
    assert split_sentences(case["text"]) == case["sentences"]


def test_blank_text_has_no_sentences() -> None:
    assert split_sentences(" \n ") == []
