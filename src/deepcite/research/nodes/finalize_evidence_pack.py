"""finalize_evidence_pack: the evidence of every round, ranked and capped, as the answer stage's input."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np

from deepcite.models import BridgeCandidate, Candidate, EvidencePack
from deepcite.research.front_matter import with_front_matter
from deepcite.research.likelihood import hop_lift, hop_questions
from deepcite.research.linking import rank_evidence
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.nodes.select_evidence import page_named
from deepcite.research.state import BeamEntry, ExecutorState, best_first
from deepcite.research.vectors import candidate_vectors, text_vectors
from deepcite.retrieval.graph.extract import entity_key


def bridge_names(state: ExecutorState, adapters: Adapters, frequency: Mapping[str, int]) -> dict[str, int]:
    """The bridge candidates the beam read, each with the number of the collection's passages that mention it
    (``frequency``; 0 when the collection keeps no entity graph): the pack's order links the passages that
    share one (:func:`~deepcite.research.linking.rank_evidence`)."""
    if not state.beam_read or not adapters.settings.ranking.bridge_link_weight:
        return {}
    return {e.name: frequency.get(entity_key(e.name), 0) for e in state.beam_read}


def hop_answers(state: ExecutorState) -> dict[str, int]:
    """Each beam hop's answer as the research found it: of the candidates read at a depth, the one whose evidence
    scored best (its support; the first read on ties, none when no candidate's evidence scored), with its depth."""
    best: dict[int, BeamEntry] = {}
    for entry in state.beam_read:
        if entry.support > 0 and (entry.depth not in best or entry.support > best[entry.depth].support):
            best[entry.depth] = entry
    return {entry.name: depth for depth, entry in best.items()}


def pack_order(state: ExecutorState, adapters: Adapters, tail: bool = False) -> list[Candidate]:
    """Accumulated evidence by best score (at most ``per_document_cap`` per document), with ``tail`` the first
    round's passages past its selection too (``selection.first_round_tail``), trimmed to ``max_total_docs``,
    then (``ranking.enabled``) re-ordered by :func:`rank_evidence`. With ``tail`` (the final pack) the order also
    weighs the rounds' selected passages the trim left out, up to ``selection.order_pool`` passages in all
    (:func:`_cut`), and keeps its first ``max_total_docs``; with ``ranking.hop_likelihood_weight`` that order's
    first passages are then re-weighed by how likely each hop's own question is after them
    (:func:`hop_likelihood_lift`), and the pool ordered again.

    A passage's score is its best selection score over the rounds, so the rounds' order interleaves them:
    every sub-question's best passage comes before any second-best (earlier rounds first on ties). The final
    order weighs that order with each passage's relevance to the whole question and its links to the others,
    among them the bridge candidates the beam read (:func:`bridge_names`), and the passages an LLM choosing
    next hops said state a fact the answer needs.
    """
    settings = adapters.settings
    ranked = state.best_evidence()
    if tail and state.tail:
        extra = [c for c in state.tail if c.key not in state.evidence]
        ranked = best_first([*ranked, *extra])
    final = _cut(state, ranked, adapters, tail and settings.ranking.enabled)
    read_in = llm_read_rounds(state)
    if settings.ranking.enabled and len(final) > 1:
        question_vector = text_vectors(adapters.retriever, [state.plan.question], state.vectors)[0]
        vectors = candidate_vectors(adapters.retriever, final, state.vectors)
        # the collection's mention counts, read once: the bridge and the hub links both weigh by them
        frequency = adapters.titles.frequency(adapters.retriever)
        order = partial(
            rank_evidence,
            state.plan.question,
            question_vector,
            final,
            vectors,
            settings.ranking,
            bridge_names(state, adapters, frequency),
            frequency,
            frozenset(read_in),
            hop_answers(state) if settings.ranking.hop_weight else None,
        )
        pool, final = final, order()
        lift = hop_likelihood_lift(state, adapters, pool, final) if tail else None
        if lift is not None:
            final = order(lift)
    final = first_answer_page_placed(state, final, adapters)[: settings.selection.max_total_docs]
    return [
        cand.model_copy(update={"llm_read_rounds": read_in[cand.key]}) if cand.key in read_in else cand
        for cand in final
    ]


def hop_likelihood_lift(
    state: ExecutorState, adapters: Adapters, pool: Sequence[Candidate], ranked: Sequence[Candidate]
) -> np.ndarray | None:
    """Per passage of ``pool``, ``ranking.hop_likelihood_weight`` x its hop questions' likelihood
    (:func:`~deepcite.research.likelihood.hop_lift` over ``ranked``'s first ``hop_likelihood_passages``; the
    passages below take the lowest); None when it is off, no scorer was built, or the question does not decompose.
    The hops' slots hold the beam's answers (:func:`hop_answers`)."""
    ranking = adapters.settings.ranking
    if ranking.hop_likelihood == "off" or not ranking.hop_likelihood_weight:
        return None
    asked = hop_questions(state.plan.question, hop_answers(state), max_hops=ranking.hop_likelihood_max_hops)
    top = list(ranked[: ranking.hop_likelihood_passages])
    # the scorer is asked for (and the LM loaded) only for a question that decomposes
    if not asked or len(top) < 2 or adapters.likelihood is None:
        return None
    scores = np.array([adapters.likelihood.score((c.chunk.title, c.chunk.text), asked) for c in top]).T
    lifted = dict(zip((c.key for c in top), hop_lift(scores), strict=True))
    lowest = min(lifted.values())
    return ranking.hop_likelihood_weight * np.array([lifted.get(c.key, lowest) for c in pool])


def _cut(state: ExecutorState, ranked: list[Candidate], adapters: Adapters, extend: bool) -> list[Candidate]:
    """The passages the pack's order weighs: ``ranked`` (best first) at most ``per_document_cap`` per document, the
    first ``max_total_docs`` of them and, with ``extend``, after those the passages a round selected (the first
    round's tail not) up to ``order_pool`` in all. The trim is by pack score, which halves a hop's passages every
    two rounds (``round_decay``) and takes a beam loser's down (``bridge.loser_decay``): the passage that answers a
    chain's last hop, selected three or four rounds in, fell behind the first round's tail; the order's links to
    the chain's earlier passages, not its score, are what can lift it."""
    selection = adapters.settings.selection
    size = max(selection.max_total_docs, selection.order_pool) if extend else selection.max_total_docs
    per_doc: dict[str, int] = {}
    final: list[Candidate] = []
    for cand in ranked:
        if per_doc.get(cand.chunk.doc_id, 0) >= selection.per_document_cap:
            continue
        if len(final) >= selection.max_total_docs and cand.key not in state.evidence:
            continue  # past the pack's size only what a round selected
        per_doc[cand.chunk.doc_id] = per_doc.get(cand.chunk.doc_id, 0) + 1
        final.append(cand)
        if len(final) >= size:
            break
    return final


def first_answer_page_placed(
    state: ExecutorState, final: list[Candidate], adapters: Adapters
) -> list[Candidate]:
    """``final`` with the best passage of the page of the first hop's best answer (the beam's best candidate read
    after round 1, :func:`~deepcite.research.nodes.select_evidence.page_named`) moved up to place
    ``ranking.first_answer_page_within`` when it ranks below it (0: off); the passages between move down one."""
    ranking = adapters.settings.ranking
    within = ranking.first_answer_page_within
    best = next((e for e in state.beam_read if e.depth == 1), None)
    if not within or best is None:
        return final
    at = next(
        (
            i
            for i, cand in enumerate(final)
            if page_named(cand.chunk.title, best.name, ranking.alias_prefix_min_words)
        ),
        None,
    )
    if at is None or at < within:
        return final
    return [*final[: within - 1], final[at], *final[within - 1 : at], *final[at + 1 :]]


def llm_read_rounds(state: ExecutorState) -> dict[tuple[str, str], list[int]]:
    """Per passage an LLM choosing next hops said states a fact the answer needs, the rounds after which it
    said so (first first)."""
    rounds: dict[tuple[str, str], list[int]] = {}
    for choice in state.hop_choices:
        for key in choice.picked:  # distinct: the reply's passage numbers are (research/llm_adapters.py)
            rounds.setdefault(key, []).append(choice.round)
    return rounds


@node(
    reads=(
        "plan",
        "evidence",
        "coverage",
        "reports",
        "errors",
        "warnings",
        "subquery_evidence",
        "stop_reason",
        "skip_reason",
        "chain",
        "vectors",
        "beam_read",
        "hop_choices",
        "tail",
    ),
    writes=("vectors",),
)
def finalize_evidence_pack(state: ExecutorState, adapters: Adapters) -> EvidencePack:
    """The pack: the evidence and the first round's tail in :func:`pack_order` (with the leading documents' first
    passages for a question about the source: :func:`~deepcite.research.front_matter.with_front_matter`), the
    coverage, the round reports, the chain and the bridge candidates the beam held."""
    final, warning = with_front_matter(state, adapters, pack_order(state, adapters, tail=True))
    reason = state.stop_reason
    if not final:
        reason = f"no evidence found: {state.skip_reason or 'no passage matched any query of any round'}"
    return EvidencePack(
        question=state.plan.question,
        final_evidence=final,
        coverage=state.coverage,
        retrieval_report=state.reports,
        errors=list(state.errors),
        subquery_evidence=state.subquery_evidence,
        warnings=[*state.warnings, *([warning] if warning else [])],
        stop_reason=reason,
        chain=[step.model_copy() for step in state.chain],
        bridges=[
            BridgeCandidate(
                name=e.name, depth=e.depth, score=e.score, followed_round=e.followed_round, support=e.support
            )
            for e in state.beam_read
        ],
    )
