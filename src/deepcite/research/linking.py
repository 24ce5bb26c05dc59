"""The evidence pack's final order: each passage judged against the whole question and through the passages
it links to, so a multi-hop chain's later links (the bridge passage, which shares few words with the
question) rise beside the passage that names them.

A passage's relevance is ``dense_weight`` times its cosine to the question, plus ``title_weight`` when the
question names its title, plus ``pack_weight / (pack_k + rank)`` for its place in the pack the rounds built.
Two passages are linked when one mentions the other's title or another of its page's aliases (``title_link``;
"West Chicago" links to the document "West Chicago, Illinois"), when one mentions a longer form of such an
alias ("West Chicago High School": an alias link, ``alias_link_weight``), when one mentions the subject of the
other's page (a title "History of Maryland" and a passage naming Maryland: a subject link, ``subject_link_weight``)
or both mention the same name (``shared_name``). A passage then scores its
relevance plus the best of ``link_weight`` times a title-linked passage's score and ``shared_name_weight``
times a name-sharing passage's score; ``iterations`` rounds of this carry a chain's score down its links.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from deepcite.config import EvidenceRankingSettings
from deepcite.models import Candidate, Chunk, EvidenceLink
from deepcite.retrieval.graph.aliases import page_aliases, prefixes
from deepcite.retrieval.graph.extract import entity_key, name_keys

_MAX_NAMES = 64  # names read from one passage when linking (a passage rarely holds more)
_KEYS_CACHE = 8_192  # passages whose title and name keys are kept


@dataclass(frozen=True)
class _Keys:
    """A passage's own title keys (its page's aliases: the whole title, its head before a comma, its lead
    name), the names it mentions, and the shorter forms those names open with (``alias_prefix_min_words``
    words or more: "west chicago" of "west chicago high school")."""

    titles: frozenset[str]
    names: frozenset[str]
    prefixes: frozenset[str] = frozenset()
    subjects: frozenset[str] = frozenset()  # the name its page is about, when its title is not that name


def _keys(chunk: Chunk, settings: EvidenceRankingSettings) -> _Keys:
    lead = chunk.text if chunk.position == 0 else ""
    return _title_and_name_keys(
        chunk.title.strip(),
        lead,
        chunk.text,
        settings.alias_max_words,
        settings.alias_lead_chars,
        settings.alias_prefix_min_words if settings.alias_link_weight > 0 else 0,
        tuple(settings.subject_link_words) if settings.subject_link_weight > 0 else (),
    )


@lru_cache(
    maxsize=_KEYS_CACHE
)  # the pack is ordered after every round (stopping.novelty_top_k) and at the end
def _title_and_name_keys(
    title: str,
    lead: str,
    text: str,
    max_words: int,
    lead_chars: int,
    prefix_min_words: int,
    subject_words: tuple[str, ...] = (),
) -> _Keys:
    titles = set(page_aliases(title, lead, max_words=max_words, lead_chars=lead_chars))
    names = name_keys(text, max_entities=_MAX_NAMES)
    shorter = (
        {p for n in names if " " in n for p in prefixes(n, prefix_min_words)[1:]}
        if prefix_min_words
        else set()
    )
    subjects = {title_subject(title, subject_words)} - titles - {""}
    return _Keys(
        titles=frozenset(titles),
        names=names,
        prefixes=frozenset(shorter - names),
        subjects=frozenset(subjects),
    )


def title_subject(title: str, words: Sequence[str]) -> str:
    """The name a page is about when its title is an aspect of it (``words``: the words that join an aspect to its
    subject): the key of what follows the first of them in the title's head before a comma or a "(...)"
    ("History of Maryland": "maryland"; "Botanical Garden of the University of Vienna": "university of vienna");
    "" when the title has none of them."""
    head = title.split(" (")[0].split(",")[0]
    padded = f" {head} "
    at = min((padded.find(f" {w} ") for w in words if f" {w} " in padded), default=-1)
    if at < 0:
        return ""
    rest = padded[at + 1 :].split(" ", 1)[1]
    return entity_key(rest)


def _names_title(question_key: str, titles: frozenset[str]) -> bool:
    """Whether the question (as an entity key) holds one of the passage's title keys as whole words."""
    padded = f" {question_key} "
    return any(f" {t} " in padded for t in titles)


def _link(a: _Keys, b: _Keys, bridges: frozenset[str] = frozenset()) -> tuple[str, str, bool, bool] | None:
    """How passage ``a`` links to ``b``: ``(edge, entity, a names b, b names a)``, a title link before an alias link
    (a name's shorter form is the other's alias) before a subject link (a name is the subject of the other's page:
    :func:`title_subject`) before a shared bridge name (one of ``bridges``) before another
    shared name, or ``None``; the two flags say which passage names the other's page (both for a shared name).
    Of several, the longest name, then the first in alphabetical order (a set's own order changes from process
    to process, and the name chosen sets the link's weight)."""
    for edge, forward, backward in (
        ("title_link", a.names & b.titles, b.names & a.titles),
        ("alias_link", a.prefixes & b.titles, b.prefixes & a.titles),
        ("subject_link", a.names & b.subjects, b.names & a.subjects),
    ):
        if forward or backward:
            names = forward or backward
            return (
                edge,
                min(names) if edge == "title_link" else _longest(names),
                bool(forward),
                bool(backward),
            )
    shared = a.names & b.names
    if shared & bridges:
        return "bridge_name", _longest(shared & bridges), True, True
    if shared:
        return "shared_name", _longest(shared), True, True
    return None


def _longest(names: frozenset[str]) -> str:
    """The longest of ``names``; of equal length, the first in alphabetical order."""
    return min(names, key=lambda name: (-len(name), name))


def _damped(weight: float, shared: int, mentions: int, spread: float, specificity: float) -> float:
    """A link ``weight`` through a name ``shared`` passages of the pack name and ``mentions`` passages of the
    collection mention: divided by ``(shared - 1) ** spread`` and by ``(log2(2 + mentions) / 2) **
    specificity``, neither divisor under 1."""
    weight /= max(1, shared - 1) ** spread
    return weight / max(1.0, math.log2(2 + mentions) / 2) ** specificity


def bridge_link_weights(
    bridges: Mapping[str, int], keys: Sequence[_Keys], settings: EvidenceRankingSettings
) -> dict[str, float]:
    """Each bridge name's link weight, by its entity key: ``bridge_link_weight``, divided by ``(n - 1) **
    bridge_link_spread`` for a name ``n`` of the passages share and by ``(log2(2 + m) / 2) **
    bridge_link_specificity`` for one ``m`` passages of the collection mention, never under
    ``shared_name_weight``; a name fewer than two passages share links nothing and is left out."""
    if not settings.bridge_link_weight:
        return {}
    out: dict[str, float] = {}
    for name, mentions in bridges.items():
        key = entity_key(name)
        shared = sum(key in k.names for k in keys) if key else 0
        if shared < 2:
            continue
        weight = _damped(
            settings.bridge_link_weight,
            shared,
            mentions,
            settings.bridge_link_spread,
            settings.bridge_link_specificity,
        )
        out[key] = max(out.get(key, 0.0), weight, settings.shared_name_weight)
    return out


def _hub_link_weights(
    links: Sequence[Sequence[tuple[int, str, str, bool]]],
    keys: Sequence[_Keys],
    frequency: Mapping[str, int],
    settings: EvidenceRankingSettings,
) -> dict[tuple[str, str], float]:
    """The weight of each title, alias or subject link through a name that many passages mention: ``link_weight``
    (``alias_link_weight``, ``subject_link_weight``) divided by ``(n - 1) ** link_spread`` for a name ``n`` of the pack's passages
    mention and by ``(log2(2 + m) / 2) ** link_specificity`` for one ``m`` passages of the collection mention,
    never under ``shared_name_weight``. A page every passage names ("United States") is a hub, not a chain's
    next link. Empty when both exponents are 0."""
    if not settings.link_spread and not settings.link_specificity:
        return {}
    base = {
        "title_link": settings.link_weight,
        "alias_link": settings.alias_link_weight,
        "subject_link": settings.subject_link_weight,
    }
    out: dict[tuple[str, str], float] = {}
    for linked in links:
        for _, edge, entity, _ in linked:
            if edge not in base or (edge, entity) in out:
                continue
            named = sum(entity in k.names or entity in k.prefixes for k in keys)
            weight = _damped(
                base[edge], named, frequency.get(entity, 0), settings.link_spread, settings.link_specificity
            )
            out[(edge, entity)] = max(weight, min(settings.shared_name_weight, base[edge]))
    return out


def _covering_order(
    question: str,
    keys: Sequence[_Keys],
    scores: np.ndarray,
    weight: float,
    hops: Sequence[frozenset[tuple[str, int]]] = (),
    hop_weights: Mapping[str, float] | None = None,
) -> tuple[list[int], np.ndarray]:
    """The order of the passages and their scores: each place goes to the passage with the best score plus
    ``weight`` for each name of the question it mentions or is the page of, and ``hop_weights[kind]`` for each beam
    hop it stands for in that kind (``hops``: per passage, ``(kind, depth)``: ``found`` by the hop's answer's
    queries, or that answer's ``page``), that no passage placed above it does; that sum becomes its score (so the
    scores still fall down the order). The pack's top holds a passage on every entity the question names and one
    for every hop of the chain before a second one on any of them. With all weights 0, or nothing to cover, the
    order is by score alone; ties keep the rounds' order."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    asked = name_keys(question, max_entities=_MAX_NAMES) if weight else frozenset()
    worth = {kind: w for kind, w in (hop_weights or {}).items() if w}
    found = [frozenset(u for u in units if u[0] in worth) for units in hops] if worth else []
    if not asked and not any(found):
        return order, scores
    found = found or [frozenset()] * len(scores)
    held = [(k.names | k.titles) & asked for k in keys]
    covered: set[str] = set()
    spanned: set[tuple[str, int]] = set()
    placed: list[int] = []
    won = scores.copy()
    left = order
    while left:
        gains = [
            scores[i] + weight * len(held[i] - covered) + sum(worth[kind] for kind, _ in found[i] - spanned)
            for i in left
        ]
        at = max(range(len(left)), key=lambda n: (gains[n], -n))
        best = left[at]
        won[best] = gains[at]
        placed.append(best)
        covered |= held[best]
        spanned |= found[best]
        left = left[:at] + left[at + 1 :]
    return placed, won


def rank_evidence(
    question: str,
    question_vector: np.ndarray,
    evidence: Sequence[Candidate],
    vectors: np.ndarray,
    settings: EvidenceRankingSettings,
    bridges: Mapping[str, int] | None = None,
    frequency: Mapping[str, int] | None = None,
    picked: frozenset[tuple[str, str]] = frozenset(),
    hop_answers: Mapping[str, int] | None = None,
    lift: np.ndarray | None = None,
) -> list[Candidate]:
    """``evidence`` (in the rounds' order, with unit ``vectors`` row by row) re-ordered by relevance to the
    whole question plus the score of the passages it links to. Two passages that both name one of
    ``bridges`` (the bridge candidates the research's beam read, each with the number of the collection's
    passages that mention it) are linked by its :func:`bridge_link_weights` weight. The link that lifted a
    passage most is set on its ``link``; ties keep the rounds' order. A passage in ``picked`` (one an LLM
    reading the evidence said states a fact the answer needs) adds ``reader_weight`` to its relevance. With
    ``question_name_weight`` the order covers the question's names first, and with ``hop_weight`` and
    ``hop_page_weight`` the beam's hops: ``hop_answers`` names each hop's answer (the name a query followed) with its
    depth; a passage a query on it found, and that answer's own page, each stand for that hop
    (:func:`_covering_order`). ``lift`` (one number per passage of ``evidence``) is added to each relevance: the
    hop questions' likelihood (:func:`~deepcite.research.likelihood.hop_lift`, x ``hop_likelihood_weight``)."""
    if not evidence:
        return []
    keys = [_keys(c.chunk, settings) for c in evidence]
    bridge_weight = bridge_link_weights(bridges or {}, keys, settings)
    bridge_keys = frozenset(bridge_weight)
    question_key = entity_key(question)
    relevance = np.array(
        [
            settings.dense_weight * float(vectors[i] @ question_vector)
            + settings.title_weight * _names_title(question_key, keys[i].titles)
            + settings.pack_weight / (settings.pack_k + i + 1)
            + settings.reader_weight * (evidence[i].key in picked)
            for i in range(len(evidence))
        ]
    )
    if lift is not None:
        relevance = relevance + lift
    # per passage, the passages it links to: (index, edge, entity, whether that passage names this one's page)
    links: list[list[tuple[int, str, str, bool]]] = [[] for _ in evidence]
    for i in range(len(evidence)):
        for j in range(i + 1, len(evidence)):
            found = _link(keys[i], keys[j], bridge_keys)
            if found:
                edge, entity, i_names_j, j_names_i = found
                links[i].append((j, edge, entity, j_names_i))
                links[j].append((i, edge, entity, i_names_j))
    weight = {
        "title_link": settings.link_weight,
        "alias_link": settings.alias_link_weight,
        "shared_name": settings.shared_name_weight,
        "subject_link": settings.subject_link_weight,
    }
    hub = _hub_link_weights(links, keys, frequency or {}, settings)
    scores = relevance.copy()
    best: list[tuple[int, str, str] | None] = [None] * len(evidence)
    for _ in range(settings.iterations):
        previous = scores.copy()
        for i, linked in enumerate(links):
            lifts = [
                (
                    (
                        bridge_weight[entity]
                        if edge == "bridge_name"
                        else hub.get((edge, entity), weight[edge])
                    )
                    * (1.0 if names_it else settings.backlink_weight)
                    * previous[j],
                    (j, edge, entity),
                )
                for j, edge, entity, names_it in linked
            ]
            lift, via = max(lifts, key=lambda x: x[0], default=(0.0, None))
            scores[i] = relevance[i] + max(lift, 0.0)
            best[i] = via if lift > 0 else None
    answers = hop_answers or {}
    pages = {entity_key(name): depth for name, depth in answers.items()}
    hops = [
        frozenset({("found", answers[p.focus]) for p in c.provenance if p.focus in answers})
        | {("page", depth) for key, depth in pages.items() if key in k.titles}
        for c, k in zip(evidence, keys, strict=True)
    ]
    order, scores = _covering_order(
        question,
        keys,
        scores,
        settings.question_name_weight,
        hops,
        {"found": settings.hop_weight, "page": settings.hop_page_weight},
    )
    ranked = []
    for i in order:
        cand = evidence[i].model_copy()
        cand.score = float(scores[i])
        via = best[i]
        cand.link = (
            None
            if via is None
            else EvidenceLink(
                entity=via[2],
                edge="shared_name" if via[1] in ("shared_name", "bridge_name") else "title_link",
                via=evidence[via[0]].chunk.title or evidence[via[0]].key[0],
            )
        )
        ranked.append(cand)
    return ranked
