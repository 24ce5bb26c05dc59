"""The one BM25 tokenizer (deepcite.text.tokenize): what it makes of text beyond plain ASCII."""

from __future__ import annotations

import pytest

from deepcite.text import folded, tokenize


@pytest.mark.parametrize(
    ("text", "same_terms_as"),
    [
        ("Résumés de requêtes OLAP", "resumes de requetes OLAP"),  # accents folded, not split off
        ("the Māori name", "the Maori name"),
        # letters NFKD leaves whole: before, "Đức" gave "uc" and "Łódź" gave "odz"
        ("Châu Đức, Łódź, Ørsted, Straße, Æsir", "Chau Duc, Lodz, Orsted, Strasse, AEsir"),
        ("We used λ = 1.1", "We used lambda = 1.1"),  # a Greek letter is its name
        ("𝛾 and Σ", "gamma and sigma"),  # a mathematical italic one, and a capital
    ],
)
def test_the_tokenizer_folds_accents_and_spells_greek_letters(text: str, same_terms_as: str) -> None:
    assert tokenize(text) == tokenize(same_terms_as)
    assert folded("plain ASCII text") == "plain ASCII text"
