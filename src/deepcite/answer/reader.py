"""The sentence reader: a cross-encoder that reads the question and a sentence together and scores whether the
sentence states the answer.

The writer's other signals compare the question and a sentence apart (shared words, MiniLM's cosine); a question in
a reader's own words shares few words with the sentence that answers it. The reader is all-MiniLM-L6-v2 fine-tuned
as a cross-encoder on the dev sets' opening candidates, labelled by whether each states the answer phrase
(``benchmarks/sentence_reader.py``; docs/benchmarks/answer-decision.md, thirty-first and thirty-second sessions). Its word embeddings
are MiniLM's own, loaded from the packaged embedding model; the layers it trained ship with deepcite
(``data/reader/sentence_reader.safetensors``, half precision). It re-reads only the opening model's best candidates
(``answer.reader``, :class:`~deepcite.config.answer.AnswerReaderSettings`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from cachetools import LRUCache

from deepcite.retrieval.embedders import resolve_model_path

WEIGHTS = "data/reader/sentence_reader.safetensors"  # the trained layers, beside the base model's own


def weights_path() -> Path:
    """The shipped file of the reader's trained layers."""
    return Path(str(resources.files("deepcite").joinpath(WEIGHTS)))


class SentenceReader:
    """Scores (question, sentence) pairs: the probability that the sentence states the answer. Scores go through a
    bounded cache, so the parts of one request read each sentence once."""

    def __init__(
        self, base_model: str, max_tokens: int, cache_size: int, weights: Path | None = None
    ) -> None:
        self._tokenizer, self._model = load_reader(
            resolve_model_path(base_model), str(weights or weights_path())
        )
        self._max_tokens = max_tokens
        self._cache: LRUCache[tuple[str, str], float] = LRUCache(maxsize=cache_size)
        self._lock = threading.Lock()

    def read(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """Each text's probability of stating the answer to ``question``, in order."""
        import torch

        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if (question, t) not in self._cache))
            if missing:
                encoded = self._tokenizer(
                    [question] * len(missing),
                    missing,
                    truncation="only_second",
                    max_length=self._max_tokens,
                    padding=True,
                    return_tensors="pt",
                )
                with torch.inference_mode():
                    logits = self._model(**encoded).logits.squeeze(-1).float().numpy()
                for text, p in zip(missing, 1.0 / (1.0 + np.exp(-logits)), strict=True):
                    self._cache[(question, text)] = float(p)
            return np.array([self._cache[(question, t)] for t in texts], dtype=np.float64)


@lru_cache(maxsize=2)
def load_reader(base: str, weights: str) -> tuple[Any, Any]:
    """The tokenizer and the reader's model: the base model's weights with the trained layers of ``weights`` over
    them. Loaded once per process."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_config(AutoConfig.from_pretrained(base, num_labels=1))
    state = {f"bert.{k}": v for k, v in load_file(str(Path(base) / "model.safetensors")).items()}
    state.update({k: v.to(torch.float32) for k, v in load_file(weights).items()})
    missing, _ = model.load_state_dict(state, strict=False)
    if missing:
        raise RuntimeError(f"the sentence reader's weights do not fit its base model: {missing}")
    return AutoTokenizer.from_pretrained(base), model.eval()
