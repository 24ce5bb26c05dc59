"""The query planner: aspects and sub-questions, and the next hop's sub-question.

    planner = QueryPlanner()
    plan = planner.plan("compare statins and PCSK9 inhibitors")
    [a.aspect for a in plan.aspects]   # ['compare statins and PCSK9 inhibitors', 'statins', 'PCSK9 inhibitors']

Offline everything is heuristic. With an LLM client the LLM extracts aspects and proposes the next
sub-question; any LLM failure falls back to the heuristic and is recorded in the state's ``errors``.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from deepcite.config import ResearchSettings
from deepcite.llm.client import LLMClient
from deepcite.llm.deadline import note_written
from deepcite.models import ChainStep, Filters, QueryAspect, question_parts
from deepcite.research import llm_adapters
from deepcite.research.answer_types import wanted_types
from deepcite.research.aspects import heuristic_aspects, keywords_of, subquestion_for
from deepcite.research.chain import decompose, fill, is_linear, llm_decompose
from deepcite.research.followup import document_names
from deepcite.research.followup_terms import followup_subquestion, followup_terms
from deepcite.research.intake import intake
from deepcite.research.state import BeamEntry, ExecutorState, ResearchPlan, RoundQuery
from deepcite.research.vectors import passage_text
from deepcite.text import tokenize

log = logging.getLogger(__name__)


class QueryPlanner:
    """Plans aspects and sub-questions, and proposes each hop's sub-question and queries. Whether a hop
    runs at all is the ``should_continue`` node's decision."""

    def __init__(
        self, *, settings: ResearchSettings | None = None, llm_client: LLMClient | None = None
    ) -> None:
        self.settings = settings or ResearchSettings()
        self.llm = llm_client

    # -- planning -----------------------------------------------------------------------------------
    def plan(
        self, question: str, *, filters: Filters | None = None, errors: list[str] | None = None
    ) -> ResearchPlan:
        """Intake, aspects and the planned sub-questions of ``question`` (the question itself comes first)."""
        taken = intake(question, max_chars=self.settings.planning.max_question_chars, filters=filters)
        aspects: list[QueryAspect] | None = None
        if self.llm is not None:
            try:
                llm = self.llm
                aspects = llm_adapters.noted(
                    "plan", lambda: llm_adapters.llm_aspects(llm, taken.question, self.settings)
                )
            except Exception as exc:  # noqa: BLE001 - any LLM failure falls back to the heuristic
                message = (
                    f"LLM aspect extraction failed ({type(exc).__name__}: {exc}); used heuristic aspects"
                )
                log.log(llm_adapters.failure_level(exc), message)
                if errors is not None:
                    errors.append(message)
        aspects = aspects or heuristic_aspects(taken.question, self.settings)
        subquestions = [taken.question]
        for aspect in sorted(aspects, key=lambda a: -a.importance):
            sub = subquestion_for(aspect)
            if set(keywords_of(sub)) != set(keywords_of(taken.question)) and sub not in subquestions:
                subquestions.append(sub)
        bridge = self.settings.bridge
        decomposed = (
            self._decompose(taken.question, errors)
            if self.settings.chain.enabled or (bridge.enabled and (bridge.decompose or bridge.chain_depth))
            else []
        )
        return ResearchPlan(
            intake=taken,
            aspects=aspects,
            subquestions=subquestions,
            needs_retrieval=bool(keywords_of(taken.question)),
            chain=decomposed if self.settings.chain.enabled else [],
            steps=decomposed if bridge.enabled and bridge.decompose and self._followable(decomposed) else [],
            answer_types=(
                wanted_types(taken.question)
                if bridge.enabled and (bridge.type_weight or bridge.type_mismatch_weight)
                else ()
            ),
            hops=len(decomposed) if bridge.enabled and bridge.chain_depth else 0,
        )

    def _followable(self, steps: list[str]) -> bool:
        """Whether the beam can follow a chain: linear (:func:`~deepcite.research.chain.is_linear`), and no step
        before the last longer than ``bridge.step_max_words`` (a long one is a misread clause)."""
        limit = self.settings.bridge.step_max_words
        return is_linear(steps) and all(len(step.split()) <= limit for step in steps[:-1])

    def _decompose(self, question: str, errors: list[str] | None) -> list[str]:
        """The question's chain of steps: the LLM's (``bridge.llm_decompose``, when one is configured), else
        or on any LLM failure the rules' (:func:`~deepcite.research.chain.decompose`). An LLM that sees one hop
        where the rules read a chain does not erase it: the rules' chain is used, noted as written offline."""
        max_hops = self.settings.stopping.max_hops
        if self.llm is not None and self.settings.bridge.llm_decompose:
            llm = self.llm
            try:
                steps = llm_adapters.noted(
                    "decompose", lambda: llm_decompose(llm, question, max_hops=max_hops)
                )
            except Exception as exc:  # noqa: BLE001 - any LLM failure falls back to the rules
                message = f"LLM decomposition failed ({type(exc).__name__}: {exc}); used the rules' chain"
                log.log(llm_adapters.failure_level(exc), message)
                if errors is not None:
                    errors.append(message)
            else:
                if steps:
                    return steps
                rules = decompose(question, max_hops=max_hops)
                if rules:  # the LLM saw one hop where the question's own structure chains two: the chain is
                    # kept (a wrong chain costs the beam a branch; a chain not followed loses every later hop)
                    log.info("the LLM saw one hop in %r; used the rules' chain %r", question[:120], rules)
                    note_written("decompose", "offline", "the LLM saw one hop where the question chains")
                return rules
        return decompose(question, max_hops=max_hops)

    # -- the next hop -------------------------------------------------------------------------------
    def next_hop(self, state: ExecutorState) -> tuple[str, list[RoundQuery]] | None:
        """The next sub-question and its base queries, or ``None`` when nothing new is left to ask.

        Hop 1 asks the question (and a composed question's first chain hop). Later hops ask, in order:
        the composed question's next chain hop while the last one found an answer entity, the entities
        the graph proposed (``propose_bridge_queries``), the parts of a question of several parts (uncovered
        ones first), the bridge candidates of the beam (``read_bridge``), the planned sub-questions of the
        aspects (uncovered ones first, by importance), then a bridge hop built from entities found in the
        evidence so far. With an LLM, the query it chose after the last round (``choose_next_hop``), or else
        the sub-question it proposes, joins whichever hop that is, or makes the hop alone when nothing else
        is left: the LLM adds to the offline hops and never takes one's place.
        """
        plan = state.plan
        if not state.asked:
            queries = [RoundQuery(plan.question, plan.question)]
            if plan.chain:
                queries.extend(self._chain_queries(state, plan.question))
            elif plan.steps:  # the innermost step of a decomposed question, whose answer the beam reads
                queries.append(RoundQuery(plan.steps[0], plan.steps[0], kind="chain"))
            return plan.question, queries
        chosen = _chosen_query(state)
        if chosen is None and self.llm is not None:
            proposed = self._llm_next(state)
            chosen = RoundQuery(proposed, proposed) if proposed else None
        hop = self._planned_hop(state)
        if chosen is None:
            return hop
        if hop is None:
            return chosen.text, [chosen]
        sub, queries = hop
        return sub, [*queries, replace(chosen, subquestion=sub)]

    def _planned_hop(self, state: ExecutorState) -> tuple[str, list[RoundQuery]] | None:
        """The next offline hop of :meth:`next_hop` after the first."""
        plan = state.plan
        if state.chain and len(state.chain) < len(plan.chain) and state.chain[-1].answers:
            queries = self._chain_queries(state, "")
            return queries[0].subquestion, queries
        if state.graph_bridges:
            return self._graph_hop(state)
        threshold = self.settings.coverage.threshold
        uncovered = {a.aspect for a in state.coverage.get_uncovered_aspects(threshold)}
        parts = question_parts(plan.aspects)
        if len(parts) > 1:  # a question of several parts: each part asked before any bridge is followed
            hop = _aspect_hop(state, sorted(parts, key=lambda a: a.aspect not in uncovered))
            if hop is not None:
                return hop
        if self.settings.bridge.enabled and any(e.followed_round == 0 for e in state.beam):
            return self._beam_hop(state)
        ordered = sorted(plan.aspects, key=lambda a: (a.aspect not in uncovered, -a.importance))
        return _aspect_hop(state, ordered) or self._bridge_hop(state)

    def _chain_queries(self, state: ExecutorState, subquestion: str) -> list[RoundQuery]:
        """The next chain hop's queries, one per answer entity of the hop before (``research.chain.beam``),
        each searched in the configured modes; the hop is recorded in ``state.chain``."""
        template = state.plan.chain[len(state.chain)]
        best = {n: hop.answers[0] for n, hop in enumerate(state.chain, start=1) if hop.answers}
        step = ChainStep(template=template, query=fill(template, best), round=state.round + 1)
        state.chain.append(step)
        sub = subquestion or step.query
        if len(state.chain) == 1:
            return [RoundQuery(step.query, sub, kind="chain")]
        queries = []
        for answer in state.chain[-2].answers[: self.settings.chain.beam]:
            text = fill(template, {**best, len(state.chain) - 1: answer})
            queries.append(RoundQuery(text, sub, kind="chain", focus=answer))
        return queries

    def _beam_hop(self, state: ExecutorState) -> tuple[str, list[RoundQuery]]:
        """Follow each bridge candidate of the beam not yet followed (``read_bridge``): its name
        (``bridge_modes``, ``research.bridge.name_k`` hits, with the pages it names), and its name with the
        question's words the passage it was read from lacks (``research.bridge.residual_k`` hits in the
        configured modes), or, in a decomposed question, the next step with the candidate in its slot
        (:func:`next_step`, ``step_k`` hits). They count as followed entities."""
        s = self.settings
        pending = [e for e in state.beam if e.followed_round == 0]
        words = keywords_of(state.plan.question)
        queries: list[RoundQuery] = []
        for entry in pending:
            entry.followed_round = state.round + 1
            queries.append(
                RoundQuery(
                    entry.name,
                    "",
                    kind="bridge",
                    parent=entry.parent,
                    modes=list(s.retrieval.bridge_modes),
                    focus=entry.name,
                    k=s.bridge.name_k or None,
                )
            )
            step = next_step(state.plan.steps, entry)
            if step:  # the next step of a decomposed question, the candidate in its slot
                queries.append(
                    RoundQuery(
                        step,
                        "",
                        kind="bridge",
                        parent=entry.parent,
                        focus=entry.name,
                        k=s.bridge.step_k,
                    )
                )
                if not s.bridge.step_residual:
                    continue
            parent = state.evidence.get(entry.parent)
            held = set(tokenize(passage_text(parent.chunk))) if parent is not None else set()
            held |= set(tokenize(entry.name))
            residual = [w for w in words if not set(tokenize(w)) <= held]
            if residual and s.bridge.residual_k:
                queries.append(
                    RoundQuery(
                        f"{entry.name} {' '.join(residual)}",
                        "",
                        kind="bridge",
                        parent=entry.parent,
                        focus=entry.name,
                        k=s.bridge.residual_k,
                    )
                )
        names = [e.name for e in pending]
        state.used_entities.extend(names)
        sub = followup_subquestion(names[: s.planning.bridge_entities_in_label])
        for q in queries:
            q.subquestion = sub
        return sub, queries

    def _graph_hop(self, state: ExecutorState) -> tuple[str, list[RoundQuery]]:
        """Search each entity the graph proposed by name (``bridge_modes``); they count as followed."""
        s = self.settings
        entities, state.graph_bridges = state.graph_bridges, []
        state.used_entities.extend(entities)
        sub = followup_subquestion(entities[: s.planning.bridge_entities_in_label])
        return sub, [
            RoundQuery(e, sub, kind="graph", modes=list(s.retrieval.bridge_modes), focus=e) for e in entities
        ]

    def _llm_next(self, state: ExecutorState) -> str | None:
        assert self.llm is not None
        threshold = self.settings.coverage.threshold
        llm, planning = self.llm, self.settings.planning
        try:
            proposed = llm_adapters.noted(
                "next sub-question",
                lambda: llm_adapters.llm_next_subquestion(
                    llm,
                    state.plan.question,
                    [a.aspect for a in state.coverage.get_uncovered_aspects(threshold)],
                    [c.chunk.text for c in state.best_evidence(planning.bridge_parents_per_hop)],
                    state.asked,
                    min_shared_terms=planning.llm_min_shared_terms,
                    max_chars=planning.max_query_chars,
                ),
            )
        except Exception as exc:  # noqa: BLE001 - any LLM failure falls back to the heuristic
            state.errors.append(
                f"LLM next sub-question failed ({type(exc).__name__}: {exc}); used heuristic hop"
            )
            return None
        if not proposed or proposed in state.asked:
            return None
        return proposed

    def _bridge_hop(self, state: ExecutorState) -> tuple[str, list[RoundQuery]] | None:
        """Follow the entities and noun phrases of the best passages not yet bridged from
        (:func:`~deepcite.research.followup_terms.followup_terms`): each is searched by name (``bridge_modes``), and
        each parent adds a residual query of the question's words it lacks. Candidates that would be noise are
        not searched; they are recorded in ``state.skipped_queries`` for the report."""
        s = self.settings
        question = state.plan.question
        parents = [c for c in state.best_evidence() if c.key not in state.used_parents][
            : s.planning.bridge_parents_per_hop
        ]
        queries: list[RoundQuery] = []
        followed: list[str] = []
        words = keywords_of(question)
        evidence = " ".join(c.chunk.text for c in state.evidence.values())
        documents = document_names(c.chunk for c in state.evidence.values())
        for parent in parents:
            found = followup_terms(
                parent,
                question,
                exclude=state.used_entities,
                evidence=evidence,
                documents=documents,
                per_passage=s.planning.bridge_names_per_passage,
                settings=s.followup,
            )
            for skip in found.skipped:
                state.skip(skip.model_copy(update={"round": state.round + 1}))
            if not found.terms:
                continue
            state.used_parents.append(parent.key)
            state.used_entities.extend(found.terms)
            followed.extend(found.terms)
            queries.extend(
                RoundQuery(
                    e, "", kind="bridge", parent=parent.key, modes=list(s.retrieval.bridge_modes), focus=e
                )
                for e in found.terms
            )
            held = set(tokenize(passage_text(parent.chunk)))
            residual = [w for w in words if not set(tokenize(w)) <= held]
            if residual:
                queries.append(
                    RoundQuery(" ".join(residual), "", kind="residual", parent=parent.key, modes=["bm25"])
                )
        if not queries:
            return None
        sub = followup_subquestion(followed[: s.planning.bridge_entities_in_label])
        for q in queries:
            q.subquestion = sub
        return sub, queries


def next_step(steps: list[str], entry: BeamEntry) -> str:
    """The step of a decomposed question that follows a candidate: the step after the one it answers, its
    slots filled with the candidate and the candidates before it ("" past the last step)."""
    if entry.depth >= len(steps):
        return ""
    answers = {n: name for n, name in enumerate((*entry.path, entry.name), start=1)}
    return fill(steps[entry.depth], answers)


def _aspect_hop(state: ExecutorState, aspects: list[QueryAspect]) -> tuple[str, list[RoundQuery]] | None:
    """The planned sub-question of the first of ``aspects`` not asked yet, as a hop; ``None`` when all were."""
    for aspect in aspects:
        sub = subquestion_for(aspect)
        if sub in state.plan.subquestions and sub not in state.asked:
            return sub, [RoundQuery(sub, sub, kind="aspect", focus=aspect.aspect)]
    return None


def _chosen_query(state: ExecutorState) -> RoundQuery | None:
    """The query the LLM chose after the round just run, unless it judged the question answered or chose a
    query it chose before."""
    if not state.hop_choices or state.hop_choices[-1].round != state.round:
        return None
    choice = state.hop_choices[-1]
    earlier = {c.next_query.lower() for c in state.hop_choices[:-1]} | {a.lower() for a in state.asked}
    if choice.answered or not choice.next_query or choice.next_query.lower() in earlier:
        return None
    return RoundQuery(choice.next_query, choice.next_query, kind="next_hop", focus=choice.entity or None)
