"""Answer quality on PubMedQA PQA-L: summaries against the authors' conclusions.

PubMedQA (``ori_pqal.json`` + ``test_ground_truth.json``): every abstract is ingested without its
conclusion (the loader reads ``CONTEXTS`` only); each question is researched and answered offline, and the
quick summary is scored against ``LONG_ANSWER``. The 500 PMIDs outside ``test_ground_truth.json`` are the
``train`` split (tune there), the 500 inside it the ``test`` split (report there). Figures per system:

- ``rougeL_f1``, ``rougeL_recall``: ROUGE-L (``rouge-score``, Porter stemming) of the text, citations removed;
- ``novel_f1``: token F1 after removing stop words and every word of the question from both sides (so
  restating the question earns nothing);
- ``findings_share``: summary sentences citing a results/conclusions section
  (:func:`deepcite.answer.findings.role_of_section`), ``other_study_only_share``: sentences citing only
  other studies than the question's own; ``invalid_ids`` (cited ids no passage has, removed by the citation
  check) and ``unresolved_left`` (such ids left in the summary: the check's misses); ``ask_ms_p50``, ``ask_ms_p95``: research plus
  answer.

Baselines in the same run: the first two sentences of the question's own abstract (``own_abstract_lead_2``, the
lead-2 baseline), its first two and last two (``own_abstract_2+2``) and the first three sentences of the top
BM25 hit (``bm25_top_hit_3``).

With an LLM (``llm``), every question is also asked of the Engine as configured with its LLM
(``deepcite_llm_summary``, the model named in ``model``), as ``deepcite ask`` runs it: research with the LLM's
plan, coverage grades and next hops, then the LLM's answer, all under one time budget
(``answer.budget.request_s``), through the citation check (support check included). With ``same_context`` the
LLM writes from the offline research's context instead, so the two writers are compared on the same evidence.
``written`` counts, per part (plan, coverage grade, next hop, next sub-question, HyDE passage, sub-answer,
summary, long answer, citation judge), how often the LLM's text was shipped and why the offline path wrote it
otherwise; ``repeated_heading_responses`` counts responses whose summary or long answer has a heading twice and
``mostly_unknown_responses`` those with more than half their sentences "Unknown …" where the offline writer's
summary cites. Two more figures say what the check did: ``repaired_share``, the factual sentences
replaced by "Unknown based on provided sources." (uncited, or citing a passage that does not support them),
``offline_share``, the questions whose summary the offline writer wrote because the LLM failed or ran
out of time, and ``unknown_share``, the summaries left with nothing but "Unknown based on provided sources."
(or the insufficient-evidence answer): the questions a writer abstained on, by itself or through the check.
"""

from __future__ import annotations

from deepcite.answer.findings import SentenceRole, role_of_section
from deepcite.engine import Engine
from deepcite.evaluation.answer_scores import SystemScores, note_response, score_summary
from deepcite.evaluation.answerer import LLM, OFFLINE, Answerer
from deepcite.evaluation.multihop import Progress
from deepcite.evaluation.pubmedqa import PubMedQAItem
from deepcite.models import SearchMode
from deepcite.service import SearchRequest
from deepcite.text import split_sentences


def first_last(contexts: list[str], first: int, last: int) -> str:
    """The first ``first`` and last ``last`` sentences of an abstract's sections: the lead baselines."""
    sentences = [s for c in contexts for s in split_sentences(c)]
    if len(sentences) <= first + last:
        return " ".join(sentences)
    return " ".join(sentences[:first] + (sentences[-last:] if last else []))


def evaluate_pubmedqa(
    engine: Engine,
    collection: str,
    items: list[PubMedQAItem],
    *,
    llm: bool = False,
    same_context: bool = False,
    progress: Progress | None = None,
) -> dict[str, dict[str, object]]:
    """deepcite's quick summary (offline, and with ``llm`` the configured LLM's) and the two baselines on
    ``items`` (figures in the module docstring)."""
    answerer = Answerer(engine, collection, llm=llm, same_context=same_context)
    systems = {name: SystemScores() for name in answerer.writers}
    systems |= {
        "own_abstract_lead_2": SystemScores(),
        "own_abstract_2+2": SystemScores(),
        "bm25_top_hit_3": SystemScores(),
    }
    for n, item in enumerate(items, start=1):
        _, answers = answerer.ask(item.question)
        offline = answers[OFFLINE][0]
        for name, (answered, ms, own) in answers.items():
            score_summary(systems[name], item, answered, own, ms)
            if name != OFFLINE:
                note_response(systems[name], answered, offline)
        lead = systems["own_abstract_lead_2"]
        lead.add_text(first_last(item.contexts, 2, 0), item.long_answer, item.question)
        own = systems["own_abstract_2+2"]
        own.add_text(first_last(item.contexts, 2, 2), item.long_answer, item.question)
        top = engine.search(
            SearchRequest(query=item.question, collection=collection, mode=SearchMode.BM25, k=1)
        ).hits
        bm25 = systems["bm25_top_hit_3"]
        bm25.add_text(
            " ".join(split_sentences(top[0].text)[:3]) if top else "", item.long_answer, item.question
        )
        if top:
            bm25.sentences += 1
            bm25.findings += role_of_section(top[0].section) is SentenceRole.FINDING
            bm25.other_only += top[0].pmid != item.pmid
        if progress:
            progress(n, len(items))
    out: dict[str, dict[str, object]] = {
        name: {**scores.summary(), "questions": len(items)} for name, scores in systems.items()
    }
    answerer.close()
    if llm:
        out[LLM]["model"] = engine.settings.llm.model
        out[LLM]["research"] = "offline research's context" if same_context else "its own (as deepcite ask)"
        out[LLM]["written"] = systems[LLM].written_summary()
    return out
