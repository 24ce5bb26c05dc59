"""Typed state the executor nodes read and write."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from deepcite.models import (
    AspectCoverage,
    Candidate,
    ChainStep,
    QueryAspect,
    QueryKind,
    RoundReport,
    SearchHit,
    SearchMode,
    SkippedQuery,
)
from deepcite.research.answer_types import Wanted
from deepcite.research.intake import Intake


@dataclass
class ResearchPlan:
    """The planner's output: aspects, the first hop's sub-question, and whether to retrieve at all."""

    intake: Intake
    aspects: list[QueryAspect]
    subquestions: list[str]  # planned sub-questions, first hop first
    needs_retrieval: bool = True
    chain: list[str] = field(default_factory=list)  # a composed question's hop templates (research.chain)
    steps: list[str] = field(
        default_factory=list
    )  # the same, the beam follows them (research.bridge.decompose)
    # the kinds of answer the question's words name (research/answer_types.py; research.bridge.type_weight)
    answer_types: tuple[Wanted, ...] = ()
    hops: int = 0  # the steps of the question's chain as read (research.bridge.chain_depth; 0: not read)

    @property
    def question(self) -> str:
        return self.intake.question


@dataclass
class RoundQuery:
    """One query of a round, with the sub-question it serves."""

    text: str
    subquestion: str
    kind: QueryKind = "subquestion"
    parent: tuple[str, str] | None = None  # bridge hops: the evidence passage whose entity this follows
    focus: str | None = None  # the entity or aspect the query is about (a passage titled so is preferred)
    modes: list[str] | None = None  # None: the configured research.retrieval.modes
    k: int | None = (
        None  # hits per search; None: research.retrieval.k_per_query (bridge_k for an entity name)
    )


@dataclass(frozen=True)
class HopChoice:
    """The LLM's reading of the evidence after a round (node ``choose_next_hop``): whether the question is
    answered, and if not the next query and the entity it is about; and which passages it read facts from."""

    answered: bool
    next_query: str = ""
    entity: str = ""
    round: int = 0  # the round whose evidence it read
    supporting: tuple[int, ...] = ()  # positions in the evidence shown of the passages it read facts from
    shown: tuple[tuple[str, str], ...] = ()  # the keys of the evidence it was shown, in order

    @property
    def picked(self) -> tuple[tuple[str, str], ...]:
        """The keys of the passages it read the question's facts from."""
        return tuple(self.shown[i] for i in self.supporting if i < len(self.shown))


@dataclass
class BeamEntry:
    """A bridge candidate of the beam (research/bridge.py): the name read from a hop's evidence, its reading's
    score, the passage it was read from, its depth (1: read after the first hop), the round that followed it
    (0: not yet) and the relevance of the best passage that round found for it (its support)."""

    name: str
    score: float
    parent: tuple[str, str]
    depth: int = 1
    followed_round: int = 0
    support: float = 0.0
    path: tuple[
        str, ...
    ] = ()  # the candidates of the hops before, whose follow-up found it (first hop first)


@dataclass(frozen=True)
class BridgeLink:
    """One followed candidate of a beam hop, for the hop log: the chain it continues (the candidates of the hops
    before, then its own name), the title of the best passage found naming it (``None``: none was), its support,
    and whether it stayed in the beam."""

    path: tuple[str, ...]
    title: str | None
    support: float
    kept: bool


@dataclass(frozen=True)
class BridgeHop:
    """What one beam hop did (research/nodes/read_bridge.py): the round that followed the beam, the candidates it
    followed, the candidates read next from the winners' passages, and whether those are the next-best candidates
    of an earlier reading (``retry``: the hop found nothing to go on); ``second`` the first reading's next-best
    candidates that join them after a first hop of weak support (``research.bridge.retry_support``)."""

    round: int
    links: tuple[BridgeLink, ...]
    next: tuple[str, ...] = ()
    retry: bool = False
    second: tuple[str, ...] = ()


@dataclass
class QueryResult:
    """The hits of one query in one mode."""

    query: RoundQuery
    mode: SearchMode
    hits: list[SearchHit]


def best_first(passages: Iterable[Candidate]) -> list[Candidate]:
    """``passages`` by score, then the earlier round, then the chunk id (the evidence's one order)."""
    return sorted(passages, key=lambda c: (-c.score, c.first_round, c.chunk.chunk_id))


@dataclass
class ExecutorState:
    """Everything the executor knows: the plan, the current round's work, and what has accumulated."""

    plan: ResearchPlan
    round: int = 0  # 1-based once the first round starts
    subquestion: str = ""
    queries: list[RoundQuery] = field(default_factory=list)
    results: list[QueryResult] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)  # merged, then reranked, this round
    selected: list[Candidate] = field(default_factory=list)  # chosen this round
    new_evidence: int = 0
    evidence: dict[tuple[str, str], Candidate] = field(default_factory=dict)  # every round, by key
    # the first round's passages past its selection (research.selection.first_round_tail): the pack's, at the end
    tail: list[Candidate] = field(default_factory=list)
    subquery_evidence: dict[str, list[Candidate]] = field(default_factory=dict)
    coverage: AspectCoverage = field(default_factory=AspectCoverage)
    asked: list[str] = field(default_factory=list)  # sub-questions already run
    used_entities: list[str] = field(default_factory=list)
    used_parents: list[tuple[str, str]] = field(default_factory=list)  # passages already bridged from
    chain: list[ChainStep] = field(default_factory=list)  # the chain's hops run so far
    graph_bridges: list[str] = field(default_factory=list)  # entities the graph proposes for the next hop
    hop_choices: list[HopChoice] = field(default_factory=list)  # the LLM's next hops, one per round it ran
    beam: list[BeamEntry] = field(default_factory=list)  # bridge candidates read and not yet dropped
    beam_read: list[BeamEntry] = field(default_factory=list)  # every candidate the beam held, in order read
    # a reading's candidates past the beam's width (research.bridge.reserve), followed when a beam hop finds nothing
    beam_reserve: list[BeamEntry] = field(default_factory=list)
    bridge_hops: list[BridgeHop] = field(default_factory=list)  # each beam hop's followed chains, for the log
    skipped_queries: list[SkippedQuery] = field(default_factory=list)  # noisy follow-ups not run, by round
    no_novelty: int = 0
    top_keys: list[tuple[str, str]] = field(
        default_factory=list
    )  # the pack's top passages after the last round
    quality: float = 0.0  # best cosine between the question and the evidence (document-quality stopping)
    counts: dict[str, int] = field(default_factory=dict)  # before/after fusion and rerank this round
    reports: list[RoundReport] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # chunk_id -> unit vector (cache)
    done: bool = False
    stop_reason: str = ""
    skip_reason: str = ""  # set by the gate when the plan needs no retrieval

    def __post_init__(self) -> None:
        if not self.coverage.aspects:
            self.coverage.aspects = list(self.plan.aspects)

    def add_evidence(self, cand: Candidate) -> tuple[Candidate, bool]:
        """Hold ``cand`` (a copy) as evidence, or fold this finding of it into the passage already held: the
        best score, the latest fusion and rerank scores, and every selection, provenance and sub-question.
        Returns the held passage and whether it is new."""
        held = self.evidence.get(cand.key)
        if held is None:
            held = self.evidence[cand.key] = cand.model_copy(deep=True)
            return held, True
        held.score = max(held.score, cand.score)
        held.rrf = cand.rrf
        held.rerank = cand.rerank if cand.rerank is not None else held.rerank
        held.selections.extend(cand.selections)
        held.provenance.extend(cand.provenance)
        held.subquestions.extend(s for s in cand.subquestions if s not in held.subquestions)
        return held, False

    def skip(self, skipped: SkippedQuery) -> None:
        """Record a follow-up not run, for the report of the hop it would have named (``skipped.round``); a
        term already recorded in an earlier hop is not reported again."""
        if skipped.text.lower() not in {q.text.lower() for q in self.skipped_queries}:
            self.skipped_queries.append(skipped)

    def chain_passages(self, entry: BeamEntry, whole: bool = True) -> list[Candidate]:
        """The evidence passages ``entry``'s chain was read from: its own parent, then (``whole``) the parent of
        each candidate of its path as the beam read it (the hop before's, back to the first hop's)."""
        keys = [entry.parent]
        if whole:
            for i in range(len(entry.path) - 1, -1, -1):
                record = next(
                    (e for e in self.beam_read if e.name == entry.path[i] and e.path == entry.path[:i]), None
                )
                if record is not None and record.parent not in keys:
                    keys.append(record.parent)
        return [self.evidence[k] for k in keys if k in self.evidence]

    def best_evidence(self, n: int | None = None) -> list[Candidate]:
        """The evidence best first (the one order used everywhere): score, then the earlier round, then the
        chunk id; the first ``n`` when given."""
        ranked = best_first(self.evidence.values())
        return ranked if n is None else ranked[:n]
