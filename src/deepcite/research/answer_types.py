"""What a hop's answer is, and what a candidate's own page calls it: a country, a state, a city, a person.

    wanted = wanted_types("What is the name of the waterfall in the country where the Bubye River is found?")
    # (Wanted(kind='place', nouns={'waterfall', 'falls', 'cascade'}), Wanted(kind='place', nouns={'country', ...}))
    zimbabwe = page_type("Zimbabwe", "Zimbabwe, officially the Republic of Zimbabwe, is a landlocked country in southern Africa.")
    district = page_type("Beitbridge District", "Beitbridge District is one of seven districts of Matabeleland South.")
    type_fit([zimbabwe], wanted), type_fit([district], wanted), type_fit([], wanted)   # 1, -1, 0

The answer a multi-hop question needs first is named by the question's own words: the noun of "the country where
…", "in what county", "which river", a person's role ("the director of …", "who"), "where" (a place). A
candidate's page states what its subject is in its lead sentence, after the copula: "X is a city in …", "X is a
landlocked country …", "X (1919 - 1990) was an English film director". A candidate whose page is one of the kinds
the question wants fits (1); one whose page clearly is something else (a district where a country is wanted, a
place where only people are) does not (-1); a page or question whose type is not read is neutral (0).

Places are told apart by their nouns (country, state, county, city, river: a district is no country); people,
organisations and works by their kind alone (a "director" wanted, an "actor and filmmaker" found: both people).
Dates and numbers ("when", "what year", "how many") are never a bridge, which is a name: they want nothing of it.
The lexicon (:mod:`deepcite.research.answer_type_words`) is general English, not a data set's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from deepcite.research.answer_type_words import ANY_PLACE, KIND, PLACE_LEVELS
from deepcite.retrieval.graph.aliases import AliasTable
from deepcite.retrieval.graph.extract import entity_key
from deepcite.text import STOP_WORDS

# a copula the lead sentence states its subject's type after, and the words that end that type's phrase
_COPULA = re.compile(r"\b(?:is|was|are|were)\b", re.IGNORECASE)
_PHRASE_END = frozenset(
    "in of on at from for by with near between within along across located situated that which who whose "
    "where known founded formed based born to than about under into as".split()
)
_PHRASE_SKIP = frozenset("a an the also currently now today still among".split())
_PARTITIVE = frozenset("one any some each many several two three four five six seven eight nine ten".split())
_PARENS = re.compile(r"\([^()]*\)")
_YEAR = re.compile(r"\b1\d{3}\b|\b20\d{2}\b|\bborn\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'.-]*")


def singular(word: str) -> str:
    """``word`` lower-cased, an English plural folded when the singular is a type noun ("districts", "cities")."""
    low = word.lower().strip(".'")
    if low in KIND or not low.endswith("s"):
        return low
    for cut, add in (("ies", "y"), ("es", ""), ("s", "")):
        if low.endswith(cut) and low[: -len(cut)] + add in KIND:
            return low[: -len(cut)] + add
    return low


_ASKED_WITHIN = 3  # words from "which" / "what" to the noun it asks for ("what U.S. state")
# a question's opening word that names the kind of its answer
_OPENING = {"who": "person", "whom": "person", "where": "place"}


@dataclass(frozen=True)
class Wanted:
    """One kind of answer the question wants: a place, person, organisation or work; for a place, the nouns of
    its level that answer it (a town for "city"); ``None``: any of the kind. ``asked``: the kind the question
    asks for ("in what county", an opening "who"), which is the last hop's answer; the others ("the city where
    …", "the director of …") are the kinds of the answers on the way, the bridges."""

    kind: str
    nouns: frozenset[str] | None = None
    asked: bool = False


@dataclass(frozen=True)
class PageType:
    """What a page's lead sentence calls its subject: the head nouns ("country") and their kind; ``title``: the
    page's title."""

    nouns: frozenset[str]
    kind: str | None
    title: str = ""


def _wanted_of(word: str, lowest_level: bool = False) -> Wanted | None:
    """What the type noun ``word`` wants: its kind, and for a place the nouns of every level that names it (with
    ``lowest_level``, of the lowest: a question's "state" wants a state of a federation, not a country)."""
    noun = singular(word)
    kind = KIND.get(noun)
    if kind is None:
        return None
    if kind != "place" or noun in ANY_PLACE:
        return Wanted(kind)
    levels = [g for g in PLACE_LEVELS if noun in g]
    if lowest_level:
        levels = levels[-1:]
    return Wanted(kind, frozenset().union(*levels) if levels else frozenset([noun]))


def wanted_types(question: str, lowest_level: bool = False) -> tuple[Wanted, ...]:
    """The kinds of answer ``question`` names, in its order, once each: every lower-case type noun of its own
    words ("the country where", "in what county", "the director of", "birthplace", "the person who") and an
    opening "who" / "where" ("where" inside the question relates a noun: "the country where …"). A capitalised
    word is part of a name ("the Bubye River") and names no type. The opening word and a noun within
    ``_ASKED_WITHIN`` words after "which" / "what" are ``asked``. ``lowest_level``: a place noun the lexicon
    puts at several levels wants the lowest (:func:`_wanted_of`)."""
    words = _WORD.findall(question)
    out: list[Wanted] = []
    if words and words[0].lower() in _OPENING:
        out.append(Wanted(_OPENING[words[0].lower()], asked=True))
    asking = -1  # the index of the last "which" / "what"
    for i, word in enumerate(words):
        if word.lower() in ("which", "what"):
            asking = i
            continue
        wanted = _wanted_of(word, lowest_level) if word[:1].islower() and i else None
        if wanted is None:
            continue
        if asking >= 0 and i - asking <= _ASKED_WITHIN:
            wanted, asking = replace(wanted, asked=True), -1
        if wanted not in out:
            out.append(wanted)
    return tuple(out)


_NATION_NOUNS = frozenset(["country", "continent"])


def wants_a_nation(question: str) -> bool:
    """Whether ``question`` wants a country or a continent on the way or at its end ("the country Dai Jitao is
    from", "the country of citizenship of …"), or any place ("where", "the birthplace of …"): what a demonym
    ("Chinese", "Swedish") answers."""
    return any(
        w.kind == "place" and (w.nouns is None or bool(w.nouns & _NATION_NOUNS))
        for w in wanted_types(question)
    )


def bridges_a_nation(question: str) -> bool:
    """Whether a kind ``question`` wants on the way (not the one it asks) is a country or a continent, each
    place noun at its lowest level ("the country where …", not "the state where …" nor "where"): then a name the
    whole collection mentions (a country) is what the chain goes through, no hub to distrust."""
    return any(
        w.kind == "place" and not w.asked and w.nouns is not None and bool(w.nouns & _NATION_NOUNS)
        for w in wanted_types(question, lowest_level=True)
    )


def _heads(text: str) -> list[str]:
    """The head noun of each part of a type phrase ("landlocked country"; "actor and director"): its last
    lexicon word, else its last word."""
    heads: list[str] = []
    for part in text.replace(" or ", " and ").split(" and "):
        words = [singular(w) for w in _WORD.findall(part)]
        known = [w for w in words if w in KIND]
        if known or words:
            heads.append(known[-1] if known else words[-1])
    return heads


def title_type(title: str) -> PageType | None:
    """The type a page's title (or any name) states: its qualifier ("Georgia (U.S. state)", "Harbour Lights
    (film)"), else its last word ("Limpopo River", "Beitbridge District"), when a type noun."""
    head, _, rest = title.partition("(")
    name = head.split(",")[0].split()
    for text in (rest.rsplit(")", 1)[0], name[-1] if name else ""):
        known = [h for h in _heads(text) if h in KIND]
        if known:
            return PageType(frozenset(known), KIND[known[0]])
    return None


def _first_word(name: str) -> str:
    """The first word of ``name``'s entity key that is no stop word ("the United Kingdom of …" → "united")."""
    return next((w for w in entity_key(name).split() if w not in STOP_WORDS), "")


def _lead_type(title: str, sentence: str, max_words: int) -> PageType | None:
    plain = _PARENS.sub(" ", sentence)
    match = _COPULA.search(plain)
    if not match:
        return None
    if _first_word(plain[: match.start()]) != _first_word(title.split("(")[0]):
        return (
            None  # a sentence about something else ("It is the largest city of …" of a page's later passage)
        )
    clause = re.split(r"[,;:]", plain[match.end() :], maxsplit=1)[0]  # "an American actor, comedian and …"
    words = [w.lower().strip(".'") for w in _WORD.findall(clause)][:max_words]
    while words and words[0] in _PHRASE_SKIP:
        words = words[1:]
    if words[:1] and words[0] in _PARTITIVE and words[1:2] == ["of"]:  # "one of seven districts"
        words = [w for w in words[2:] if w not in _PHRASE_SKIP]
    phrase: list[str] = []
    for word in words:
        if word in _PHRASE_END:
            break
        phrase.append(word)
    heads = _heads(" ".join(phrase))
    kind = next((KIND[h] for h in heads if h in KIND), None)
    if kind is None and _YEAR.search(" ".join(_PARENS.findall(sentence))):
        kind = "person"
    return PageType(frozenset(heads), kind) if heads or kind else None


def page_type(title: str, sentence: str, max_words: int) -> PageType | None:
    """What the page ``title`` calls its subject, or ``None`` when it does not say. Its lead ``sentence`` first,
    when the words before its copula name the page: the head noun of each part of the phrase after the copula
    up to its first comma, preposition or relative word, at most ``max_words`` words ("a landlocked country" →
    "country", "an American actor and director" → "actor", "director"; "one of seven districts" → "district"),
    its kind from the lexicon, else a person's when the subject carries years or "born" in parentheses ("Osric
    Pell (1919 - 1990) was …"). When that gives no kind, the title's own type noun (:func:`title_type`)."""
    lead = _lead_type(title, sentence, max_words) if sentence else None
    found = lead if lead is not None and lead.kind is not None else title_type(title) or lead
    return replace(found, title=title) if found is not None else None


def _same_kind(page: str | None, wanted: str) -> bool:
    """Whether a page's kind is the wanted one; a role a person or an organisation may fill ("agent") is either."""
    if page == wanted:
        return True
    either = {"person", "organisation", "agent"}
    return "agent" in (page, wanted) and page in either and wanted in either


def _fits(page: PageType, wanted: Wanted) -> bool:
    return _same_kind(page.kind, wanted.kind) and (wanted.nouns is None or bool(page.nouns & wanted.nouns))


def type_fit(pages: Sequence[PageType | None], wanted: Sequence[Wanted]) -> int:
    """1 when a page of the candidate is a kind of bridge the question wants (one it does not ask for, when it
    names any: the asked kind is the last hop's); -1 when every page is read and clearly none of the kinds it
    names (its kind differs from every one, or it is a place of another level than every place wanted); 0 when
    nothing is known (no page, a page whose type does not read, a question that names no type) or it is only
    the asked kind."""
    if not wanted or not pages:
        return 0
    bridges = [w for w in wanted if not w.asked] or list(wanted)
    if any(p is not None and _fits(p, w) for p in pages for w in bridges):
        return 1
    if any(p is not None and _fits(p, w) for p in pages for w in wanted):
        return 0
    return -1 if all(p is not None and p.kind is not None for p in pages) else 0


def candidate_fit(
    wanted: Sequence[Wanted], pages: AliasTable, types: Mapping[str, PageType]
) -> Callable[[str], int]:
    """``fit(name)``: :func:`type_fit` of the pages known by the candidate's name exactly (``types``: chunk id →
    its page's type) whose title opens with the name's first word, else of the type its name itself states
    ("Gwanda District", a name with no page). A page known by the name only through its lead's parentheses
    ("St Louis" in a person's birth note) is not the name's own page."""

    def fit(name: str) -> int:
        first = _first_word(name)
        own = [types.get(p.chunk_id) for p in pages.named(name)]
        own = [t for t in own if t is not None and _first_word(t.title) == first]
        return type_fit(own or [title_type(name)], wanted)

    return fit
