"""Intake: normalisation, truncation, must-preserve terms."""

from __future__ import annotations

import pytest

from deepcite.errors import InputError
from deepcite.research.intake import extract_must_preserve_terms, intake, normalize_question


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_a_clear_error(question: str) -> None:
    with pytest.raises(InputError, match="question is empty"):
        normalize_question(question, 2000)


def test_long_question_is_truncated_with_a_warning() -> None:
    question = ("statins " * 2500).strip() + "?"  # 20,000 characters
    text, warnings = normalize_question(question, 2000)
    assert len(text) <= 2000
    assert text.startswith("statins statins")
    assert len(warnings) == 1 and "20000 characters" in warnings[0] and "max_question_chars" in warnings[0]


def test_whitespace_is_collapsed() -> None:
    assert normalize_question("  what   is\nSVT? ", 2000) == ("what is SVT?", [])


def test_quoted_phrase_identifiers_and_drugs_are_kept() -> None:
    terms, exact = extract_must_preserve_terms(
        'Does "atrial flutter" respond to evolocumab like SVT, per PMID 12345678 and BRCA1 or IL-6 data?'
    )
    assert exact is True
    for term in ["atrial flutter", "evolocumab", "SVT", "PMID 12345678", "BRCA1", "IL-6"]:
        assert term in terms


def test_plain_question_has_no_constraints() -> None:
    taken = intake("how do statins lower cholesterol", max_chars=2000)
    assert taken.must_preserve_terms == [] and taken.must_match_exactly is False
    assert taken.filters is None
