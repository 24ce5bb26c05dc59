"""What the research executor finds and hands on: candidates with their provenance, each round's report, a
chain's hops, and the evidence pack the answer stage is written from."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from deepcite.models.coverage import AspectCoverage
from deepcite.models.documents import Chunk
from deepcite.models.search import GraphLink, SearchMode

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
    "front_matter",
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
    # the rounds after which an LLM choosing next hops said this passage states a fact the answer needs
    llm_read_rounds: list[int] = Field(default_factory=list)

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


class RankedList(BaseModel):
    """One ranked list a round fused: the query that made it, the query's kind (subquestion, variant, bridge,
    chain, graph...), the search mode (``graph`` for the entity graph's list) and how many hits it held."""

    query: str
    kind: str
    mode: SearchMode
    hits: int


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
    # every ranked list the round fused, in the order searched (``mode`` says which were the graph's)
    lists: list[RankedList] = Field(default_factory=list)


class ChainStep(BaseModel):
    """One hop of a composed question's chain: its template (``#n`` stands for hop n's answer), the
    query it ran, the round it ran in, its answer entities (best first) and its passages (doc_id, title)."""

    template: str
    query: str = ""
    round: int = 0
    answers: list[str] = Field(default_factory=list)
    passages: list[tuple[str, str]] = Field(default_factory=list)


class BridgeCandidate(BaseModel):
    """A bridge candidate the beam held (research/bridge.py): the name read from a hop's evidence, the beam hop
    it was read for (1: after the first round), the round that followed it (0: never followed) and its support:
    what the evidence its queries found says for it, plus its reading score (research.bridge.support_reading_weight)."""

    name: str
    depth: int = 1
    score: float = 0.0
    followed_round: int = 0
    support: float = 0.0


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
    bridges: list[BridgeCandidate] = Field(
        default_factory=list
    )  # every candidate the beam held, in order read
