"""Heuristic aspect extraction and sub-questions."""

from __future__ import annotations

import pytest

from deepcite.config import ResearchSettings
from deepcite.models import AspectType
from deepcite.research.aspects import comparison_sides, heuristic_aspects, keywords_of, subquestion_for
from deepcite.research.entities import content_words

S = ResearchSettings()


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("statins vs PCSK9 inhibitors", ("statins", "PCSK9 inhibitors")),
        ("Compare statins and PCSK9 inhibitors", ("statins", "PCSK9 inhibitors")),
        ("What are the differences between apixaban and warfarin?", ("apixaban", "warfarin")),
        ("Who is older, Annie Morton or Terry Richardson?", ("Annie Morton", "Terry Richardson")),
        ("Were Scott Derrickson and Ed Wood of the same nationality?", ("Scott Derrickson", "Ed Wood")),
    ],
)
def test_comparisons_yield_both_sides_and_the_comparison(question: str, sides: tuple[str, str]) -> None:
    assert comparison_sides(question) == sides
    aspects = heuristic_aspects(question, S)
    kinds = [a.aspect_type for a in aspects]
    assert kinds.count(AspectType.COMPARISON) == 1 and kinds.count(AspectType.DEFINITION) == 2
    assert [a.aspect for a in aspects if a.aspect_type is AspectType.DEFINITION] == list(sides)
    assert all(a.importance >= S.coverage.core_importance for a in aspects)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What is supraventricular tachycardia?", AspectType.DEFINITION),
        ("How does metformin lower glucose?", AspectType.PROCESS),
        ("Why do statins cause muscle pain?", AspectType.CAUSAL),
        ("advantages and disadvantages of robotic surgery", AspectType.EVALUATION),
        ("examples of CRISPR applications in agriculture", AspectType.APPLICATION),
    ],
)
def test_question_forms_map_to_aspect_types(question: str, kind: AspectType) -> None:
    main = heuristic_aspects(question, S)[0]
    assert main.aspect_type is kind
    assert main.importance == S.planning.main_aspect_importance


def test_definition_aspect_is_the_defined_term() -> None:
    assert (
        heuristic_aspects("What is supraventricular tachycardia?", S)[0].aspect
        == "supraventricular tachycardia"
    )


def test_multi_part_question_is_split() -> None:
    aspects = heuristic_aspects("What is atrial fibrillation and how is it treated?", S)
    assert [a.aspect_type for a in aspects] == [AspectType.DEFINITION, AspectType.PROCESS]


def test_secondary_aspect_has_lower_importance() -> None:
    aspects = heuristic_aspects("How does dialysis work and what are its risks?", S)
    assert aspects[0].aspect_type is AspectType.PROCESS
    assert any(a.aspect_type is AspectType.EVALUATION for a in aspects)


def test_keywords_drop_stop_words_and_repeats() -> None:
    assert keywords_of("What is the role of the the liver in LDL clearance?") == [
        "role",
        "liver",
        "ldl",
        "clearance",
    ]


def test_keywords_and_content_words_fold_accents_as_the_index_does() -> None:
    # before, "Hernández" gave the query words "hern" and "ndez", which no indexed term ("hernandez") matches
    assert keywords_of("the party Sergio Tolento Hernández belongs to") == [
        "party",
        "sergio",
        "tolento",
        "hernandez",
        "belongs",
    ]
    assert content_words("Luisa María Calderón") == {"luisa", "maria", "calderon"}
    assert content_words("Māori") == content_words("Maori")


def test_subquestion_for_definition() -> None:
    aspect = heuristic_aspects("statins vs PCSK9 inhibitors", S)[2]
    assert subquestion_for(aspect) == "What are PCSK9 inhibitors?"


def test_later_part_pronoun_resolves_to_the_first_part_topic() -> None:
    from deepcite.config import ResearchSettings
    from deepcite.research.aspects import heuristic_aspects, question_topic

    assert question_topic("Does atrial fibrillation increase the risk of stroke") == "atrial fibrillation"
    aspects = heuristic_aspects(
        "Does atrial fibrillation increase the risk of stroke, and how is it treated?", ResearchSettings()
    )
    assert [a.aspect for a in aspects][-1] == "how is atrial fibrillation treated"
    assert "fibrillation" in aspects[-1].keywords


@pytest.mark.parametrize(
    ("question", "last_part"),
    [
        (
            "How many people took part in the lab study, and what were they paid?",
            "people paid",
        ),
        (
            "How many Upworkers completed the usability study, and what were they paid?",
            "Upworkers paid",
        ),
    ],
)
def test_a_how_many_part_s_topic_is_its_noun_not_its_amount_word_or_verb(
    question: str, last_part: str
) -> None:
    from deepcite.config import ResearchSettings

    assert [a.aspect for a in heuristic_aspects(question, ResearchSettings())][-1] == last_part
