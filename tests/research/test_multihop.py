"""Multi-hop evaluation: question files, gold ids, recall scoring, and the CLI end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from deepcite.errors import InputError
from deepcite.evaluation.multihop import MultihopQuestion, RunScores, holds_bridge, load_questions
from deepcite.ingest.loaders import paragraph_id

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "research"
IRCOT = FIXTURES / "multihop_ircot.jsonl"
HOTPOT = FIXTURES / "multihop_hotpot.json"


def test_ircot_questions_carry_the_ingest_ids_of_their_supporting_paragraphs() -> None:
    questions = load_questions(IRCOT, "ircot").questions
    assert [q.qid for q in questions] == ["q1", "q2"]
    assert len(questions[0].gold) == 2
    assert (
        paragraph_id(
            "Mara Ellison", "Mara Ellison (born 1970) is a Canadian actress known for stage work in Toronto."
        )
        in questions[1].gold
    )


def test_hotpot_layout_gives_the_same_gold_as_ircot() -> None:
    hotpot = load_questions(HOTPOT, "hotpot").questions
    assert hotpot[0].gold == load_questions(IRCOT, "ircot").questions[1].gold


def test_limit_and_bad_format_and_missing_file() -> None:
    assert len(load_questions(IRCOT, "ircot", limit=1).questions) == 1
    with pytest.raises(InputError, match="ircot, musique, hotpot, 2wiki"):
        load_questions(IRCOT, "squad")
    with pytest.raises(InputError, match="no usable question.*no supporting paragraphs"):
        load_questions(IRCOT, "musique")
    with pytest.raises(InputError, match="not a file"):
        load_questions(FIXTURES / "missing.jsonl", "ircot")


def _musique(qid: str, supporting: bool | None) -> dict[str, object]:
    paragraph: dict[str, object] = {
        "idx": 0,
        "title": "Green",
        "paragraph_text": "Green is an album by Mara.",
    }
    if supporting is not None:
        paragraph["is_supporting"] = supporting
    return {"id": qid, "question": "Who performed Green?", "paragraphs": [paragraph]}


def test_odd_shapes_are_read_or_skipped_with_a_count(tmp_path: Path) -> None:
    """JSON Lines under a .json suffix, a JSON list, items without supporting labels, a broken line and a
    non-question value: the usable questions are read, the rest skipped and counted, the layout detected."""
    records = [_musique("a", True), _musique("b", None), _musique("c", False), _musique("d", True)]
    lines = tmp_path / "lines.json"
    lines.write_text("\n".join([*(json.dumps(r) for r in records), "{not json", "[1, 2]"]) + "\n")
    read = load_questions(lines)
    assert read.format == "musique"
    assert [q.qid for q in read.questions] == ["a", "d"] and read.skipped == 4
    assert any("no supporting paragraphs" in r for r in read.reasons)
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(records))
    read = load_questions(listed)
    assert [q.qid for q in read.questions] == ["a", "d"] and read.skipped == 2
    corpus = tmp_path / "corpus.json"  # a HippoRAG corpus file ({title: sentences}) holds no questions
    corpus.write_text(json.dumps({"Green": ["Green is an album."]}))
    with pytest.raises(InputError, match="no usable question in corpus.json"):
        load_questions(corpus)


def test_recall_scoring() -> None:
    scores = RunScores()
    scores.add(["a", "x", "x", "y", "z", "b"], {"a", "b"}, hops=3, seconds=0.5)  # b is 5th once deduped
    scores.add(["x"] * 3, {"a", "b"}, hops=1, seconds=0.1)
    out = scores.summary()
    assert out["recall@5"] == 0.5 and out["recall@10"] == 0.5 and out["all_recall@10"] == 0.5
    assert out["hops_mean"] == 2.0 and out["seconds_per_question"] == 0.3 and out["seconds_median"] == 0.3
    assert "by_hops" not in out and "beam_held_bridge" not in out  # no hop counts, no beam


def test_figures_per_hop_count_and_the_beams_held_bridge() -> None:
    assert MultihopQuestion("3hop1__9_2_5", "q", {"a"}).hop_count == 3
    assert MultihopQuestion("5a8b57f25542995d1e6f1371", "q", {"a"}).hop_count is None
    scores = RunScores()
    scores.add(["a", "b"], {"a", "b"}, hops=3, seconds=0.1, hop_count=2, beam_held=True, beam_read=True)
    scores.add(["a"], {"a", "b"}, hops=3, seconds=0.1, hop_count=3, beam_held=False, beam_read=True)
    scores.add(["x"], {"a", "b"}, hops=3, seconds=0.1, hop_count=3, beam_held=None, beam_read=False)
    out = scores.summary()
    # the share held is over the questions with a bridge page (the third has none)
    assert (
        out["beam_read"] == round(2 / 3, 4)
        and out["beam_held_bridge"] == 0.5
        and out["bridge_questions"] == 2
    )
    assert out["by_hops"]["2"] == {
        "questions": 1,
        "recall@5": 1.0,
        "all_recall@10": 1.0,
        "beam_held_bridge": 1.0,
        "bridge_questions": 1,
    }
    assert out["by_hops"]["3"]["recall@5"] == 0.25 and out["by_hops"]["3"]["beam_held_bridge"] == 0.0


def test_a_bridge_is_a_supporting_page_the_question_does_not_name() -> None:
    question = "Who is the spouse of the performer of Green?"
    gold = {"Green (song)", "Hask & Omo"}
    assert holds_bridge(["Hask & Omo"], gold, question)
    assert not holds_bridge(["Green"], gold, question)  # the question's own page is no bridge
    assert holds_bridge(["Green"], {"Green (song)"}, question) is None  # no bridge page to hold
    assert holds_bridge(
        ["West Chicago High School"],
        {"West Chicago, Illinois", "Harris W. Fawell"},
        "Where was Harris W. Fawell born?",
    )


@pytest.mark.slow
def test_eval_multihop_cli_writes_a_row_per_system(tmp_path: Path) -> None:
    out = tmp_path / "multihop.json"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "multihop",
            "--data",
            str(IRCOT),
            "--format",
            "ircot",
            "--data-dir",
            str(tmp_path / "data"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert figures.pop("skipped_records") == 0
    # the single-shot baseline and two settings profiles
    assert set(figures) == {"single_shot", "default", "before_graph"}
    for row in figures.values():
        assert {"recall@5", "recall@10", "all_recall@10", "hops_mean", "seconds_per_question"} <= set(row)
        assert row["questions"] == 2
    assert figures["default"]["all_recall@10"] == 1.0
    assert figures["before_graph"]["hops_mean"] >= 3


@pytest.mark.slow
def test_research_cli_prints_the_pack_as_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    monkeypatch.setenv("DEEPCITE_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    ingest = runner.invoke(app, ["ingest", str(FIXTURES / "corpus.jsonl"), "--collection", "fx", "--json"])
    assert ingest.exit_code == 0, ingest.output
    result = runner.invoke(
        app,
        [
            "research",
            "Compare statins and PCSK9 inhibitors",
            "--collection",
            "fx",
            "--json",
            "--max-hops",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["hops"] == 3 and data["pack"]["final_evidence"]
    assert data["coverage"]["total_aspects"] == 3
    missing = runner.invoke(app, ["research", "statins", "--collection", "nope"])
    assert missing.exit_code == 2 and "known collections" in missing.output and "fx" in missing.output
