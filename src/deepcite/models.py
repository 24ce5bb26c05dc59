"""Typed records shared by every layer: one type per concept, defined once."""

from __future__ import annotations

import difflib
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from deepcite.errors import InputError
from deepcite.text import sentence_spans
from deepcite.validation import INT64_MAX, INT64_MIN, InputModel, check_field_name, filter_value_problem


class _ChoiceEnum(StrEnum):
    @classmethod
    def from_str(cls, value: str) -> _ChoiceEnum:
        """Parse a value, failing with the list of valid choices."""
        try:
            return cls(value.strip().lower())
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise InputError(f"unknown {cls.__name__} {value!r}; choose one of: {choices}") from None


class SearchMode(_ChoiceEnum):
    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"
    GRAPH = "graph"  # Personalized PageRank over the collection's entity graph (retrieval/graph/)


class FusionMethod(_ChoiceEnum):
    RRF = "rrf"
    DBSF = "dbsf"


class SourceFields(BaseModel):
    """What a document says about its source, carried onto every chunk of it (the chunk's ``section`` is the
    one it falls in)."""

    title: str = ""
    section: str | None = None
    pmid: str | None = None
    doi: str | None = None
    year: int | None = None
    url: str | None = None
    source: str | None = None
    authors: list[str] = Field(default_factory=list)
    file: str | None = None  # path of the original file, relative to the ingested folder
    acl: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Document(SourceFields):
    """One source record as a loader reads it, before chunking."""

    id: str
    text: str


class Chunk(SourceFields):
    """A passage of a document: the unit that is indexed, retrieved and cited."""

    chunk_id: str  # stable: same input, same id
    doc_id: str
    text: str
    page: int | None = None  # 1-based page (slide number for slides) the chunk starts on
    page_end: int | None = None  # last page when the chunk crosses a page break, else None
    position: int = 0  # index of the chunk within its document
    # the chunk's sentences as the chunker segmented them at ingest: (start, end) character offsets into
    # ``text``, in order; None for chunks stored before offsets were recorded (their text is split on use)
    sentence_spans: list[tuple[int, int]] | None = None
    # the page each of those sentences starts on, parallel to ``sentence_spans``; None for chunks without
    # pages or stored before sentence pages were recorded (they fall back to ``page``)
    sentence_pages: list[int] | None = None

    def page_at(self, offset: int) -> int | None:
        """The page the sentence holding character ``offset`` of ``text`` starts on (:attr:`sentence_pages`),
        else the chunk's first page."""
        if self.sentence_pages is None or self.sentence_spans is None:
            return self.page
        for (_, end), page in zip(self.sentence_spans, self.sentence_pages, strict=True):
            if offset < end:
                return page
        return self.page

    def spans(self) -> list[tuple[int, int]]:
        """Where the chunk's sentences lie in ``text``: :attr:`sentence_spans`, else found now (older chunks)."""
        return self.sentence_spans if self.sentence_spans is not None else list(sentence_spans(self.text))

    def sentences(self) -> list[str]:
        """The chunk's sentences, as :meth:`spans` places them."""
        return [self.text[start:end] for start, end in self.spans()]


class GraphLink(BaseModel):
    """How the entity graph reached a passage: the entity whose walk brought it in and the edge it came by.

    ``edge``: ``title`` (the passage is the entity's own document), ``title_link`` (the passage mentions the
    entity, which is another document's title), ``mention`` (the passage mentions it), ``first_hop`` (the
    passage was a seed of the walk: a top passage of the first search; ``entity`` is then ``None``).
    ``relation``: with LLM triples (``graph.llm_triples``), the triple ("subject relation object") by which
    the walk reached ``entity``, when it did.
    """

    entity: str | None
    edge: Literal["title", "title_link", "mention", "first_hop"]
    score: float  # the passage's Personalized PageRank score
    relation: str | None = Field(default=None, exclude_if=lambda v: v is None)  # absent without triples


class TripleCounts(BaseModel):
    """What LLM triple extraction did during an ingest (``graph.llm_triples``): passages answered from the
    cache, passages asked, the requests sent, passages given triples, and why the others kept their offline
    entities only (reason -> passages)."""

    cached: int = 0
    asked: int = 0
    requests: int = 0
    extracted: int = 0
    triples: int = 0
    failed: dict[str, int] = Field(default_factory=dict)

    def add(self, other: TripleCounts) -> None:
        """Add ``other``'s counts to these."""
        for name in ("cached", "asked", "requests", "extracted", "triples"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.failed.items():
            self.failed[reason] = self.failed.get(reason, 0) + n


class SearchHit(BaseModel):
    """A chunk returned by a search, with its score and rank in that result list."""

    chunk: Chunk
    score: float
    rank: int
    mode: SearchMode
    graph: GraphLink | None = None  # graph mode (or hybrid fused with the graph): how the walk reached it


# Chunk fields stored as text: a filter's integer on one (pmid=10000001) means that text
_TEXT_FIELDS = frozenset(n for n, f in Chunk.model_fields.items() if f.annotation in (str, str | None))


def _as_text(value: Any) -> Any:
    """Integers (not booleans) as text, in a value or a list of values."""
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class Filters(InputModel):
    """Payload filters for a search. ``acl_groups`` restricts results to chunks shared with those groups.

    Checked on construction: an unknown key is refused naming the nearest one, field names in ``equals`` are
    dotted words, values are what the engine stores (:mod:`deepcite.validation`); whether a field exists in
    a collection is checked against it (:func:`deepcite.retrieval.filters.check_filter_fields`).
    """

    equals: dict[str, Any] = Field(default_factory=dict)  # field -> value, or list of values (any of)
    year_from: int | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)
    year_to: int | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)
    sources: list[str] | None = None
    acl_groups: list[str] | None = None  # None: no ACL restriction; []: only public chunks
    doc_ids: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key not in cls.model_fields:
                    near = difflib.get_close_matches(str(key), list(cls.model_fields), n=1, cutoff=0.5)
                    hint = f"; did you mean {near[0]!r}?" if near else ""
                    raise ValueError(
                        f"unknown filter {str(key)[:80]!r}{hint} (the filters are: {', '.join(cls.model_fields)})"
                    )
        return data

    @field_validator("equals")
    @classmethod
    def _equals(cls, equals: dict[str, Any]) -> dict[str, Any]:
        checked = {}
        for name, value in equals.items():
            check_field_name(name)
            problem = filter_value_problem(value)
            if problem:
                raise ValueError(f"filter on {name!r}: {problem}")
            checked[name] = _as_text(value) if name in _TEXT_FIELDS else value
        return checked

    def is_empty(self) -> bool:
        return (
            not self.equals
            and self.year_from is None
            and self.year_to is None
            and self.sources is None
            and self.acl_groups is None
            and self.doc_ids is None
        )


QueryKind = Literal[
    "subquestion",
    "must_preserve",
    "hyde",
    "bridge",
    "residual",
    "aspect",
    "web",
    "chain",
    "graph",
    "next_hop",
]


class Provenance(BaseModel):
    """One way the executor reached a passage: a hit of one query's result list in one round.

    ``mode`` is the search mode of the list, or ``"web"`` for a web result. ``query_index`` is the list's
    position among the round's result lists, so two lists of one round stay apart.
    """

    round: int
    query: str
    query_index: int = 0
    kind: QueryKind = "subquestion"
    mode: str
    subquestion: str
    rank: int  # 1-based rank in that list
    score: float  # the list's own score (BM25, cosine, fused, or a web page's)
    parent: tuple[str, str] | None = None  # bridge hops: the (doc_id, chunk_id) whose entity was followed
    focus: str | None = None  # the entity or aspect the query was about
    graph: GraphLink | None = None  # a graph-mode hit: the entity and edge that brought the passage in


class Selection(BaseModel):
    """One round that selected a passage: its rank in that round's selection and the relevance it had."""

    round: int
    rank: int
    relevance: float


class EvidenceLink(BaseModel):
    """Why the pack's final order lifted a passage: another evidence passage (``via``, its title) it links to,
    by ``title_link`` (one mentions the other's title, ``entity``) or ``shared_name`` (both mention ``entity``)."""

    entity: str
    edge: Literal["title_link", "shared_name"]
    via: str


class Candidate(BaseModel):
    """A retrieved chunk inside the research executor, with its provenance and every score it earned."""

    chunk: Chunk
    score: float = 0.0  # current best score: fused, then reranked, then the selection score
    rrf: float = 0.0  # reciprocal-rank fusion of the round's lists (sum of 1 / (k + rank))
    rerank: float | None = None  # the reranker's score, when one ran over this passage
    provenance: list[Provenance] = Field(default_factory=list)
    selections: list[Selection] = Field(default_factory=list)
    subquestions: list[str] = Field(default_factory=list)
    link: EvidenceLink | None = None  # set by the pack's final order (research/linking.py)

    @property
    def key(self) -> tuple[str, str]:
        return (self.chunk.doc_id, self.chunk.chunk_id)

    @property
    def first_round(self) -> int:
        """The round that first selected this passage (0 when none did, e.g. a web page)."""
        return min((s.round for s in self.selections), default=0)

    def hits_in(self, round_no: int) -> list[Provenance]:
        """The provenance entries of one round."""
        return [p for p in self.provenance if p.round == round_no]


class AspectType(_ChoiceEnum):
    DEFINITION = "definition"
    COMPARISON = "comparison"
    PROCESS = "process"
    CAUSAL = "causal"
    EVALUATION = "evaluation"
    APPLICATION = "application"


class QueryAspect(BaseModel):
    """One thing a complete answer must cover."""

    aspect: str
    aspect_type: AspectType
    importance: float = Field(ge=0.0, le=1.0)
    keywords: list[str] = Field(default_factory=list)


class AspectCoverage(BaseModel):
    """How well the selected evidence covers each aspect, and at which hop each became covered."""

    aspects: list[QueryAspect] = Field(default_factory=list)
    coverage_scores: dict[str, float] = Field(default_factory=dict)  # aspect text -> [0, 1]
    covered_by_hop: dict[str, int] = Field(default_factory=dict)  # aspect text -> hop index
    contradictions: list[str] = Field(default_factory=list)
    core_importance: float = 0.8

    def is_aspect_covered(self, aspect: QueryAspect | str, threshold: float = 0.5) -> bool:
        key = aspect.aspect if isinstance(aspect, QueryAspect) else aspect
        return self.coverage_scores.get(key, 0.0) >= threshold

    def get_uncovered_aspects(self, threshold: float = 0.5) -> list[QueryAspect]:
        return [a for a in self.aspects if not self.is_aspect_covered(a, threshold)]

    def get_coverage_percentage(self, threshold: float = 0.5) -> float:
        if not self.aspects:
            return 0.0
        covered = sum(1 for a in self.aspects if self.is_aspect_covered(a, threshold))
        return 100.0 * covered / len(self.aspects)

    def get_weighted_coverage(self) -> float:
        total = sum(a.importance for a in self.aspects)
        if total == 0:
            return 0.0
        return (
            sum(a.importance * min(1.0, self.coverage_scores.get(a.aspect, 0.0)) for a in self.aspects)
            / total
        )

    def core_aspects(self) -> list[QueryAspect]:
        return [a for a in self.aspects if a.importance >= self.core_importance]


class AspectScore(BaseModel):
    """One aspect's line in a coverage report."""

    aspect: str
    type: AspectType
    importance: float
    coverage_score: float
    covered_at_hop: int | None = None


class CoverageReport(BaseModel):
    """Aspect coverage as every surface shows it: hop events, API responses, CLI ``--json`` and MCP."""

    enabled: bool = True  # research.coverage.enabled: whether coverage may stop the rounds
    threshold: float  # an aspect scoring at least this is covered
    total_aspects: int
    coverage_percentage: float
    weighted_coverage: float
    uncovered_count: int
    uncovered_aspects: list[str] = Field(default_factory=list)
    aspects: list[AspectScore] = Field(default_factory=list)
    contradictions: list[str] = Field(default_factory=list)

    @classmethod
    def from_coverage(
        cls, coverage: AspectCoverage, *, threshold: float, enabled: bool = True
    ) -> CoverageReport:
        """The report of an :class:`AspectCoverage` at ``threshold``."""
        uncovered = [a.aspect for a in coverage.get_uncovered_aspects(threshold)]
        return cls(
            enabled=enabled,
            threshold=threshold,
            total_aspects=len(coverage.aspects),
            coverage_percentage=coverage.get_coverage_percentage(threshold),
            weighted_coverage=coverage.get_weighted_coverage(),
            uncovered_count=len(uncovered),
            uncovered_aspects=uncovered,
            aspects=[
                AspectScore(
                    aspect=a.aspect,
                    type=a.aspect_type,
                    importance=a.importance,
                    coverage_score=coverage.coverage_scores.get(a.aspect, 0.0),
                    covered_at_hop=coverage.covered_by_hop.get(a.aspect),
                )
                for a in coverage.aspects
            ],
            contradictions=list(coverage.contradictions),
        )


class SelectedPassage(BaseModel):
    """A passage a round selected, as the round's report lists it."""

    doc_id: str
    chunk_id: str
    title: str = ""
    score: float


class SkippedQuery(BaseModel):
    """A follow-up query read from evidence that was not run because it would be noise, and why."""

    text: str
    reason: str  # e.g. "a statistics fragment", "a stray acronym", "a passage's whole title, not a name"
    round: int = 0  # the round whose hop it would have joined


class RoundReport(BaseModel):
    """The audit trail of one executor round."""

    round: int
    subquestion: str
    queries: list[str]
    candidates_before_fusion: int
    candidates_after_fusion: int
    candidates_after_rerank: int
    selected: list[SelectedPassage]
    new_evidence: int
    coverage_percentage: float
    weighted_coverage: float
    uncovered_aspects: list[str]
    decision: Literal["continue", "stop"]
    reason: str
    # follow-up queries this round's hop did not run: noise read from evidence (research/followup.py)
    skipped_queries: list[SkippedQuery] = Field(default_factory=list)


class ChainStep(BaseModel):
    """One hop of a composed question's chain: its template (``#n`` stands for hop n's answer), the
    query it ran, the round it ran in, its answer entities (best first) and its passages (doc_id, title)."""

    template: str
    query: str = ""
    round: int = 0
    answers: list[str] = Field(default_factory=list)
    passages: list[tuple[str, str]] = Field(default_factory=list)


class EvidencePack(BaseModel):
    """What the research engine hands to the answer stage."""

    question: str
    final_evidence: list[Candidate] = Field(default_factory=list)
    coverage: AspectCoverage = Field(default_factory=AspectCoverage)
    retrieval_report: list[RoundReport] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    # sub-question -> exactly the evidence its own retrieval found
    subquery_evidence: dict[str, list[Candidate]] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)  # e.g. the question was truncated
    stop_reason: str = ""  # why retrieval stopped (or why the pack is empty)
    chain: list[ChainStep] = Field(default_factory=list)  # a composed question's hops, in order


class VectorSource(BaseModel):
    """What made a collection's dense vectors: the embedding model and its precision (``fp32``, ``bf16``;
    None for an endpoint's vectors, whose precision is its server's). None as ``model`` (collections written
    before sources were recorded): the model is unknown."""

    model: str | None = Field(description="Embedding model name or path; null when not recorded.")
    precision: str | None = Field(default=None, description="fp32 or bf16; null for an embedding endpoint.")

    def differs_from(self, other: VectorSource) -> bool:
        """Whether ``other`` makes other vectors: another model or precision (a field that either side does
        not know is not compared)."""
        pairs = ((self.model, other.model), (self.precision, other.precision))
        return any(a is not None and b is not None and a != b for a, b in pairs)

    def __str__(self) -> str:
        return f"{self.model or 'an unrecorded model'} in {self.precision or 'its endpoint precision'}"


class CollectionInfo(BaseModel):
    """A collection as listed: its chunk count read from its metadata (no lock taken), or why it is unreadable."""

    name: str
    chunks: int | None = Field(
        description="Chunks the caller may read; null when the collection is unreadable."
    )
    status: Literal["ok", "unreadable"] = "ok"
    problem: str | None = Field(
        default=None, description="Why the collection cannot be read, and what to do."
    )
    dense_dim: int | None = Field(
        default=None, description="Dense vector size; null for a BM25-only collection."
    )
    vectors: VectorSource | None = Field(
        default=None, description="What made the dense vectors; null when not recorded (older collections)."
    )


class EmbedderPrecision(BaseModel):
    """The embedder's precision setting and what it resolves to on this machine (null for an endpoint)."""

    setting: str
    resolved: str | None


class CollectionStats(BaseModel):
    """``deepcite collections stats``: a collection's chunks, documents and chunks per source, read in full."""

    name: str
    chunks: int
    documents: int
    sources: dict[str, int] = Field(description="Chunks per source; ``(none)`` for chunks without one.")
    backend: str
    vectors: VectorSource | None = Field(
        description="What made the dense vectors; null when none are recorded."
    )
    embedder_precision: EmbedderPrecision
