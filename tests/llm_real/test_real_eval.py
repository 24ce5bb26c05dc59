"""``deepcite eval answers --llm``: the configured model's summaries scored with the same figures as the offline
writer's, side by side in one run, against the real llama.cpp server (SmolLM2) on a three-abstract PQA-L
folder written here (made-up abstracts in PubMedQA's format)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepcite.config import AnswerBudgetSettings, AnswerSettings, Settings
from deepcite.engine import Engine
from deepcite.evaluation.answerer import LLM, OFFLINE
from deepcite.evaluation.pubmedqa import load_pubmedqa, pubmedqa_collection
from deepcite.evaluation.pubmedqa_run import evaluate_pubmedqa
from llm_real.conftest import LlamaServer

pytestmark = pytest.mark.real_llm

PQAL = {
    "101": {
        "QUESTION": "Does daily walking lower blood pressure in older adults?",
        "CONTEXTS": [
            "Hypertension is common in adults over 65 and raises the risk of stroke.",
            "In 240 adults aged 65 to 80, thirty minutes of daily walking for 12 weeks lowered systolic blood "
            "pressure by 8 mmHg compared with usual activity.",
        ],
        "LONG_ANSWER": "Daily walking lowered systolic blood pressure in older adults.",
    },
    "102": {
        "QUESTION": "Is vitamin D supplementation linked to fewer fractures?",
        "CONTEXTS": [
            "Fractures in older women often follow falls.",
            "Among 1,200 women, vitamin D supplementation for two years did not reduce the rate of fractures.",
        ],
        "LONG_ANSWER": "Vitamin D supplementation did not reduce fractures.",
    },
    "103": {
        "QUESTION": "Does caffeine improve reaction time?",
        "CONTEXTS": ["In 60 students, 200 mg of caffeine shortened reaction time by 30 ms."],
        "LONG_ANSWER": "Caffeine shortened reaction time.",
    },
}


def test_the_models_summaries_are_scored_beside_the_offline_writers(
    tmp_path: Path, llama: LlamaServer, make_client
) -> None:
    folder = tmp_path / "pqal"
    folder.mkdir()
    (folder / "ori_pqal.json").write_text(json.dumps(PQAL), encoding="utf-8")
    (folder / "test_ground_truth.json").write_text(json.dumps({"101": "yes", "102": "no"}), encoding="utf-8")
    settings = Settings(
        data_dir=tmp_path / "data",
        llm=llama.settings(),
        answer=AnswerSettings(budget=AnswerBudgetSettings(tokens=1600, request_s=1800.0)),
    )
    items = load_pubmedqa(folder, "test")
    client = make_client()
    with Engine(settings, llm=client) as engine:  # the model's requests counted
        collection = pubmedqa_collection(folder, engine)
        figures = evaluate_pubmedqa(engine, collection, items, llm=True)
    offline, model = figures[OFFLINE], figures[LLM]
    assert model["model"] == llama.model and offline["questions"] == model["questions"] == 2
    figures_of_both = {
        "rougeL_f1",
        "rougeL_recall",
        "novel_f1",
        "words_mean",
        "invalid_ids",
        "unresolved_left",
        "repaired_share",
    }
    assert figures_of_both | {"offline_share", "unknown_share", "ask_ms_p50", "ask_ms_p95"} <= set(
        offline
    ) & set(model)
    assert (
        model["unresolved_left"] == 0
    )  # whatever ids the model invented, the check left none in the summary
    assert 0.0 <= model["repaired_share"] <= 1.0 and 0.0 <= model["rougeL_f1"] <= 1.0
    # the model was asked for both summaries; where its summary was mostly uncited, the guards shipped the offline
    # writer's, so no summary is left with nothing but the unknown phrase where the offline writer cites
    summaries = [c for c in client.calls if "quick summary" in c.messages[-1]["content"]]
    assert len(summaries) == 2
    assert 0.0 <= model["offline_share"] <= 1.0
    assert offline["unknown_share"] == 0.0  # the offline writer quotes the evidence of both questions
    assert model["unknown_share"] == 0.0
    # the model's column is asked as deepcite ask asks it: its own research (the plan asked of the model), then
    # its answer; who wrote each part is counted, every summary once, and no response breaks the guards' promises
    assert model["research"] == "its own (as deepcite ask)"
    written = model["written"]
    assert written["summary"]["llm"] + written["summary"]["offline"] == 2
    assert written["plan"]["llm"] + written["plan"]["offline"] == 2
    assert any("Question:" in c.messages[-1]["content"] and c.schema for c in client.calls)  # research's
    for row in written.values():
        assert sum(row["why"].values()) == row["offline"]
    assert model["repeated_heading_responses"] == 0 and model["mostly_unknown_responses"] == 0
