"""The final pack's order weighs the rounds' selected passages the trim to ``max_total_docs`` left out
(research.selection.order_pool): a chain's last passage, selected rounds in at a low pack score, is ordered by its
links to the chain's first passage instead of being cut behind the first round's tail."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from deepcite.config import ResearchSettings, SearchSettings
from deepcite.models import Candidate, SearchHit
from deepcite.research.nodes import finalize_evidence_pack
from research.helpers import adapters, chunk, new_state

QUESTION = "Where does the Ostra River start in the state where the Kraus Lodge stands?"
WORDS = ["ostra", "river", "start", "state", "kraus", "lodge", "varnia", "cake", "flour", "oven", "sugar"]


class WordVectors:
    """A stand-in retriever that embeds a text as its counts of a few words (no search, no entity graph)."""

    rrf_k = SearchSettings().rrf_k

    def search(self, *args: object, **kwargs: object) -> list[SearchHit]:
        raise AssertionError("the pack's order must not search")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            words = re.findall(r"[a-z]+", text.lower())
            row = np.array([words.count(w) for w in WORDS], dtype=float) + 0.01
            rows.append((row / np.linalg.norm(row)).tolist())
        return rows


def _passage(cid: str, title: str, text: str, score: float, round_no: int) -> Candidate:
    return Candidate(chunk=chunk(cid, text, title=title), score=score, first_round=round_no)


def _pack(order_pool: int) -> list[str]:
    state, planner = new_state(QUESTION)
    lodge = _passage("lodge", "Kraus Lodge", "The Kraus Lodge is a house in Varnia.", 0.5, 1)
    cakes = [
        _passage(f"cake{i}", f"Cake {i}", "Cake takes flour, sugar and an oven.", 0.3 - 0.05 * i, 1)
        for i in range(3)
    ]
    source = _passage("varnia", "Varnia", "The Ostra River starts in Varnia, a state.", 0.01, 3)
    for cand in (lodge, *cakes, source):
        state.evidence[cand.key] = cand
    # the first round's tail: passages past its selection, scored above the late hop's passage
    state.tail = [
        _passage(f"tail{i}", f"Oven {i}", "An oven bakes cake.", 0.1 - 0.01 * i, 1) for i in range(2)
    ]
    settings = ResearchSettings().tuned(selection={"max_total_docs": 4, "order_pool": order_pool})
    pack = finalize_evidence_pack(state, adapters(planner, WordVectors(), settings))  # type: ignore[arg-type]
    return [c.chunk.title for c in pack.final_evidence]


def test_a_late_hops_passage_the_trim_left_out_is_ordered_by_its_links() -> None:
    """Trimmed to four by pack score, the river's page (selected in round 3) is cut behind the first round's
    tail; with an order pool of six it is weighed too (the tail is not: only what a round selected comes in past
    the trim), its title link to the lodge's page and its words lift it into the pack, and the pack keeps four."""
    assert ResearchSettings().selection.order_pool == 40  # shipped on
    trimmed = _pack(0)
    assert "Varnia" not in trimmed and len(trimmed) == 4
    ordered = _pack(6)
    assert "Varnia" in ordered and len(ordered) == 4
    assert not any(t.startswith("Oven") for t in ordered)
