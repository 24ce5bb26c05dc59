"""Sentence splitting on real abstract passages (hand-labelled PubMedQA excerpts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepcite.text import first_sentence, split_sentences

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "answer" / "sentences.json").read_text("utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_split_matches_the_hand_labelled_boundaries(case: dict) -> None:
    assert split_sentences(case["text"]) == case["sentences"]


def test_blank_text_has_no_sentences() -> None:
    assert split_sentences(" \n ") == []


def test_first_sentence_reads_a_prefix_and_agrees_with_the_whole_split() -> None:
    long_text = (
        "Patients with AF had a higher stroke rate vs. controls (HR 2.1, 95% CI 1.4-3.0). "
        + "Anticoagulation reduced it by 64%. " * 40
    )
    assert first_sentence(long_text, 120) == split_sentences(long_text)[0]
    one_long_sentence = "Risk rose with age " + "and with blood pressure " * 40 + "in every cohort."
    assert first_sentence(one_long_sentence, 50) == one_long_sentence  # no break in the window: whole text
    assert first_sentence("", 50) == ""
