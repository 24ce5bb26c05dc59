"""read_bridge: after the first hop, read the hop's candidate answers from its best passages and keep the best
few as a beam; after a beam hop, score each followed candidate by the evidence its queries found, drop the
losers and read the next hop's candidates from the winners' passages."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import replace

from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate, SkippedQuery
from deepcite.names import names_in
from deepcite.research.answer_types import bridges_a_nation, candidate_fit, wants_a_nation
from deepcite.research.bridge import read_bridge as read_candidates
from deepcite.research.bridge import relation_cues
from deepcite.research.chain import fill
from deepcite.research.followup import (
    DOCUMENT_TITLE,
    bearing_names,
    document_names,
    kind_reason,
    names_a_document,
    noise_reason,
    of_a_document,
)
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.nodes.select_evidence import page_named
from deepcite.research.state import BeamEntry, BridgeHop, BridgeLink, ExecutorState
from deepcite.research.vectors import passage_text, passage_words
from deepcite.retrieval.graph.extract import entity_key
from deepcite.text import tokenize


def _found_for(state: ExecutorState, name: str, prefix_min_words: int) -> list[Candidate]:
    """This round's selected passages reached by a query about ``name`` that name it (in their text, or as the
    page it names), most relevant first."""
    low = name.lower()
    found = [
        c
        for c in state.selected
        if any(p.focus == name for p in c.hits_in(state.round))
        and (low in c.chunk.text.lower() or page_named(c.chunk.title, name, prefix_min_words))
    ]
    return sorted(found, key=lambda c: -(c.selections[-1].relevance if c.selections else 0.0))


def step_relation(state: ExecutorState, depth: int) -> str | None:
    """The relation words of the hop whose answers a reading at ``depth`` looks for: that step of a decomposed
    question with its slots dropped ("performer of #1" -> "performer of"), or ``None`` (the whole question, as for
    the last step: its answer is the question's, no bridge)."""
    steps = state.plan.steps
    return fill(steps[depth - 1], {}) if 0 < depth < len(steps) else None


def max_depth(state: ExecutorState, adapters: Adapters) -> int:
    """Beam hops for the question: ``max_depth``, or for a question read as a chain of n steps (decomposed, or with
    ``chain_depth`` its length alone) up to n - 1 (``decompose_max_depth`` at most)."""
    s = adapters.settings.bridge
    steps = len(state.plan.steps) or state.plan.hops
    return max(s.max_depth, min(steps - 1, s.decompose_max_depth)) if steps else s.max_depth


def _support(
    state: ExecutorState,
    entry: BeamEntry,
    found: list[Candidate],
    weight: float,
    cues: bool = False,
    reading_weight: float = 0.0,
    spent: Collection[str] = (),
    spread: float = 1.0,
) -> float:
    """A followed candidate's support: its best passage's relevance plus ``weight`` times the share of the
    question's remaining words (those not ``spent``, the words of the passages its chain was read from:
    :meth:`~deepcite.research.state.ExecutorState.chain_passages`; in a decomposed question, the next step's
    words) that passage holds, plus ``reading_weight`` times the candidate's own reading score (its share
    of the best reading's) divided by ``spread`` (:func:`_spread`: a name the whole collection mentions says
    less by being read); with ``cues`` a word counts as held when one of its relation cues is
    (:func:`~deepcite.research.bridge.relation_cues`: "birthplace" by "born"). 0 when no passage was found."""
    if not found:
        return 0.0
    steps = state.plan.steps
    if entry.depth < len(steps):
        remaining = set(tokenize(fill(steps[entry.depth], {}))) - set(tokenize(entry.name))
    else:
        remaining = {t for t in tokenize(state.plan.question) if t not in spent} - set(tokenize(entry.name))
    best = 0.0
    for cand in found:
        held = set(tokenize(passage_text(cand.chunk)))
        hits = [r for r in remaining if r in held or (cues and relation_cues([r]) & held)]
        share = len(hits) / len(remaining) if remaining else 0.0
        best = max(best, (cand.selections[-1].relevance if cand.selections else 0.0) + weight * share)
    return best + reading_weight * entry.score / spread


def _spread(frequency: Mapping[str, int], name: str, power: float) -> float:
    """How widely the collection mentions ``name``: log2(2 + passages mentioning it) ** ``power`` (1 when
    ``power`` is 0). A hub ("United States", mentioned by hundreds of passages) is read from the passages of
    many chains, so its reading says less about this chain than a name few passages mention."""
    return math.log2(2 + frequency.get(entity_key(name), 0)) ** power if power else 1.0


def _read(
    state: ExecutorState,
    adapters: Adapters,
    passages: list[Candidate],
    depth: int,
    weight: float,
    spent: Collection[str] = (),
    path: tuple[str, ...] = (),
    reserve: int | None = None,
) -> list[BeamEntry]:
    """The beam read from ``passages``, each reading's score scaled to the best one times ``weight``; the
    question's ``spent`` words (those of the passages the chain was read from) are no relation words any more,
    unless the hop has a step of its own (:func:`step_relation`). ``path``: the candidates the readings follow on
    from. Up to ``beam + reserve`` readings (``research.bridge.reserve`` unless given), best first (:func:`_hold`
    splits them)."""
    s, followup = adapters.settings.bridge, adapters.settings.followup
    kept = s.reserve if reserve is None else reserve
    pages = adapters.titles.aliases(adapters.retriever)
    documents = _documents(state)

    def keep(name: str, title: bool) -> bool:  # noise never runs as a query, unless a page is known by it
        if name.rstrip().endswith(("?", "!")):  # a question or an exclamation is a sentence, not a name
            return False
        if _refused(state, name, documents):  # a file's name, a contraction, a release, a document: never
            return False
        return noise_reason(name, followup, title=title) is None or (not title and bool(pages.pages(name)))

    def readable(cand: Candidate) -> set[str] | None:
        """A document's names: those of its sentences on the question that are no noise of their passage (a
        label of its words, a cited author, a term it defines), as the follow-ups read a document."""
        if not of_a_document(cand.chunk):
            return None
        text, share = cand.chunk.text, followup.document_name_min_question_share
        return {  # what a term is, keep() refuses and reports
            n.lower()
            for n in bearing_names(cand.chunk, state.plan.question, share)
            if kind_reason(n) or noise_reason(n, followup, context=text) is None
        }

    wanted = state.plan.answer_types
    types = adapters.titles.page_types(adapters.retriever, s.type_lead_words) if wanted else {}

    relation = step_relation(state, depth)
    readings = read_candidates(
        state.plan.question,
        passages,
        relation=relation,
        spent=spent if relation is None else set(),
        exclude=[*state.used_entities, *(e.name for e in state.beam)],
        pages=pages,
        keep=keep,
        frequency=adapters.titles.frequency(adapters.retriever),
        own_aliases=(adapters.settings.ranking.alias_max_words, adapters.settings.ranking.alias_lead_chars),
        fit=candidate_fit(wanted, pages, types) if wanted else None,
        readable=readable,
        demonyms=s.demonyms and wants_a_nation(state.plan.question),
        topic=names_in(state.plan.question) if depth == 1 and not path else (),
        settings=s.model_copy(update={"beam": s.beam + kept}) if kept else s,
    )
    top = readings[0].score if readings else 1.0
    return [BeamEntry(r.name, weight * r.score / top, r.parent, depth=depth, path=path) for r in readings]


def _documents(state: ExecutorState) -> frozenset[str]:
    """What names the documents the research has met (:func:`~deepcite.research.followup.document_names`)."""
    return document_names(c.chunk for c in [*state.evidence.values(), *state.candidates])


def _refused(state: ExecutorState, name: str, documents: frozenset[str]) -> bool:
    """Whether ``name`` may never name a hop, whoever read it: what it is (a file's name, a contraction, a release
    tag: :func:`~deepcite.research.followup.kind_reason`) or a name of one of ``documents``. A refused name is
    reported for the hop it would have named, the next one."""
    reason = kind_reason(name) or (DOCUMENT_TITLE if names_a_document(name, documents) else None)
    if reason is not None:
        state.skip(SkippedQuery(text=name, reason=reason, round=state.round + 1))
    return reason is not None


def _chosen_entry(state: ExecutorState, depth: int, path: tuple[str, ...]) -> list[BeamEntry]:
    """The entity the LLM chose to follow after this round (node ``choose_next_hop``) as one more branch of the
    beam, read from the best evidence with the best reading's score: the next round follows and scores it like
    the others, and it drops out if its evidence loses. None when there is no such choice, the beam or an
    earlier hop already has the entity, or it may name no hop (:func:`_refused`: a document's title, a file
    name, a contraction, a release tag)."""
    choice = state.hop_choices[-1] if state.hop_choices else None
    if choice is None or choice.round != state.round or choice.answered or not choice.entity.strip():
        return []
    name = choice.entity.strip()
    if name.lower() in {n.lower() for n in [*state.used_entities, *(e.name for e in state.beam)]}:
        return []
    if _refused(state, name, _documents(state)):
        return []
    best = state.best_evidence(1)
    return [BeamEntry(name, 1.0, best[0].key, depth=depth, path=path)] if best else []


def _hold(state: ExecutorState, readings: list[BeamEntry], width: int, reserve: int) -> None:
    """The best ``width`` of ``readings`` (best first) join the beam, each name once; the next ``reserve`` not in
    the beam or followed already are the reserve, which replaces the one of the reading before."""
    held = {e.name.lower() for e in state.beam} | {n.lower() for n in state.used_entities}
    state.beam_reserve = []
    for entry in readings:
        if entry.name.lower() in held:
            continue
        held.add(entry.name.lower())
        if sum(e.followed_round == 0 for e in state.beam) < width:
            state.beam.append(entry)
            state.beam_read.append(replace(entry))
        elif len(state.beam_reserve) < reserve:
            state.beam_reserve.append(entry)


def _first_reserve(s: BridgeSettings) -> int:
    """The first reading's candidates kept past the beam: ``reserve`` for a hop that finds nothing to go on, or
    ``retry_width`` for a first hop of weak support (``retry_support``), whichever is more."""
    return max(s.reserve, s.retry_width if s.retry_support else 0)


def _second_try(
    state: ExecutorState, s: BridgeSettings, followed: list[BeamEntry], best: float
) -> list[BeamEntry]:
    """What to try beside the winners when the first beam hop's best support is above 0 but under ``retry_support``
    (its candidates' queries found little that names them and holds the question's other words): the first
    reading's next-best candidates (its reserve, ``retry_width``), where the first hop's answer often stands
    further down, and each name the question gives (``retry_names``: its own page may hold the first hop's answer
    where the round's passages did not), followed like candidates read from the round's best passage, with that
    reading score. None past the first beam hop, or when no candidate found anything (``reserve`` handles that)."""
    if not s.retry_support or not 0 < best < s.retry_support or any(e.depth != 1 for e in followed):
        return []
    tried = state.beam_reserve[: s.retry_width]
    top = state.best_evidence(1)
    if s.retry_names and top:
        names = (n.removesuffix("'s").removesuffix("\u2019s") for n in names_in(state.plan.question))
        tried = [*tried, *(BeamEntry(n, s.retry_names, top[0].key, depth=1) for n in names)]
    return tried


def _join(state: ExecutorState, entries: list[BeamEntry]) -> list[BeamEntry]:
    """``entries`` join the beam, each name the beam or an earlier hop does not have already; those that joined."""
    held = {e.name.lower() for e in state.beam} | {n.lower() for n in state.used_entities}
    joined = [e for e in entries if e.name.lower() not in held]
    state.beam.extend(joined)
    state.beam_read.extend(replace(e) for e in joined)
    return joined


def _recorded(state: ExecutorState, entry: BeamEntry) -> None:
    """The round that followed ``entry`` and its support, set on its record in ``beam_read`` (the copy taken when it
    was read, which the pack reports as its bridge candidates)."""
    for record in state.beam_read:
        if (record.name, record.depth, record.path) == (entry.name, entry.depth, entry.path):
            record.followed_round, record.support = entry.followed_round, entry.support
            return


def _retry(state: ExecutorState, width: int) -> list[BeamEntry]:
    """A beam hop found nothing to go on: the next-best ``width`` candidates of the reserve join the beam (they
    are followed next round, at the depth they were read for); the others stay in reserve."""
    retried, state.beam_reserve = state.beam_reserve[:width], state.beam_reserve[width:]
    state.beam.extend(retried)
    state.beam_read.extend(replace(e) for e in retried)
    return retried


@node(
    reads=(
        "plan",
        "round",
        "selected",
        "beam",
        "used_entities",
        "evidence",
        "beam_read",
        "hop_choices",
        "candidates",
        "skipped_queries",
        "beam_reserve",
        "bridge_hops",
    ),  # fmt: skip
    writes=("beam", "evidence", "beam_read", "skipped_queries", "beam_reserve", "bridge_hops"),
)
def read_bridge(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """With ``research.bridge.enabled``: after round 1, the beam is the best ``bridge.beam`` candidate answers
    read from the round's best passages (:func:`deepcite.research.bridge.read_bridge`). After the round that
    followed the beam, each candidate's support is the relevance of the best passage found for it that names it,
    plus ``support_residual_weight`` times the share of the question's remaining words it holds (with
    ``spent_chain``, those no passage of its chain holds); those under ``drop_ratio`` of the best drop out (their
    new passages' pack scores times ``loser_decay``), and, until ``max_depth`` beam hops ran, the next beam is read
    from the winners' passages, each reading weighed by its winner's support, its chain's words spent
    (``spent_chain``). The entity an LLM chose to follow (``research.next_hop``) joins each newly read beam as a
    branch of its own (:func:`_chosen_entry`). A hop that finds nothing to go on (no winner, or no new candidate in
    the winners' passages) follows the next-best candidates of the reading before instead (``reserve``); a first
    beam hop of weak support (its best under ``retry_support``) follows the first reading's next-best candidates
    beside its winners' next reading (:func:`_second_try`). Each beam hop's followed chains are recorded for the
    hop log (``bridge_hops``)."""
    s = adapters.settings.bridge
    if not s.enabled:
        return state
    if state.round == 1:
        passages = state.selected
        if state.plan.steps and s.step_passages_first:  # the innermost step's own finds hold its answer
            passages = sorted(passages, key=lambda c: not any(p.kind == "chain" for p in c.hits_in(1)))
        if max_depth(state, adapters):
            kept = _first_reserve(s)
            _hold(state, _read(state, adapters, passages, depth=1, weight=1.0, reserve=kept), s.beam, kept)
            for entry in _chosen_entry(state, depth=1, path=()):
                state.beam.append(entry)
                state.beam_read.append(replace(entry))  # a record: later rounds update the beam's own
        return state
    followed = [e for e in state.beam if e.followed_round == state.round]
    if not followed:
        return state
    prefix_min_words = adapters.settings.ranking.alias_prefix_min_words
    found = {e.name: _found_for(state, e.name, prefix_min_words) for e in followed}
    if (
        s.own_page
    ):  # a candidate read from its own page goes on from that page (a bridge hop never reselects it)
        for e in followed:
            own = state.evidence.get(e.parent)
            if own is not None and page_named(own.chunk.title, e.name, prefix_min_words):
                found[e.name] = [own, *(c for c in found[e.name] if c.key != own.key)]
    # the words of the passages each chain was read from: its own parent's, or (spent_chain) every hop's
    spent = {e.name: passage_words(state.chain_passages(e, s.spent_chain)) for e in followed}
    spares = s.support_spare_nations and bridges_a_nation(state.plan.question)
    frequency = adapters.titles.frequency(adapters.retriever) if s.support_specificity and not spares else {}
    for e in followed:
        e.support = _support(
            state,
            e,
            found[e.name],
            s.support_residual_weight,
            s.relation_cues,
            s.support_reading_weight,
            spent[e.name],
            _spread(frequency, e.name, s.support_specificity),
        )
        _recorded(state, e)
    best = max(e.support for e in followed)
    winners = [e for e in followed if best > 0 and e.support >= s.drop_ratio * best]
    second = _second_try(state, s, followed, best)
    if s.loser_decay != 1.0:
        kept = {c.key for e in winners for c in found[e.name]}
        for e in followed:
            if e in winners:
                continue
            for cand in found[e.name]:
                held = state.evidence.get(cand.key)
                if held is not None and cand.key not in kept and held.first_round == state.round:
                    held.score *= s.loser_decay
    state.beam = [e for e in state.beam if e.followed_round == 0]
    links = tuple(
        BridgeLink(
            path=(*e.path, e.name),
            title=found[e.name][0].chunk.title if found[e.name] else None,
            support=e.support,
            kept=e in winners,
        )
        for e in followed
    )
    if winners and max(e.depth for e in winners) >= max_depth(state, adapters):
        state.bridge_hops.append(BridgeHop(state.round, links))
        return state
    following: list[BeamEntry] = []
    for e in winners:
        following.extend(
            _read(
                state,
                adapters,
                found[e.name],
                depth=e.depth + 1,
                weight=e.support / best,
                spent=spent[e.name],
                path=(*e.path, e.name),
            )
        )
    following.sort(key=lambda e: -e.score)
    if not following:  # nothing to go on: the next-best candidates of the reading before, if any are left
        if not s.reserve:  # the first reading's reserve waits for a first hop of weak support only
            state.beam_reserve = second
        retried = _retry(state, s.beam)
        state.bridge_hops.append(BridgeHop(state.round, links, tuple(e.name for e in retried), bool(retried)))
        return state
    _hold(state, following, s.beam, s.reserve)  # two winners may read the same name: it is followed once
    tried = _join(state, second)
    top = max(winners, key=lambda e: e.support)
    for entry in _chosen_entry(state, depth=top.depth + 1, path=(*top.path, top.name)):
        state.beam.append(entry)
        state.beam_read.append(replace(entry))
    state.bridge_hops.append(
        BridgeHop(
            state.round,
            links,
            tuple(e.name for e in state.beam if e.followed_round == 0),
            second=tuple(e.name for e in tried),
        )
    )
    return state
