"""Read the bridge: after a hop, the candidate answers of that hop read from its best evidence, kept as a beam.

    read_bridge("In what county is the city where Harris W. Fawell was born?", passages, exclude=[],
                pages=alias_table, settings=BridgeSettings())
    # [BridgeReading(name='West Chicago', score=3.1, parent=('fawell', 'fawell-0')), ...]

A multi-hop question names a relation it needs answered first ("the city where X was born", "the performer
of Green", "the spouse of the director of …"). The passages a hop found state it: the name that stands next
to the question's relation words ("born in West Chicago", "a song performed by Hask & Omo"), often in the
apposition after the page's title in its first sentence. Every name of the hop's best passages (and each
passage's title) that the question does not already name scores, per passage, the passage's weight ``1 /
rank`` (in the first reading, times less when it mentions none of the names the question gives:
``unnamed_weight``) times:

- 1, plus ``near_weight`` the nearer it stands to a relation word of the question (a question word that is not
  a word of the passage's title or of a name the question gives; nothing beyond ``near_window`` words), plus
  ``lead_weight`` when it stands in the passage's first sentence (the apposition after a title), or
  ``title_weight`` for the passage's own title;

a name in the disambiguation of a title whose head the question names ("Jerry Lee Lewis" of "It'll Be Me (Jerry Lee
Lewis song)"), from any passage of the hop, scores ``qualifier_weight``; a page the question names is not read for
the other names it is known by (``skip_own_aliases``: "Peter Phillip Bonetti" on the page "Peter Bonetti"); a
demonym is read as the place it names when the question wants a nation (``demonyms``: "a Chinese journalist" gives
"China", :mod:`deepcite.research.demonyms`);

then, summed over the passages, ``agree_weight`` for each further passage that names it, and ``page_weight``
when the collection has a page it names (the alias table, :mod:`deepcite.retrieval.graph.aliases`), all divided
by ``log2(2 + passages mentioning it) ** specificity`` (a name every page mentions is no bridge), and times ``1 +
type_weight`` when its own page is the kind of answer the question wants ("the country where …": a page calling
itself a country), divided by ``1 + type_mismatch_weight`` when it clearly is not (a district;
:mod:`deepcite.research.answer_types`). The best
``beam`` readings within ``min_ratio`` of the best are the beam the next hop follows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate, Chunk
from deepcite.names import names_in
from deepcite.research.demonyms import place_of
from deepcite.research.entities import content_words
from deepcite.retrieval.graph.aliases import AliasTable, first_sentence, page_aliases
from deepcite.retrieval.graph.extract import entity_key, sub_keys
from deepcite.text import tokenize

_SHARED_STEM = 5  # letters a role noun's stem shares with its verb's ("direct": "director", "directed")
# a relation noun of a question, and the words a page states that relation with when it shares no stem with
# them ("the birthplace of X": "X was born in …"; "the spouse of X": "X married …"); general English, no data set's
RELATION_CUES: dict[str, tuple[str, ...]] = {
    "birthplace": ("born", "native"),
    "birth": ("born",),
    "hometown": ("born", "raised", "native"),
    "death": ("died",),
    "spouse": ("married", "wife", "husband"),
    "wife": ("married",),
    "husband": ("married",),
    "father": ("son", "daughter", "born"),
    "mother": ("son", "daughter", "born"),
    "parent": ("son", "daughter", "born"),
    "child": ("son", "daughter", "father", "mother"),
    "sibling": ("brother", "sister"),
    "author": ("written", "wrote", "novel", "book"),
    "writer": ("written", "wrote"),
    "creator": ("created",),
    "performer": ("sung", "recorded", "song", "singer", "band"),
    "singer": ("sung", "recorded"),
    "artist": ("sung", "recorded", "painted"),
    "composer": ("composed", "scored", "music"),
    "producer": ("produced",),
    "publisher": ("published",),
    "developer": ("developed",),
    "manufacturer": ("made", "manufactured", "built"),
    "owner": ("owned", "owns"),
    "headquarters": ("headquartered", "based"),
    "location": ("located", "lies", "situated"),
    "country": ("nation", "national", "located"),
    "nationality": ("citizen", "national"),
    "employer": ("worked", "works", "employed"),
    "team": ("played", "plays", "signed"),
    "university": ("attended", "graduated", "studied", "educated"),
    "school": ("attended", "graduated", "studied", "educated"),
    "founder": ("founded", "established"),
    "member": ("joined", "member"),
    "burial": ("buried",),
    "league": ("plays", "competes"),
    "network": ("aired", "broadcast"),
}
_CUE_STEMS: dict[str, frozenset[str]] = {
    stem: frozenset(tokenize(" ".join(words)))
    for noun, words in RELATION_CUES.items()
    for stem in tokenize(noun)
}


def relation_cues(stems: Iterable[str]) -> set[str]:
    """The stems a page states the relations of ``stems`` with (:data:`RELATION_CUES`)."""
    return {cue for stem in stems for cue in _CUE_STEMS.get(stem, ())}


_WORD_EDGE = "\"“”'‘’(),.;:!?[]"


@dataclass(frozen=True)
class BridgeReading:
    """A candidate answer of a hop: the name, its score, and the passage it was read from best."""

    name: str
    score: float
    parent: tuple[str, str]


def relation_stems(question: str, title: str, question_names: Iterable[str]) -> set[str]:
    """The stems of the question's relation words for one passage: its stems that are neither a word of the
    passage's title nor of a name the question gives ("born", "county" of "the county of the city where
    Harris W. Fawell was born", against the page "Harris W. Fawell")."""
    named = set(tokenize(" ".join(question_names))) | set(tokenize(title))
    return {stem for stem in tokenize(question) if len(stem) > 1} - named  # not the "s" of "Gisvi's"


def _relates(stem: str, relation: set[str]) -> bool:
    """Whether a passage word's stem is a relation stem, or one of at least ``_SHARED_STEM`` letters opens the
    other ("direct" of "directed" and "director": a role noun and its verb)."""
    return stem in relation or any(
        min(len(stem), len(r)) >= _SHARED_STEM and (r.startswith(stem) or stem.startswith(r))
        for r in relation
    )


def _qualifier_names(title: str, padded_question: str) -> list[str]:
    """The names in the disambiguation of a page title whose head the question names: "Jerry Lee Lewis" of
    "It'll Be Me (Jerry Lee Lewis song)" for a question about "It'll Be Me", "Colorado" of "Humboldt Peak
    (Colorado)"; ``padded_question`` is the question's entity key between spaces."""
    head, _, rest = title.partition(" (")
    qualifier = rest.rsplit(")", 1)[0].strip() if rest.endswith(")") else ""
    key = entity_key(head)
    if not qualifier or not key or f" {key} " not in padded_question:
        return []
    names = names_in(qualifier)
    if not names and all(w[:1].isupper() for w in qualifier.split()):  # one capitalised name alone
        names = [qualifier]
    return names


def _as_places(
    scores: dict[str, float],
    shown: dict[str, str],
    parent: dict[str, tuple[tuple[str, str], float]],
    seen_in: dict[str, set[tuple[str, str]]],
    used: set[str],
    asked: set[str],
) -> None:
    """Each demonym read ("a Chinese journalist") becomes the place it names (China), in its place of the reading's
    order, scoring the better of the two where the place was read too (a reading of "British" does not add to one
    of "United Kingdom": a hub stays a hub); dropped where the question or a hop before has the place. In place."""
    merged: dict[str, float] = {}
    for key, value in scores.items():
        place = place_of(shown[key])
        if place is None:
            merged[key] = max(merged.get(key, 0.0), value)
            continue
        to = entity_key(place)
        if to in used or content_words(to) <= asked or max(scores.get(to, 0.0), merged.get(to, 0.0)) >= value:
            continue
        merged[to] = value
        shown[to], parent[to], seen_in[to] = place, parent[key], seen_in[key]
    scores.clear()
    scores.update(merged)


def _named_shares(
    passages: Sequence[Candidate], topic: Sequence[str], frequency: Mapping[str, int], floor: float
) -> dict[tuple[str, str], float]:
    """Each passage's weight by the question's names it mentions (``topic``): ``floor`` + (1 - ``floor``) x the
    share of those names in its title or text, each name counted 1 / log2(2 + passages mentioning it) (a rare
    name says more than "Olympics") and only names some passage mentions counted, over the best passage's. All 1
    when ``floor`` is 1, the question gives no name, or no passage mentions one."""
    keys = {entity_key(n) for n in topic} - {""}
    if floor >= 1.0 or not keys:
        return {c.key: 1.0 for c in passages}
    named = {c.key: mentioned_keys(c.chunk, keys) for c in passages}
    worth = {k: 1.0 / math.log2(2 + frequency.get(k, 0)) for k in set().union(*named.values())}
    total = sum(worth.values())
    if not total:
        return {c.key: 1.0 for c in passages}
    shares = {key: floor + (1.0 - floor) * sum(worth[k] for k in ks) / total for key, ks in named.items()}
    top = max(shares.values())
    return {key: share / top for key, share in shares.items()}


def mentioned_keys(chunk: Chunk, keys: Collection[str]) -> set[str]:
    """The entity ``keys`` (:func:`~deepcite.retrieval.graph.extract.entity_key`) that ``chunk``'s title or text
    mentions, each as whole words."""
    held = f" {entity_key(chunk.title)} {entity_key(chunk.text)} "
    return {k for k in keys if f" {k} " in held}


def _gap_weight(gap: int | None, window: int) -> float:
    return 1.0 - gap / (window + 1) if gap is not None and gap <= window else 0.0


def read_bridge(
    question: str,
    passages: Sequence[Candidate],
    *,
    exclude: Iterable[str] = (),
    pages: AliasTable | None = None,
    frequency: Mapping[str, int] | None = None,
    spent: Collection[str] = (),
    keep: Callable[[str, bool], bool] | None = None,
    relation: str | None = None,
    own_aliases: tuple[int, int] | None = None,
    fit: Callable[[str], int] | None = None,
    readable: Callable[[Candidate], Collection[str] | None] | None = None,
    demonyms: bool = False,
    topic: Sequence[str] = (),
    settings: BridgeSettings,
) -> list[BridgeReading]:
    """The hop's candidate answers, best first (see the module docstring), at most ``settings.beam``. Stems in
    ``spent`` (the words of the passage the hop before read its candidate from) are no relation words: the hop
    before answered them. ``keep(name, is_title)`` says whether a name may be a candidate at all (not noise).
    ``relation``, when given, is the hop's own step of a decomposed question ("performer of Green"): its words,
    not the whole question's, are the relation words; the question's names stay excluded. ``fit(name)`` says
    whether the candidate's own page is the kind of answer the question wants (1), clearly is not (-1) or is not
    known (0) (:func:`~deepcite.research.answer_types.type_fit`): ``type_weight`` / ``type_mismatch_weight``.
    ``readable(passage)``, when given, is the names (lower-case) a passage may give, ``None`` for all of them: a
    document's sentences that bear on the question; a passage limited so gives neither its title nor the names
    of a title's disambiguation. With ``demonyms`` a demonym is read as the place it names (:func:`_as_places`).
    ``topic``: the names the question gives, for the first reading: a passage weighs less the fewer of them it
    mentions (``unnamed_weight``, :func:`_named_shares`)."""
    question_key = entity_key(question)
    asked = content_words(question_key)
    padded = f" {question_key} "
    named = names_in(question)
    used = {entity_key(e) for e in exclude}
    parts = {part for key in used for part in sub_keys(key)}
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}
    parent: dict[str, tuple[tuple[str, str], float]] = {}
    seen_in: dict[str, set[tuple[str, str]]] = {}

    def add(name: str, value: float, cand: Candidate, title: bool = False) -> None:
        key = entity_key(name)
        words = content_words(key)
        if not words or words <= asked or key in used or key in parts:  # "Pell" of a followed "Osric Pell"
            return
        if key not in shown and keep is not None and not keep(name, title):
            used.add(key)  # noise (a sentence, a statistic): never a candidate
            return
        shown.setdefault(key, name)
        scores[key] = scores.get(key, 0.0) + value
        seen_in.setdefault(key, set()).add(cand.key)
        if value > parent.get(key, ((), 0.0))[1]:
            parent[key] = (cand.key, value)

    allowed = {cand.key: readable(cand) for cand in passages} if readable is not None else {}
    read = passages[: settings.passages]
    named_share = _named_shares(read, topic, frequency or {}, settings.unnamed_weight)
    for rank, cand in enumerate(read, start=1):
        weight = named_share[cand.key] / rank
        title = cand.chunk.title.strip()
        limit = allowed.get(cand.key)
        if title and limit is None:
            add(title, weight * settings.title_weight, cand, title=True)
        stems = relation_stems(relation or question, title, named)
        if settings.relation_cues:
            stems |= relation_cues(stems) - set(tokenize(title))
        relation_words = {r for r in stems if not _relates(r, spent)}
        text = cand.chunk.text
        # a page the question names restated ("Peter Phillip Bonetti" on the page "Peter Bonetti"): the other
        # names it is known by answer nothing the question asks
        own = (
            set(page_aliases(title, text, max_words=own_aliases[0], lead_chars=own_aliases[1]))
            if own_aliases is not None and settings.skip_own_aliases
            else set()
        )
        if not any(f" {k} " in padded for k in own):
            own = set()
        words = [w.strip(_WORD_EDGE) for w in text.split()]
        marks = [i for i, w in enumerate(words) if any(_relates(t, relation_words) for t in tokenize(w))]
        lead_words = len(first_sentence(text, len(text)).split())
        for name in names_in(text):
            if (own and entity_key(name) in own) or (limit is not None and name.lower() not in limit):
                continue
            first = name.split()[0]
            at = next((i for i, w in enumerate(words) if w == first), None)
            gap = min((abs(at - m) for m in marks), default=None) if at is not None else None
            near = _gap_weight(gap, settings.near_window)
            # the apposition after a title counts when it bears on the relation (or the question names none)
            lead = at is not None and at < lead_words and (near > 0 or not marks)
            add(name, weight * (1.0 + settings.near_weight * near + settings.lead_weight * lead), cand)
    if settings.qualifier_weight:
        for cand in passages:  # every passage of the hop, not only its best: a title is a short read
            if allowed.get(cand.key) is not None:
                continue
            for name in _qualifier_names(cand.chunk.title, padded):
                add(name, settings.qualifier_weight, cand)
    if demonyms:
        _as_places(scores, shown, parent, seen_in, used | parts, asked)
    for key in scores:
        scores[key] += settings.agree_weight * (len(seen_in[key]) - 1)
        if pages is not None and settings.page_weight and pages.pages(shown[key]):
            scores[key] += settings.page_weight
        verdict = fit(shown[key]) if fit is not None else 0
        if verdict > 0:
            scores[key] *= 1.0 + settings.type_weight
        elif verdict < 0:
            scores[key] /= 1.0 + settings.type_mismatch_weight
        if frequency is not None and settings.specificity:
            scores[key] /= math.log2(2 + frequency.get(key, 0)) ** settings.specificity
    ranked = sorted(scores, key=lambda k: -scores[k])
    if not ranked:
        return []
    floor = settings.min_ratio * scores[ranked[0]]
    return [
        BridgeReading(shown[k], scores[k], parent[k][0])
        for k in ranked[: settings.beam]
        if scores[k] >= floor
    ]
