"""Answer quality on HotpotQA (IRCoT's 500, every paragraph pooled): the share of summaries containing a gold answer
after the official normalisation, against the best-matching sentence (most question terms) of the top single-shot
hybrid passage; with an LLM, its summaries too.
"""

from __future__ import annotations

import json
import re
import statistics
import string
from collections import Counter
from pathlib import Path

from deepcite.engine import Engine
from deepcite.errors import InputError
from deepcite.evaluation.answer_figures import plain
from deepcite.evaluation.answerer import LLM, Answerer
from deepcite.evaluation.multihop import Progress, ingest_pool
from deepcite.models import SearchMode
from deepcite.service import SearchRequest
from deepcite.text import split_sentences, tokenize


def normalize_answer(text: str) -> str:
    """HotpotQA's official answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def contains_answer(text: str, answers: list[str]) -> bool:
    """Whether the normalised text holds any normalised gold answer as a whole-word span."""
    haystack = f" {normalize_answer(plain(text))} "
    return any(f" {normalize_answer(a)} " in haystack for a in answers if normalize_answer(a))


def load_hotpotqa(path: Path, limit: int | None = None) -> list[tuple[str, list[str]]]:
    """(question, gold answers) of IRCoT's HotpotQA file (``question_text``, ``answers_objects[].spans``)."""
    if not path.is_file():
        raise InputError(f"{path} is not a file; give IRCoT's HotpotQA JSON Lines file")
    out: list[tuple[str, list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            spans = [s for obj in record.get("answers_objects", []) for s in obj.get("spans", [])]
            out.append((record["question_text"], spans))
        if limit is not None and len(out) >= limit:
            break
    return out


def best_sentence(text: str, question: str) -> str:
    """The sentence of ``text`` holding the most of the question's terms (the first on ties)."""
    asked = set(tokenize(question))
    sentences = split_sentences(text) or [text]
    return max(sentences, key=lambda s: len(asked & set(tokenize(s))))


def evaluate_hotpotqa(
    engine: Engine,
    path: Path,
    *,
    limit: int | None = None,
    llm: bool = False,
    progress: Progress | None = None,
) -> dict[str, dict[str, float | int | str]]:
    """Answer containment of deepcite's summary (offline, and with ``llm`` the configured LLM's) vs the best
    sentence of the top single-shot passage; every paragraph is pooled into one collection."""
    questions = load_hotpotqa(path, limit)
    collection = ingest_pool(engine, path, "ircot")
    answerer = Answerer(engine, collection, llm=llm)
    found: Counter[str] = Counter()
    ms: dict[str, list[float]] = {name: [] for name in answerer.writers}
    baseline = 0
    for n, (question, answers) in enumerate(questions, start=1):
        _, written = answerer.ask(question)
        for name, (answered, took, _own) in written.items():
            ms[name].append(took)
            found[name] += contains_answer(answered.summary, answers)
        top = engine.search(
            SearchRequest(query=question, collection=collection, mode=SearchMode.HYBRID, k=1)
        ).hits
        baseline += bool(top) and contains_answer(best_sentence(top[0].text, question), answers)
        if progress:
            progress(n, len(questions))
    total = max(1, len(questions))
    out: dict[str, dict[str, float | int | str]] = {
        name: {
            "contains_answer": round(found[name] / total, 4),
            "ask_ms_p50": round(statistics.median(ms[name]), 1) if ms[name] else 0.0,
            "questions": len(questions),
        }
        for name in answerer.writers
    }
    out["single_shot_best_sentence"] = {
        "contains_answer": round(baseline / total, 4),
        "questions": len(questions),
    }
    answerer.close()
    if llm:
        out[LLM]["model"] = engine.settings.llm.model
    return out
