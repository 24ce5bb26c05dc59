"""The offline generator: answers composed of the evidence's own sentences, each with its citation.

Usage::

    gen = ExtractiveGenerator(embedder, settings.answer)
    text = gen.summary(ctx)          # "Atrial fibrillation raises stroke risk fivefold [1]. …"

A sentence's support for a target (the query, an aspect with its keywords, a sub-question) is
``(lexical_weight * lexical + embedding_weight * cosine) / (lexical_weight + embedding_weight)``, where
``lexical`` is the share of the target's stemmed terms (:func:`deepcite.text.tokenize`) the sentence
contains and ``cosine`` the embedding similarity (negative taken as 0; only the
``max_embedded_sentences`` most lexically similar sentences are embedded). Sentences are taken best first
while their support clears ``support_threshold``; one whose cosine to an already chosen sentence reaches
``redundancy_threshold`` is skipped. When nothing clears the threshold the answer is "Unknown based on
provided sources." Ties break on citation id then sentence position, so output is deterministic.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from deepcite.answer.citations import CITATION_RE
from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.generators import require_any, require_selected, section_titles, subquery_chunks
from deepcite.answer.prompts import UNKNOWN
from deepcite.config import AnswerSettings
from deepcite.models import QueryAspect
from deepcite.retrieval.embedder import Embedder
from deepcite.text import split_sentences, tokenize


@dataclass(frozen=True)
class _Sentence:
    text: str
    cite: int  # display id of its chunk
    position: int  # order within the evidence, for deterministic ties
    terms: frozenset[str]


@dataclass(frozen=True)
class _Scores:
    sentences: list[_Sentence]
    vectors: np.ndarray  # (sentences, dim)
    support: np.ndarray  # (sentences, targets)


class ExtractiveGenerator:
    """Deterministic, offline :class:`deepcite.answer.generators.Generator` (see the module docstring)."""

    def __init__(self, embedder: Embedder, settings: AnswerSettings) -> None:
        self._embedder = embedder
        self._settings = settings
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    def summary(self, ctx: ResponseContext) -> str:
        """Up to ``summary_max_sentences`` sentences supporting the query or any of its aspects."""
        require_selected(ctx)
        scores = self._score([ctx.query, *(_aspect_target(a) for a in ctx.aspects)], ctx.selected_chunks)
        support = scores.support.max(axis=1)
        return _write(scores, self._pick(scores, support, self._settings.summary_max_sentences))

    def long_answer(self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None) -> str:
        """One ``## section`` per aspect; each sentence goes to the section it supports best, used once.

        Sections first take the sentences that support them more than any other section, then fill up
        from sentences no section has used yet. Without aspects or sub-questions: one untitled section.
        """
        require_selected(ctx)
        limit = self._settings.long_answer_sentences_per_aspect
        titles = section_titles(ctx, aspects)
        by_title = {a.aspect: a for a in (ctx.aspects if aspects is None else aspects)}
        targets = [_aspect_target(by_title[t]) if t in by_title else t for t in titles] or [ctx.query]
        scores = self._score(targets, ctx.selected_chunks)
        home = scores.support.argmax(axis=1)  # the section each sentence supports best
        rows = range(len(scores.sentences))
        picked: list[list[int]] = []
        used: list[int] = []
        for j in range(len(targets)):  # pass 1: each section's own sentences
            picked.append(
                self._pick(scores, scores.support[:, j], limit, [i for i in rows if home[i] == j], used)
            )
            used.extend(picked[j])
        for j in range(len(targets)):  # pass 2: fill up from what no section used
            spare = [i for i in rows if i not in used]
            more = self._pick(scores, scores.support[:, j], limit - len(picked[j]), spare, used)
            picked[j] = sorted([*picked[j], *more], key=lambda i, j=j: -scores.support[i, j])
            used.extend(more)
        if not titles:
            return _write(scores, picked[0])
        return "\n\n".join(
            f"## {title[:1].upper()}{title[1:]}\n{_write(scores, chosen)}"
            for title, chosen in zip(titles, picked, strict=True)
        )

    def subanswer(self, ctx: ResponseContext, subquestion: str) -> str:
        """Up to ``subanswer_max_sentences`` sentences from the sub-question's own evidence."""
        require_any(ctx)
        scores = self._score([subquestion], subquery_chunks(ctx, subquestion))
        return _write(
            scores, self._pick(scores, scores.support[:, 0], self._settings.subanswer_max_sentences)
        )

    # -- selection --------------------------------------------------------------------------------

    def _score(self, targets: list[str], chunks: Sequence[ContextChunk]) -> _Scores:
        """Every evidence sentence's support for every target (see the module docstring).

        Only the ``max_embedded_sentences`` sentences with the most lexical overlap are embedded (0: all);
        the others keep their lexical support alone. Embedding is the answer stage's main cost.
        """
        sentences = self._sentences(chunks)
        if not sentences:
            return _Scores([], np.zeros((0, 1), np.float32), np.zeros((0, len(targets)), np.float32))
        target_terms = [frozenset(tokenize(t)) for t in targets]
        lexical = np.array(
            [[_overlap(s.terms, t) for t in target_terms] for s in sentences], dtype=np.float32
        )
        cap = self._settings.max_embedded_sentences or len(sentences)
        best_lexical = lexical.max(axis=1)
        embed = sorted(range(len(sentences)), key=lambda i: (-best_lexical[i], i))[:cap]
        target_vecs = self._vectors(targets, "query")
        vectors = np.zeros((len(sentences), target_vecs.shape[1]), dtype=np.float32)
        vectors[embed] = self._vectors([sentences[i].text for i in embed], "passage")
        cosine = np.clip(vectors @ target_vecs.T, 0.0, None)
        lw, ew = self._settings.lexical_weight, self._settings.embedding_weight
        return _Scores(sentences, vectors, (lw * lexical + ew * cosine) / (lw + ew))

    def _pick(
        self,
        scores: _Scores,
        support: np.ndarray,
        limit: int,
        candidates: Iterable[int] | None = None,
        taken: Sequence[int] = (),
    ) -> list[int]:
        """Best-first sentences that clear the support threshold and are not redundant with ``taken``."""
        sentences = scores.sentences
        pool = range(len(sentences)) if candidates is None else candidates
        order = sorted(pool, key=lambda i: (-support[i], sentences[i].cite, sentences[i].position))
        chosen: list[int] = []
        for i in order:
            if len(chosen) >= limit or support[i] < self._settings.support_threshold:
                break
            similarity = [float(scores.vectors[i] @ scores.vectors[k]) for k in (*taken, *chosen)]
            if not any(sim >= self._settings.redundancy_threshold for sim in similarity):
                chosen.append(i)
        return chosen

    def _sentences(self, chunks: Sequence[ContextChunk]) -> list[_Sentence]:
        out: list[_Sentence] = []
        seen: set[str] = set()
        for chunk in chunks:
            for raw in split_sentences(chunk.text):
                # the source's own reference markers ("[12]") would read as our citations: remove them
                text = re.sub(
                    r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", CITATION_RE.sub("", raw))
                ).strip()
                terms = tokenize(text)
                if len(terms) >= self._settings.min_sentence_tokens and text not in seen:
                    seen.add(text)  # the same sentence in two chunks is cited from the first (best) one
                    out.append(_Sentence(text, chunk.id, len(out), frozenset(terms)))
        return out

    def _vectors(self, texts: list[str], kind: str) -> np.ndarray:
        """Embeddings through a bounded LRU cache, so the parts of one request embed each sentence once."""
        with self._cache_lock:
            missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self._cache))
            if missing:
                encoded = self._embedder.encode(missing, kind=kind)  # type: ignore[arg-type]
                for text, vec in zip(missing, np.asarray(encoded, dtype=np.float32), strict=True):
                    self._cache[(kind, text)] = vec
            rows = []
            for text in texts:
                self._cache.move_to_end((kind, text))
                rows.append(self._cache[(kind, text)])
            while len(self._cache) > self._settings.embedding_cache_size:
                self._cache.popitem(last=False)
        return np.vstack(rows)


def _aspect_target(aspect: QueryAspect) -> str:
    return " ".join([aspect.aspect, *aspect.keywords])


def _overlap(sentence_terms: frozenset[str], target_terms: frozenset[str]) -> float:
    """Share of the target's terms the sentence contains."""
    if not target_terms:
        return 0.0
    return len(sentence_terms & target_terms) / len(target_terms)


def _cite(text: str, display_id: int) -> str:
    """The sentence with ``[id]`` before its final punctuation."""
    text = text.rstrip()
    if text and text[-1] in ".!?":
        return f"{text[:-1]} [{display_id}]{text[-1]}"
    return f"{text} [{display_id}]."


def _write(scores: _Scores, picked: list[int]) -> str:
    if not picked:
        return UNKNOWN
    return " ".join(_cite(scores.sentences[i].text, scores.sentences[i].cite) for i in picked)
