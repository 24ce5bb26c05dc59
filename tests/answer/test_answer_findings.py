"""Findings first: the extractive writer on crafted contexts (aims, methods, other studies, question shapes)."""

from __future__ import annotations

import re

from answer.conftest import HashingEmbedder
from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.findings import SentenceRole, finding_score, role_of_section
from deepcite.answer.prompts import UNKNOWN
from deepcite.config import AnswerSettings, ResearchSettings
from deepcite.research.aspects import heuristic_aspects

STATIN_Q = "Does statin therapy reduce mortality after ischaemic stroke?"


def chunk(i: int, text: str, *, pmid: str = "111", section: str | None = None) -> ContextChunk:
    return ContextChunk(
        id=i,
        chunk_id=f"c{i}",
        doc_id=f"{pmid}-{i}",
        pmid=pmid,
        section=section,
        text=text,
        score=1.0 - i / 100,
    )


def context(question: str, chunks: list[ContextChunk]) -> ResponseContext:
    return ResponseContext(
        request_id="r",
        query=question,
        selected_chunks=chunks,
        aspects=heuristic_aspects(question, ResearchSettings()),
    )


def summary(question: str, chunks: list[ContextChunk], **sections: dict[str, float]) -> str:
    return ExtractiveGenerator(HashingEmbedder(), AnswerSettings().tuned(**sections)).summary(
        context(question, chunks)
    )


def cited(text: str) -> list[int]:
    return [int(i) for i in re.findall(r"\[(\d+)\]", text)]


def test_a_finding_is_chosen_over_an_aim_and_a_method_sentence() -> None:
    chunks = [
        chunk(
            1,
            "To determine whether statin therapy reduces mortality after ischaemic stroke.",
            section="OBJECTIVE",
        ),
        chunk(
            2,
            "Patients with ischaemic stroke were randomised to statin therapy or placebo and followed for mortality.",
            section="METHODS",
        ),
        chunk(
            3,
            "Statin therapy reduced mortality after ischaemic stroke by 25% (HR 0.75, 95% CI 0.61-0.92).",
            section="RESULTS",
        ),
    ]
    text = summary(STATIN_Q, chunks)
    assert text.startswith("Yes: Statin therapy reduced mortality after ischaemic stroke by 25%")
    assert "To determine" not in text and "were randomised" not in text


def test_without_section_labels_the_sentence_itself_says_it_is_a_finding() -> None:
    chunks = [
        chunk(
            1,
            "The aim of this study was to assess whether statin therapy reduces mortality after ischaemic stroke. "
            "Mortality after ischaemic stroke was significantly lower with statin therapy (8% vs 12%, p=0.01).",
        )
    ]
    assert summary(STATIN_Q, chunks).startswith(
        "Yes: Mortality after ischaemic stroke was significantly lower"
    )


def test_no_padding_from_a_study_about_something_else() -> None:
    chunks = [
        chunk(
            1,
            "Statin therapy reduced mortality after ischaemic stroke (HR 0.75). "
            "The benefit was seen in patients older than 75 years.",
            section="RESULTS",
        ),
        chunk(
            2,
            "Statin therapy raised liver enzymes in 3% of patients after stroke (p=0.02).",
            pmid="222",
            section="RESULTS",
        ),
    ]
    text = summary(STATIN_Q, chunks)
    assert set(cited(text)) == {1}
    assert "liver" not in text
    padded = summary(
        STATIN_Q,
        chunks,
        extractive={"other_study_ratio": 0.0, "continue_ratio": 0.0},
        length={"extractive_yes_no_summary_sentences": 3},
    )
    assert 2 in cited(padded)  # the setting is what keeps it out


def test_yes_no_question_opens_with_the_deciding_finding() -> None:
    chunks = [
        chunk(
            1,
            "Whether statin therapy reduces mortality after ischaemic stroke remains unknown.",
            section="BACKGROUND",
        ),
        chunk(
            2,
            "Mortality after ischaemic stroke was lower with statin therapy than with placebo (12% vs 18%, p=0.01).",
            section="RESULTS",
        ),
    ]
    text = summary(STATIN_Q, chunks)
    assert cited(text)[0] == 2 and text.startswith("Yes: Mortality after ischaemic stroke was lower")


def test_a_glued_aim_label_is_read_as_an_aim_and_not_quoted() -> None:
    chunks = [
        chunk(
            1,
            "Stroke mortality is high.AIM: To test whether statin therapy reduces mortality after ischaemic stroke. "
            "Statin therapy was associated with lower mortality after ischaemic stroke (OR 0.7).",
        )
    ]
    text = summary(STATIN_Q, chunks)
    assert text.startswith("Yes: Statin therapy was associated with lower mortality") and "AIM" not in text


def test_multi_part_question_answers_one_part_at_a_time_in_order() -> None:
    question = "Does atrial fibrillation increase the risk of stroke, and how is it treated?"
    chunks = [
        chunk(
            1,
            "Anticoagulation with warfarin is how atrial fibrillation is treated to prevent stroke.",
            pmid="2",
        ),
        chunk(
            2,
            "Atrial fibrillation increased the risk of stroke fivefold (RR 5.0).",
            pmid="1",
            section="RESULTS",
        ),
    ]
    text = summary(question, chunks)
    assert cited(text) == [2, 1]


def test_a_part_without_evidence_is_unknown() -> None:
    question = "Does atrial fibrillation increase the risk of stroke, and how is it treated?"
    chunks = [
        chunk(1, "Atrial fibrillation increased the risk of stroke fivefold (RR 5.0).", section="RESULTS")
    ]
    text = ExtractiveGenerator(
        HashingEmbedder(), AnswerSettings().tuned(extractive={"support_threshold": 0.5})
    ).summary(context(question, chunks))
    assert text.startswith(
        "Yes: Atrial fibrillation increased the risk of stroke fivefold [1]."
    )  # the ratio is elided
    assert text.endswith(UNKNOWN)


def test_comparison_leads_with_the_contrast_then_a_finding_per_side() -> None:
    question = "compare warfarin and apixaban"
    chunks = [
        chunk(
            1,
            "Apixaban and warfarin were compared: apixaban caused less bleeding than warfarin (p<0.01).",
            pmid="3",
        ),
        chunk(2, "Warfarin reduced stroke by 64% in atrial fibrillation.", pmid="1", section="RESULTS"),
        chunk(3, "Apixaban reduced stroke by 21% in atrial fibrillation.", pmid="2", section="RESULTS"),
    ]
    text = summary(question, chunks)
    assert cited(text) == [1, 2, 3]  # the contrast states the comparison: it leads, then each side


def test_section_labels_map_to_roles() -> None:
    assert role_of_section("RESULTS") is SentenceRole.FINDING
    assert role_of_section("METHODS AND RESULTS") is SentenceRole.FINDING
    assert role_of_section("BACKGROUND AND PURPOSE") is SentenceRole.AIM
    assert role_of_section("PATIENTS AND METHODS") is SentenceRole.METHOD
    assert role_of_section("INTRODUCTION") is SentenceRole.BACKGROUND
    assert role_of_section(None) is SentenceRole.UNKNOWN


def test_finding_score_orders_finding_method_aim() -> None:
    s = AnswerSettings()
    finding = finding_score("Mortality was significantly lower with statins (p=0.01).", None, s)
    method = finding_score("Patients were randomised to statins or placebo.", None, s)
    aim = finding_score("To determine whether statins lower mortality.", None, s)
    assert finding > method > aim
