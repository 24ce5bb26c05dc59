"""Does a cited passage support the sentence that cites it? The check behind every kept citation.

A citation is kept when its passage supports its sentence:

- **lexical**: the share of the sentence's content terms (the BM25 tokenizer's stemmed terms) that the
  passage holds. At ``answer.citations.verbatim_lexical`` or above the sentence is (nearly) the passage's
  own words: supported, nothing else is computed. That is every sentence of the extractive writer.
- **embedding**: the cosine similarity of the sentence to the passage's closest sentence (the collection's
  embedder; a paraphrase of one finding lands close to the sentence stating it). A passage given as a
  :class:`~deepcite.models.Chunk` brings its sentences from ingest (``Chunk.sentence_spans``); bare text
  is split here.
- supported when ``citations.lexical_weight * lexical + (1 - citations.lexical_weight) * similarity`` reaches
  ``answer.citations.support_threshold``. Weights and threshold were tuned on a crafted PubMedQA set
  (``benchmarks/citation_support.py``: sentences of or about the cited abstract, and the same sentences
  citing the most similar other abstract).
- a :class:`SupportJudge` (an NLI model or an LLM, ``answer.citations.judge``) decides instead where one is
  configured and gives a verdict; the lexical shortcut still applies. :class:`LLMSupportJudge` asks the LLM.
  The LLM judge is checked before it is trusted: it answers built-in control pairs (:data:`CONTROL_PAIRS`: a
  plainly supported sentence, a contradicted one, one about something else entirely); a judge that gets one
  wrong gives no verdicts (the scores decide), and the response's ``written`` says so. A judge's "supported"
  never overrules a combined score more than ``answer.citations.judge_veto_margin`` below the threshold.

The quote: :meth:`CitationSupport.match` also says *which words* of the passage support the sentence: the
passage sentence that scores best for it (by its own lexical share when the sentence is verbatim, else by
the same weighted lexical-and-cosine score the check uses, sentence by sentence), widened by a neighbouring
sentence while that adds claim terms, up to ``answer.citations.quote_max_sentences``; as character offsets into the
passage text, at most ``answer.citations.quote_max_chars`` characters: a longer stored "sentence" (a block of
a filing the ingest split as one) is split again and the choice made among its sentences, and a run with no
sentence end (a table's text) is narrowed to the window of whole words holding the most claim terms.

Usage::

    support = CitationSupport(embedder, settings.answer)
    support.supports("Warfarin cuts stroke risk by two thirds.", passage_text)  # True / False
    found = support.match("Warfarin cuts stroke risk by two thirds.", passage_text)
    passage_text[found.quote_start : found.quote_end]  # the supporting sentence(s)
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from cachetools import LRUCache
from pydantic import BaseModel

from deepcite.answer.citations import SupportMatch
from deepcite.config import AnswerSettings, CitationSettings
from deepcite.errors import LLMError
from deepcite.llm.client import LLMClient
from deepcite.llm.deadline import PartWriter, failure_reason
from deepcite.llm.json import chat_json
from deepcite.models import Chunk
from deepcite.retrieval.embedders import Embedder
from deepcite.text import sentence_spans, tokenize

log = logging.getLogger(__name__)

Passage = str | Chunk  # a cited passage: a chunk (its sentences stored at ingest) or bare text
JUDGE_PART = "citation judge"


@runtime_checkable
class SupportJudge(Protocol):
    """Decides whether ``passage`` supports ``sentence``; None when it cannot tell (the scores decide)."""

    def judge(self, sentence: str, passage: str) -> bool | None: ...


class SupportVerdict(BaseModel):
    """The LLM judge's answer."""

    supported: bool


_JUDGE_TASK = (
    "You check citations. Answer whether the passage states or directly implies the sentence: "
    'reply {"supported": true} or {"supported": false} as one JSON object. A sentence that goes beyond '
    "the passage, contradicts it, or is about something else is not supported."
)


class ControlPair(NamedTuple):
    """A sentence, a passage, and the verdict any judge worth asking gives on them."""

    sentence: str
    passage: str
    supported: bool


_WARFARIN = (
    "In a randomised trial of 1,200 adults with atrial fibrillation, warfarin reduced the risk of stroke by "
    "two thirds compared with placebo."
)
_INSULIN = (
    "Insulin lowers blood glucose by promoting its uptake into muscle and fat cells; in the trial, basal "
    "insulin lowered fasting glucose by 2.1 mmol/L."
)
CONTROL_PAIRS: tuple[ControlPair, ...] = (
    ControlPair("Warfarin reduced the risk of stroke in adults with atrial fibrillation.", _WARFARIN, True),
    ControlPair("The moon is made of cheese.", _INSULIN, False),
    ControlPair("Warfarin doubled the risk of stroke in adults with atrial fibrillation.", _WARFARIN, False),
)


class LLMSupportJudge:
    """:class:`SupportJudge` that asks an LLM; an LLM failure is no verdict (the scores decide).

    With ``controls`` (default :data:`CONTROL_PAIRS`) the judge answers them first (:meth:`standing`); until it
    has answered all of them right it gives no verdict. A wrong answer is remembered (the judge is refused for
    good); a control that got no answer (the LLM failed) is asked again by the next request.
    """

    def __init__(
        self, llm: LLMClient, max_tokens: int = 20, controls: Sequence[ControlPair] | None = CONTROL_PAIRS
    ) -> None:
        self._llm = llm
        self._max_tokens = max_tokens
        self._controls = tuple(controls or ())
        self._lock = threading.Lock()
        self._passed = not self._controls
        self._refused: str | None = None
        self._unanswered: str | None = None  # why the last check got no answer from the LLM

    def standing(self) -> PartWriter:
        """Whether the judge's verdicts are used: its control pairs are asked once (module doc)."""
        with self._lock:
            if not self._passed and self._refused is None:
                self._check_controls()
            if self._passed:
                return PartWriter(part=JUDGE_PART, writer="llm")
            reason = (
                self._refused or f"no answer to its control pairs ({self._unanswered}); support scores decide"
            )
            return PartWriter(part=JUDGE_PART, writer="offline", reason=reason)

    def _check_controls(self) -> None:
        for pair in self._controls:
            try:
                verdict = self._ask(pair.sentence, pair.passage)
            except LLMError as exc:
                log.warning("LLM citation judge: no answer to a control pair (%s); the scores decide", exc)
                self._unanswered = failure_reason(exc)
                return
            if verdict != pair.supported:
                said = "supported" if verdict else "unsupported"
                self._refused = (
                    f"failed a control pair: called {pair.sentence!r} {said} by a passage about "
                    f"{pair.passage.split(' ', 3)[-1][:40]}…; support scores decide"
                )
                log.warning("LLM citation judge refused: %s", self._refused)
                return
        self._passed = True

    def judge(self, sentence: str, passage: str) -> bool | None:
        if not self._passed and self.standing().writer != "llm":
            return None  # refused, or its controls got no answer yet
        try:
            return self._ask(sentence, passage)
        except LLMError:
            return None

    def _ask(self, sentence: str, passage: str) -> bool:
        messages = [
            {"role": "system", "content": _JUDGE_TASK},
            {"role": "user", "content": f"Passage:\n{passage}\n\nSentence:\n{sentence}"},
        ]
        return chat_json(self._llm, messages, SupportVerdict, max_tokens=self._max_tokens).supported


def lexical_support(sentence: str, passage: str) -> float:
    """Share of the sentence's content terms found in the passage (1.0 for a sentence with none)."""
    return _share(set(tokenize(sentence)), passage)


def _share(terms: set[str], passage: str) -> float:
    """Share of ``terms`` found in the passage (1.0 for no terms)."""
    if not terms:
        return 1.0
    return len(terms & set(tokenize(passage))) / len(terms)


class CitationSupport:
    """Lexical and embedding support of a sentence by a passage, with an optional judge (module doc)."""

    def __init__(
        self, embedder: Embedder, settings: AnswerSettings, judge: SupportJudge | None = None
    ) -> None:
        self._embedder = embedder
        self._settings = settings
        self._judge = judge
        self._sentences: LRUCache[str, np.ndarray] = LRUCache(maxsize=settings.embedding_cache_size)
        # a passage's sentence vectors by its text and sentence offsets (one row per sentence)
        self._passages: LRUCache[_PassageKey, np.ndarray] = LRUCache(maxsize=settings.context.max_count)
        self._lock = threading.Lock()

    def judge_standing(self) -> PartWriter | None:
        """Whether the configured judge's verdicts are used, and why not (None without a judge, or with one
        that is not checked)."""
        standing = getattr(self._judge, "standing", None)
        return standing() if callable(standing) else None

    def prime(self, sentences: Sequence[str], passages: Sequence[Passage]) -> None:
        """Embed the sentences and the passages' sentences not cached yet, in one batch each (many small
        encoder calls cost far more than one large one)."""
        by_key = {_key(p): p for p in passages}
        with self._lock:
            todo = [s for s in dict.fromkeys(sentences) if s not in self._sentences]
            keys = [k for k in by_key if k not in self._passages]
        split = [_sentences(by_key[k]) for k in keys]
        flat = [s for parts in split for s in parts]
        vectors = self._embedder.encode(todo + flat)
        with self._lock:
            for text, vector in zip(todo, vectors[: len(todo)], strict=True):
                self._sentences[text] = vector
            start = len(todo)
            for key, parts in zip(keys, split, strict=True):
                self._passages[key] = vectors[start : start + len(parts)]
                start += len(parts)

    def similarity(self, sentence: str, passage: Passage) -> float:
        """Cosine similarity of ``sentence`` to the passage's closest sentence."""
        vector = self._sentence_vector(sentence)
        return float(np.max(self._passage_vectors(passage) @ vector))

    def score(self, sentence: str, passage: Passage) -> tuple[float, float]:
        """(lexical, combined) support; combined is the lexical score alone when that is verbatim-high."""
        lexical = lexical_support(sentence, _text(passage))
        if lexical >= self._settings.citations.verbatim_lexical:
            return lexical, lexical
        weight = self._settings.citations.lexical_weight
        return lexical, weight * lexical + (1.0 - weight) * self.similarity(sentence, passage)

    def supports(self, sentence: str, passage: Passage) -> bool:
        """Whether ``passage`` supports ``sentence`` (the rules in the module doc)."""
        return self.match(sentence, passage).supported

    def match(self, sentence: str, passage: Passage) -> SupportMatch:
        """The verdict on ``passage`` supporting ``sentence``, its combined score and the quote: the span of
        the passage that supports it (the rules in the module doc)."""
        spans = _spans(passage)
        text = _text(passage)
        terms = set(tokenize(sentence))
        lexical = lexical_support(sentence, text)
        per_sentence = np.array([_share(terms, text[a:b]) for a, b in spans])
        if lexical >= self._settings.citations.verbatim_lexical:
            start, end = self._quote(terms, text, spans, per_sentence)
            return SupportMatch(supported=True, score=lexical, quote_start=start, quote_end=end)
        weight = self._settings.citations.lexical_weight
        cosine = self._passage_vectors(passage) @ self._sentence_vector(sentence)
        score = weight * lexical + (1.0 - weight) * float(np.max(cosine))
        start, end = self._quote(terms, text, spans, weight * per_sentence + (1.0 - weight) * cosine)
        citations = self._settings.citations
        verdict = self._judge.judge(sentence, text) if self._judge is not None else None
        if verdict and score < citations.support_threshold - citations.judge_veto_margin:
            verdict = False  # a judge never carries a claim the scores place far below the threshold
        supported = verdict if verdict is not None else score >= citations.support_threshold
        return SupportMatch(supported=supported, score=score, quote_start=start, quote_end=end)

    def _quote(
        self, terms: set[str], passage: str, spans: Sequence[tuple[int, int]], scores: np.ndarray
    ) -> tuple[int, int]:
        """The best-scoring sentence's span, widened by neighbours (:func:`_widened`); a span longer than
        ``answer.citations.quote_max_chars`` (a stored "sentence" holding several) is chosen again among the
        sentences the splitter finds in it, and one still longer narrowed to its best window of words."""
        settings = self._settings.citations
        start, end = _widened(terms, passage, spans, int(np.argmax(scores)), settings)
        if end - start > settings.quote_max_chars:
            inner = [(start + a, start + b) for a, b in sentence_spans(passage[start:end])]
            if len(inner) > 1:
                shares = [_share(terms, passage[a:b]) for a, b in inner]
                start, end = _widened(terms, passage, inner, int(np.argmax(shares)), settings)
        return _narrowed(terms, passage, start, end, settings.quote_max_chars)

    def _sentence_vector(self, sentence: str) -> np.ndarray:
        with self._lock:
            cached = self._sentences.get(sentence)
        if cached is None:
            cached = self._embedder.encode([sentence])[0]  # unit rows (the Embedder protocol)
            with self._lock:
                self._sentences[sentence] = cached
        return cached

    def _passage_vectors(self, passage: Passage) -> np.ndarray:
        key = _key(passage)
        with self._lock:
            cached = self._passages.get(key)
        if cached is None:
            cached = self._embedder.encode(_sentences(passage))
            with self._lock:
                self._passages[key] = cached
        return cached


def _widened(
    terms: set[str], passage: str, spans: Sequence[tuple[int, int]], best: int, settings: CitationSettings
) -> tuple[int, int]:
    """Sentence ``best``'s span widened by the neighbour that adds the most claim terms while one does, up to
    ``quote_max_sentences`` sentences and ``quote_max_chars`` characters."""
    first = last = best
    covered = _share(terms, passage[spans[first][0] : spans[last][1]])
    while last - first + 1 < settings.quote_max_sentences:
        options = [(first - 1, last)] if first > 0 else []
        options += [(first, last + 1)] if last + 1 < len(spans) else []
        options = [(a, b) for a, b in options if spans[b][1] - spans[a][0] <= settings.quote_max_chars]
        gains = [(_share(terms, passage[spans[a][0] : spans[b][1]]), a, b) for a, b in options]
        found = max(gains, default=None, key=lambda g: g[0])
        if found is None or found[0] <= covered:
            break
        covered, first, last = found
    return spans[first][0], spans[last][1]


def _narrowed(terms: set[str], passage: str, start: int, end: int, most: int) -> tuple[int, int]:
    """``passage[start:end]`` when at most ``most`` characters long, else the window of whole words of at most
    ``most`` characters in it holding the largest share of ``terms`` (the first such window)."""
    if end - start <= most:
        return start, end
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", passage[start:end])]
    best, best_share, last = (start, start + most), -1.0, 0
    for first, (window_start, _) in enumerate(words):
        last = max(last, first)
        while last + 1 < len(words) and words[last + 1][1] - window_start <= most:
            last += 1
        window_end = min(words[last][1], window_start + most)  # a single word longer than ``most`` is cut
        share = _share(terms, passage[window_start:window_end])
        if share > best_share:
            best, best_share = (window_start, window_end), share
        if last + 1 == len(words):
            break  # this window reaches the end: every later one is a part of it
    return best


_PassageKey = tuple[str, tuple[tuple[int, int], ...]]


def _key(passage: Passage) -> _PassageKey:
    return _text(passage), tuple(_spans(passage))


def _text(passage: Passage) -> str:
    return passage.text if isinstance(passage, Chunk) else passage


def _spans(passage: Passage) -> Sequence[tuple[int, int]]:
    """The passage's sentences as character offsets (a chunk's stored at ingest), or the whole text as one
    when it has none."""
    spans = passage.spans() if isinstance(passage, Chunk) else sentence_spans(passage)
    return spans or ((0, len(_text(passage))),)


def _sentences(passage: Passage) -> list[str]:
    text = _text(passage)
    return [text[start:end] for start, end in _spans(passage)]
