"""A context's evidence sentences, as the extractive writer (:mod:`deepcite.answer.extractive`) quotes them, and
their support, relevance and value for each target.

    scorer = SentenceScorer(embedder, settings.answer)
    scores = scorer.score(["When was the library founded?"], ctx.selected_chunks, [False])
    scores.support[:, 0]   # each sentence's support for the question

A sentence's *support* for a target (the question, a part or side of it, an aspect with its keywords, a
sub-question) is ``lexical_weight * lexical + (1 - lexical_weight) * cosine`` (``answer.extractive``):
``lexical`` is the share of the target's stemmed terms (:func:`deepcite.text.tokenize`)
the sentence contains, each term weighted by its rarity among the evidence's sentences (``lexical_idf``),
``cosine`` the embedding similarity (negative taken as 0; only the ``max_embedded_sentences`` most
lexically similar sentences are embedded); a sentence with a pronoun among its first
``neighbour_reference_words`` words ("it", "they") has at least ``neighbour_support_share`` of the support of
the sentence before it in its passage, which names what the pronoun stands for; the first ``asked_reach`` sentences
after a question the source asks (a FAQ's question, which never opens an answer) have at least
``asked_support_share`` of the question's support, as its answer. A sentence also earns
``study_support_share`` of its study's support (the best of its study's sentences and title): a study that
bears on the question lends that to its results, which rarely repeat the question's words. Only sentences
whose support clears ``support_threshold`` may be quoted. Among those, a sentence's *relevance* blends its support
(0 at ``relevance_floor``, 1 for the target's best-supported sentence) with its own support before the study's
share (relative to the best; ``sentence_relevance_weight``), and its *value* is ``(1 - finding_weight) *
relevance + finding_weight * finding`` where ``finding`` (:mod:`deepcite.answer.findings`) says how much it
reports a result rather than an aim, background or method.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence

import numpy as np
from cachetools import LRUCache

from deepcite.answer.citations import CITATION_RE
from deepcite.answer.context import ContextChunk
from deepcite.answer.findings import (
    LABEL_ONLY,
    SentenceRole,
    elide_statistics,
    finding_score,
    is_decisive,
    role_of_section,
    split_inline_label,
)
from deepcite.answer.lead_guard import lead_fault, never_quoted, without_list_number, without_print_lines
from deepcite.answer.question_words import GREEK_NAMES
from deepcite.answer.reader import SentenceReader
from deepcite.answer.sentence_scores import (
    EvidenceSentence,
    SentenceScores,
    overlap,
    refers_back,
    term_weights,
)
from deepcite.answer.table_rows import row_captions
from deepcite.config import AnswerSettings
from deepcite.models import ANSWER_KINDS, Chunk, TextKind
from deepcite.retrieval.embedders import Embedder
from deepcite.text import labelled_parts, quoted_sentences, tokenize

_GREEK = re.compile(f"[{''.join(GREEK_NAMES)}]")
_ASKS = re.compile(r"\?\s*$")  # a question the source asks


def asked_before(chunk: Chunk, reach: int) -> list[str]:
    """For each of the chunk's answer sentences (:meth:`~deepcite.models.Chunk.answer_sentences`), the question
    its source asks right before it (a heading or a sentence of the chunk, or the chunk's section, that ends with
    "?"), when it is one of the first ``reach`` answer sentences after that question; else ""."""
    if chunk.sentence_kinds is None and chunk.kind not in ANSWER_KINDS:
        return []
    spans = chunk.spans()
    kinds = chunk.sentence_kinds or [TextKind.PROSE] * len(spans)
    question = chunk.section if chunk.section and _ASKS.search(chunk.section) else ""
    since = 0
    out = []
    for (start, end), kind in zip(spans, kinds, strict=True):
        text = chunk.text[start:end]
        asks = bool(_ASKS.search(text))
        if asks:
            question, since = text.strip(), 0
        if kind not in ANSWER_KINDS:
            continue
        out.append(question if question and since < reach else "")
        since += not asks
    return out


def spelled(text: str) -> str:
    """``text`` with each Greek letter also spelled out ("λ = 1.1" -> "λ lambda = 1.1"), as questions name them."""
    return _GREEK.sub(lambda m: f"{m.group(0)} {GREEK_NAMES[m.group(0)]} ", text)


class SentenceScorer:
    """Splits a context into quotable evidence sentences and scores them (module docstring); its embeddings go
    through one bounded cache, so the parts of one request embed each sentence once."""

    def __init__(self, embedder: Embedder, settings: AnswerSettings) -> None:
        self._embedder = embedder
        self._settings = settings
        self._cache: LRUCache[tuple[str, str], np.ndarray] = LRUCache(maxsize=settings.embedding_cache_size)
        self._cache_lock = threading.Lock()
        self._reader: SentenceReader | None = None
        self._reader_lock = threading.Lock()

    def score(
        self,
        targets: list[str],
        chunks: Sequence[ContextChunk],
        findings_first: list[bool],
        keep_statistics: bool = False,
    ) -> SentenceScores:
        """Every evidence sentence's support and value for every target (see the module docstring); with
        ``keep_statistics`` the sentences are quoted with their parenthesised statistics.

        Only the ``max_embedded_sentences`` sentences with the most lexical overlap are embedded (0: all);
        the others keep their lexical support alone. Embedding is the answer stage's main cost.
        """
        s = self._settings
        sentences = self.sentences(chunks, keep_statistics)
        if not sentences:
            empty = np.zeros((0, len(targets)), np.float32)
            return SentenceScores(
                [], np.zeros((0, 1), np.float32), empty, empty, empty, np.zeros(len(targets), bool)
            )
        target_terms = [frozenset(tokenize(t)) for t in targets]
        weights = term_weights(sentences, s.extractive.lexical_idf)
        lexical = np.array(
            [[overlap(x.terms, t, weights) for t in target_terms] for x in sentences], dtype=np.float32
        )
        cap = s.extractive.max_embedded_sentences or len(sentences)
        best_lexical = lexical.max(axis=1)
        embed = sorted(range(len(sentences)), key=lambda i: (-best_lexical[i], i))[:cap]
        target_vecs = self.vectors(targets, "query")
        vectors = np.zeros((len(sentences), target_vecs.shape[1]), dtype=np.float32)
        vectors[embed] = self.vectors([sentences[i].text for i in embed], "passage")
        cosine = np.clip(vectors @ target_vecs.T, 0.0, None)
        own = s.extractive.lexical_weight * lexical + (1.0 - s.extractive.lexical_weight) * cosine
        asked = list(dict.fromkeys(x.asked for x in sentences if x.asked))
        if (share := s.extractive.asked_support_share) and asked:
            # a FAQ's answer: at least the share of the support of the question its source asks before it
            support_of = dict(
                zip(asked, self._text_support(asked, target_terms, target_vecs, weights), strict=True)
            )
            rows = [i for i, x in enumerate(sentences) if x.asked]
            own[rows] = np.maximum(
                own[rows], share * np.vstack([support_of[sentences[i].asked] for i in rows])
            )
        if share := s.extractive.neighbour_support_share:
            after = [(i, x.previous) for i, x in enumerate(sentences) if x.previous is not None]
            if after:
                rows, before = (list(t) for t in zip(*after, strict=True))
                own[rows] = np.maximum(own[rows], share * own[before])
        support = np.maximum(
            own,
            s.extractive.study_support_share
            * self._study_support(sentences, own, target_terms, target_vecs, weights),
        )
        first = np.array(findings_first, dtype=bool)
        weight = np.where(
            first,
            s.extractive.finding_weight,
            s.extractive.descriptive_finding_weight,
        )[None, :]
        finding = np.array([x.finding for x in sentences], dtype=np.float32)[:, None]
        decisive = np.array([x.decisive for x in sentences], dtype=np.float32)[:, None]
        finding = np.minimum(1.0, finding + s.extractive.decisive_bonus * decisive * first[None, :])
        floor = s.extractive.relevance_floor
        best = np.maximum(support.max(axis=0, keepdims=True), floor + 1e-6)
        boosted = np.clip((support - floor) / (best - floor), 0.0, 1.0)
        alone = own / np.maximum(own.max(axis=0, keepdims=True), 1e-6)  # what the sentence itself says
        relevance = (
            1.0 - s.extractive.sentence_relevance_weight
        ) * boosted + s.extractive.sentence_relevance_weight * alone
        value = (1.0 - weight) * relevance + weight * finding
        reading = self._reading(targets[0], sentences)
        return SentenceScores(
            sentences, vectors, support, relevance, value, first, alone, fit=own, reading=reading
        )

    def _reading(
        self, question: str, sentences: Sequence[EvidenceSentence]
    ) -> Callable[[Sequence[int]], np.ndarray] | None:
        """The sentence reader's scores for ``question`` by sentence index, read when asked; None when it is off."""
        if not self._settings.reader.enabled:
            return None
        texts = [x.text for x in sentences]

        def reading(indices: Sequence[int]) -> np.ndarray:
            return self.reader().read(question, [texts[i] for i in indices])

        return reading

    def reader(self) -> SentenceReader:
        """The sentence reader, loaded on first use (answer/reader.py)."""
        with self._reader_lock:
            if self._reader is None:
                r = self._settings.reader
                self._reader = SentenceReader(r.base_model, r.max_tokens, r.cache_size)
            return self._reader

    def _study_support(
        self,
        sentences: list[EvidenceSentence],
        own: np.ndarray,
        target_terms: list[frozenset[str]],
        target_vecs: np.ndarray,
        weights: dict[str, float],
    ) -> np.ndarray:
        """Per sentence and target: the support of the study it comes from, the best of its sentences'
        and its title's (a study titled after the question bears on it, whatever each result says)."""
        titles = {x.study: x.title for x in sentences if x.title}
        best: dict[str, np.ndarray] = {}
        for i, x in enumerate(sentences):
            best[x.study] = np.maximum(best.get(x.study, own[i]), own[i])
        if titles:
            title_support = self._text_support(list(titles.values()), target_terms, target_vecs, weights)
            for name, support in zip(titles, title_support, strict=True):
                best[name] = np.maximum(best[name], support)
        return np.vstack([best[x.study] for x in sentences])

    def _text_support(
        self,
        texts: list[str],
        target_terms: list[frozenset[str]],
        target_vecs: np.ndarray,
        weights: dict[str, float],
    ) -> np.ndarray:
        """Each of ``texts``' support for each target, as a sentence's is scored (a title, a question the source
        asks): (texts, targets)."""
        lexical_weight = self._settings.extractive.lexical_weight
        cosine = np.clip(self.vectors(texts, "passage") @ target_vecs.T, 0.0, None)
        lexical = np.array(
            [[overlap(frozenset(tokenize(text)), t, weights) for t in target_terms] for text in texts],
            dtype=np.float32,
        )
        return lexical_weight * lexical + (1.0 - lexical_weight) * cosine

    def sentences(self, chunks: Sequence[ContextChunk], keep_statistics: bool) -> list[EvidenceSentence]:
        """The chunks' quotable sentences, each once (from the first chunk that holds it): no heading, caption,
        furniture, equation or reference entry; with ``keep_statistics`` their parenthesised statistics kept."""
        out: list[EvidenceSentence] = []
        seen: set[str] = set()
        for chunk in chunks:
            captions = row_captions(chunk)
            kept: dict[int, int] = {}  # the chunk's sentence number -> its position in out
            # no heading, caption, furniture, equation or reference entry
            for n, (raw, asked) in enumerate(self._units(chunk)):
                if LABEL_ONLY.match(raw):
                    continue  # a section label left on its own ("STUDY DESIGN/")
                label, body = split_inline_label(raw)
                # the source's own reference markers ("[12]") would read as our citations: remove them
                text = re.sub(
                    r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", CITATION_RE.sub("", body))
                ).strip()
                elide = self._settings.extractive.elide_statistics and not keep_statistics
                shown = without_print_lines(elide_statistics(text) if elide else text)
                if never_quoted(shown):
                    continue  # a copyright, venue or running-head line, or a reference entry
                quoted = without_list_number(shown)
                terms = tokenize(spelled(quoted))
                if len(terms) >= self._settings.extractive.min_sentence_tokens and quoted not in seen:
                    seen.add(quoted)  # the same sentence in two chunks is cited from the first (best) one
                    kept[n] = len(out)
                    section = label or chunk.section
                    role_known = role_of_section(section) is not SentenceRole.UNKNOWN
                    out.append(
                        EvidenceSentence(
                            text=quoted,
                            cite=chunk.id,
                            position=len(out),
                            terms=frozenset(terms),
                            finding=finding_score(text, section, self._settings),
                            study=chunk.pmid or chunk.doi or chunk.doc_id,
                            title=chunk.title,
                            decisive=is_decisive(text),
                            # read with a list item's number: "6. Officers …" keeps its heading's fault
                            lead_fault=lead_fault(shown, self._settings.kinds),
                            caption=captions.get(raw, ""),
                            role_known=role_known,
                            # a structured abstract's label ("RESULTS"), not a heading ("1 Introduction")
                            role_labelled=role_known and bool(LABEL_ONLY.match(section.strip())),
                            opening=chunk.position == 0 and n < self._settings.kinds.front_matter_sentences,
                            previous=kept.get(n - 1)
                            if refers_back(quoted, self._settings.extractive.neighbour_reference_words)
                            else None,
                            asked=asked,
                        )
                    )
        return out

    def _units(self, chunk: ContextChunk) -> list[tuple[str, str]]:
        """The chunk's answer sentences (a lead-in ending in a colon run on into the sentence after it:
        ``lead_in_run_on_words``), each with the question it answers (:func:`asked_before`); a long one
        that holds quotation marks (``quotation_split_words``) cut into the sentences inside them, one that runs
        label–value pairs together (``label_split_min_labels``) into its pairs."""
        longest = self._settings.extractive.quotation_split_words
        labels = self._settings.extractive.label_split_min_labels
        return [
            (pair, asked)
            for raw, asked in zip(
                chunk.answer_sentences(self._settings.extractive.lead_in_run_on_words),
                asked_before(chunk, self._settings.extractive.asked_reach),
                strict=True,
            )
            for part in (quoted_sentences(raw) if longest and len(raw.split()) > longest else [raw])
            for pair in labelled_parts(part, labels, self._settings.extractive.min_sentence_tokens)
        ]

    def prime(self, chunks: Sequence[ContextChunk]) -> None:
        """Embed the chunks' evidence sentences (quoted with and without their statistics) into the cache in one
        batch: what warm start does for the passages a first question is likely to read, so it does not embed
        them all at once."""
        texts = [x.text for keep in (False, True) for x in self.sentences(chunks, keep)]
        if texts:
            self.vectors(texts, "passage")

    def vectors(self, texts: list[str], kind: str) -> np.ndarray:
        """Embeddings through a bounded LRU cache (cachetools), so the parts of one request embed each
        sentence once."""
        unique = list(dict.fromkeys(texts))
        with self._cache_lock:
            found = {t: self._cache[(kind, t)] for t in unique if (kind, t) in self._cache}
            missing = [t for t in unique if t not in found]
            if missing:
                encoded = self._embedder.encode(missing, kind=kind)  # type: ignore[arg-type]
                for text, vec in zip(missing, np.asarray(encoded, dtype=np.float32), strict=True):
                    found[text] = self._cache[(kind, text)] = vec
        return np.vstack([found[t] for t in texts])
