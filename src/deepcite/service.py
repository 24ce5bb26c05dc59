"""The records every surface shares: the requests (limits checked once), the responses, and the ACL rule.

HTTP, MCP, the CLI and the Python API all hand a :class:`SearchRequest` or :class:`QuestionRequest` to the
:class:`deepcite.engine.Engine`, which checks it against the settings with :meth:`QuestionRequest.checked`
(one place, one error: :class:`~deepcite.errors.RequestError`, HTTP 422, an MCP tool error naming the
field, a CLI message), and answers with :class:`AskResponse`, :class:`PartResponse` or a
``ResearchResult``. :func:`restrict_filters` is the one place a caller's ACL groups narrow a search.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from deepcite.answer.citations import CitationCheck
from deepcite.answer.context import ResponseContext
from deepcite.answer.pipeline import AnswerResult, Citation
from deepcite.config import Settings
from deepcite.errors import InputError, RequestError
from deepcite.llm.deadline import Degraded, PartWriter
from deepcite.models import (
    Chunk,
    CoverageReport,
    Filters,
    FusionMethod,
    GraphLink,
    RoundReport,
    SearchHit,
    SearchMode,
)
from deepcite.research.state import ExecutorState
from deepcite.retrieval.filters import check_filter_sizes, filter_conditions
from deepcite.retrieval.points import validate_collection_name
from deepcite.validation import InputModel, is_blank

Groups = list[str] | tuple[str, ...] | None  # the caller's ACL groups; None means unrestricted


def restrict_filters(filters: Filters | None, groups: Groups) -> Filters | None:
    """``filters`` limited to the caller's ACL ``groups`` (None: unrestricted).

    Requested groups are intersected with the caller's, so a request can narrow its access but never
    widen it; ``groups=()`` leaves public chunks only.
    """
    if groups is None:
        return filters
    restricted = filters.model_copy(deep=True) if filters is not None else Filters()
    allowed = set(groups)
    requested = restricted.acl_groups
    restricted.acl_groups = sorted(allowed if requested is None else allowed & set(requested))
    return restricted


class _Request(InputModel):
    """Fields every request shares (every text valid Unicode); :meth:`checked` applies the settings' limits.

    Every problem is a :class:`~deepcite.errors.RequestError` (HTTP 422) naming the field: an empty question
    (no letter or digit: white space, zero-width characters and punctuation alone do not count), one over
    the limit, a malformed collection name (checked before any file is touched), bad filters.
    """

    model_config = ConfigDict(extra="forbid")

    collection: str | None = Field(
        None, description="Collection to search (default: server.default_collection)."
    )
    filters: Filters | None = Field(
        None, description="Payload filters; ACL groups are capped by the caller's."
    )

    def _check_common(self, text: str, what: str, settings: Settings) -> dict[str, object]:
        stripped = text.strip()
        if is_blank(stripped):
            raise RequestError(f"{what} is empty; send a question, e.g. 'does aspirin prevent stroke?'")
        limit = settings.research.planning.max_question_chars
        if len(stripped) > limit:
            raise RequestError(
                f"{what} is {len(stripped)} characters; the limit is {limit} (setting research.planning.max_question_chars): "
                "shorten it"
            )
        try:
            check_filter_sizes(self.filters, settings)
            filter_conditions(self.filters)
        except InputError as exc:
            raise RequestError(f"filters: {exc}") from exc
        collection = self.collection.strip() if self.collection is not None else None
        if collection == "":
            raise RequestError(
                "the collection name is empty; give one of the listed collections, or leave it out"
            )
        if collection is not None:
            try:
                validate_collection_name(collection, settings.store.max_collection_name_chars)
            except InputError as exc:
                raise RequestError(f"collection: {exc}") from exc
        return {"collection": collection}


class SearchRequest(_Request):
    """One plain ranked search of a collection (no planning, no answer)."""

    query: str = Field(description="What to look for.")
    mode: SearchMode | None = Field(
        None, description="bm25, dense, hybrid or graph (default: search.default_mode)."
    )
    k: int | None = Field(None, description="How many passages (1..search.max_k; default: search.default_k).")
    fusion: FusionMethod | None = Field(
        None, description="Hybrid fusion: rrf or dbsf (default: search.fusion)."
    )

    def checked(self, settings: Settings) -> SearchRequest:
        """This request with the query stripped and defaults filled; RequestError (422) when out of limits."""
        common = self._check_common(self.query, "query", settings)
        k = settings.search.default_k if self.k is None else self.k
        if not 1 <= k <= settings.search.max_k:
            raise RequestError(
                f"k must be between 1 and {settings.search.max_k} (setting search.max_k), not {k}"
            )
        return self.model_copy(update={**common, "query": self.query.strip(), "k": k})


class QuestionRequest(_Request):
    """A question to research (and answer, for ``ask``)."""

    query: str = Field(description="The question, in plain language.")
    max_hops: int | None = Field(
        None, description="At most this many research hops (1..research.stopping.max_hops)."
    )

    def checked(self, settings: Settings) -> QuestionRequest:
        """This request with the question stripped; RequestError (422) when out of limits."""
        common = self._check_common(self.query, "query", settings)
        cap = settings.research.stopping.max_hops
        if self.max_hops is not None and not 1 <= self.max_hops <= cap:
            raise RequestError(
                f"max_hops must be between 1 and {cap} (setting research.stopping.max_hops), not {self.max_hops}"
            )
        return self.model_copy(update={**common, "query": self.query.strip()})


class Passage(Chunk):
    """A passage as a search shows it: every :class:`~deepcite.models.Chunk` field, its score and rank.

    ``acl`` stays internal (never serialised), so a response does not name groups the caller may not know of.
    """

    score: float
    rank: int = 0
    acl: list[str] = Field(default_factory=list, exclude=True)
    graph: GraphLink | None = None  # graph mode: the entity and edge that brought the passage in

    @classmethod
    def from_hit(cls, hit: SearchHit) -> Passage:
        return cls(**hit.chunk.model_dump(), score=round(float(hit.score), 6), rank=hit.rank, graph=hit.graph)


class SearchResponse(BaseModel):
    """The answer to a :class:`SearchRequest` (HTTP ``POST /api/search``, the MCP ``search`` tool, the CLI)."""

    collection: str
    query: str
    mode: SearchMode
    hits: list[Passage]


class HopEvent(RoundReport):
    """One finished research hop: its round's report, the evidence held so far and the coverage reached
    (streamed to clients as it happens)."""

    evidence_total: int
    coverage: CoverageReport

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hop(self) -> int:
        """The hop's number (its round)."""
        return self.round

    @classmethod
    def from_round(cls, state: ExecutorState, report: RoundReport, coverage: CoverageReport) -> HopEvent:
        """The event of ``report``, the round ``state`` just finished."""
        return cls(**dict(report), evidence_total=len(state.evidence), coverage=coverage)


HopCallback = Callable[[HopEvent], None]


class AskResponse(AnswerResult):
    """The ``/api/unified-search`` response; ``coverage`` is the aspect coverage of the research."""

    coverage: CoverageReport | None = None  # type: ignore[assignment]


class OwnedContext(ResponseContext):
    """A response context that remembers the ACL groups it was retrieved under (None: unrestricted)."""

    acl_groups: list[str] | None = None


class PartResponse(BaseModel):
    """A regenerated quick summary or long answer of a stored request."""

    success: bool = True
    request_id: str
    query: str
    part: Literal["summary", "answer"]
    text: str
    citations: list[Citation]
    citation_check: CitationCheck
    latency_ms: float
    chunks_used: int
    degraded: Degraded | None = None  # set when the LLM writer fell back to the offline one
    insufficient: bool = False  # no evidence to write from: the text is the insufficient-evidence template
    # with an LLM writer: whether it or the offline writer wrote the text, and why
    written: PartWriter | None = None
