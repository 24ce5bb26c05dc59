"""A sentence that answers a yes/no question "no" without a negation: it puts something else where the question
puts a thing.

A negation is one way to deny (:func:`deepcite.answer.negation.negated`); a writer more often states what is the
case instead: "Should the files be kept in the vendor's patented formats?" is answered by "files will be stored in
open, non-patented formats", "Is the board's processor a 32-bit design?" by "a 16-bit RISC architecture", "Does
Keras run only on TensorFlow?" by "capable of running on top of either TensorFlow or Theano", "Is the handbook a
final document?" by "It is in draft status". :func:`contradicts` reads five such forms, each of plain English, not
of any document:

- the question's word with a denying prefix ("non-patented", "unbounded" for "bounded");
- a number in the question's unit, other than the question's ("16-bit" for "32-bit"), for a question that asks
  for no bound or comparison ("more than", "at least", "under");
- a question that restricts ("only", "alone", "on its own") answered by a sentence that names more than one
  ("either … or", "both", "as well as", "combine", "hybrid");
- a word of the question's answered by its opposite (:data:`OPPOSITES`: "draft" for "final", "off-chain" for
  "on-chain", "optional" for "mandatory"), the question's own word not said;
- a comparison turned round: "less deceptive than the landmark-based ones" for "Did they fool it more often than the
  landmark morphs?", "Data scientists earn more than data analysts" for "Do data analysts earn more than data
  scientists?" (:data:`COMPARATIVES`).
"""

from __future__ import annotations

import re

from deepcite.text import raw_tokens, tokenize

Pairs = tuple[tuple[frozenset[str], frozenset[str]], ...]


def _both_ways(pairs: tuple[tuple[str, str], ...]) -> Pairs:
    """Each pair of word lists as two sets, in both orders: (one, other) and (other, one)."""
    sets = [(frozenset(a.split()), frozenset(b.split())) for a, b in pairs]
    return tuple(sets + [(b, a) for a, b in sets])


# pairs of words whose one denies the other as the answer to a yes/no question ("Is it a final version?" / "It is
# a draft"); categorical opposites only: a comparative ("faster", "more") depends on which side is named first
OPPOSITES: Pairs = _both_ways(
    (
        ("final finished complete completed", "draft drafts preliminary unfinished incomplete"),
        ("mandatory required compulsory obligatory", "optional voluntary"),
        ("public", "private internal confidential"),
        ("online", "offline"),
        ("synchronous synchronously", "asynchronous asynchronously"),
        ("manual manually hand", "automatic automatically automated automate"),
        ("static statically", "dynamic dynamically"),
        ("local locally", "remote remotely"),
        ("free", "paid commercial"),
        ("permanent permanently", "temporary temporarily"),
        ("centralised centralized", "decentralised decentralized distributed"),
        ("lossless", "lossy"),
        ("physical", "virtual"),
        ("on-chain onchain", "off-chain offchain"),
        ("part partial partially portion", "whole entire entirely entirety"),
    )
)

# comparatives of opposite directions; a comparison is turned round when the sentence compares the other way
# against something the question compares against ("than the landmark …")
COMPARATIVES: Pairs = _both_ways(
    (
        ("more", "less fewer"),
        ("faster quicker", "slower"),
        ("higher", "lower"),
        ("larger bigger greater", "smaller"),
        ("better", "worse"),
        ("longer", "shorter"),
        ("earlier", "later"),
        ("older", "newer younger"),
        ("heavier", "lighter"),
        ("stronger", "weaker"),
        ("easier", "harder"),
        ("cheaper", "costlier dearer"),
        ("wider broader", "narrower"),
    )
)
_THAN = re.compile(r"\bthan\s+(?P<object>(?:[^\s.;?]+\s*){1,4})", re.I)
# the words before "than" its comparative may be among ("more often than", "less deceptive than")
_BEFORE_THAN = 4
# a denying prefix before one of the question's words ("non-patented", "non patented", "unbounded")
_PREFIX = "non|un"
_MIN_PREFIXED = 4  # letters of a question word a prefix may deny ("unable" is no denial of "able")
# a number and its unit ("32-bit", "16 bit", "24px", "1000 time steps")
_AMOUNT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*-?\s*([a-z%]+)", re.I)
# a question asking for a bound or a comparison, not one value: another number may answer it "yes"
_BOUND = re.compile(
    r"\b(?:more|less|fewer|than|over|under|above|below|at least|at most|up to|exceed\w*|within|between|"
    r"beyond|around|about|approximately|roughly|nearly|almost|minimum|maximum|or so)\b|[<>≤≥~]",
    re.I,
)
# a question that restricts itself to one thing
_RESTRICTS = re.compile(
    r"\b(?:only|alone|solely|exclusively|on (?:its|their) own|by itself|by themselves)\b", re.I
)
# a sentence naming more than one: "either X or Y", "both X and Y" (to a few words after the "or" or "and"), or
# a few words either side of "as well as", "combine", "hybrid", … ; the thing a question restricts must be named in
# it
_NEAR_WORDS = 4
_MORE_THAN_ONE = re.compile(
    rf"\b(?:either\b[^.;]{{0,80}}?\bor|both\b[^.;]{{0,80}}?\band)\b(?:\s+[^\s.;]+){{1,{_NEAR_WORDS}}}|"
    rf"(?:[^\s.;]+\s+){{0,{_NEAR_WORDS}}}(?:as well as|combin(?:e|es|ed|ing|ation)|hybrid|in addition to|"
    rf"together with|not only|multiple)\b(?:\s+[^\s.;]+){{0,{_NEAR_WORDS}}}",
    re.I,
)


def contradicts(text: str, question: str) -> bool:
    """Whether ``text`` answers the yes/no ``question`` "no" by saying something else is the case (module
    docstring)."""
    return (
        _prefix_denies(text, question)
        or _other_amount(text, question)
        or _more_than_one(text, question)
        or _opposite(text, question)
        or _turned_round(text, question)
    )


def _prefix_denies(text: str, question: str) -> bool:
    """A question's word that ``text`` holds only after a denying prefix, in lower case: "non-patented" for
    "patented"; not a name ("the Non-Uniform planner"), nor a word the question itself denies ("people who are not
    engineers")."""
    asked = question.lower()
    joined = re.sub(r"\bnon[- ]", "non", text)  # "non-patented" and "non patented" as "nonpatented"
    for word in set(raw_tokens(asked)):
        if len(word) < _MIN_PREFIXED or not word.isalpha():
            continue
        if re.search(rf"\b(?:{_PREFIX}|not|no|never)[- ]?{re.escape(word)}\b", asked):
            continue
        if re.search(rf"\b(?-i:{_PREFIX}){re.escape(word)}\b", joined, re.I) and not re.search(
            rf"(?<![\w-]){re.escape(word)}\b", joined, re.I
        ):
            return True
    return False


def _other_amount(text: str, question: str) -> bool:
    """A number in one of the question's units other than the question's, the question's own not said, for a
    question that asks for no bound."""
    if _BOUND.search(question):
        return False
    asked = {(float(n), u.lower()) for n, u in _AMOUNT.findall(question)}
    said = {(float(n), u.lower()) for n, u in _AMOUNT.findall(text)}
    for number, unit in asked:
        if (number, unit) not in said and any(u == unit and n != number for n, u in said):
            return True
    return False


def _more_than_one(text: str, question: str) -> bool:
    """A question that restricts itself to one thing, over a sentence that names more than one with it: the thing
    restricted (the question's words after "only", or the few before "alone") among those named ("either
    TensorFlow or Theano" for "run only on TensorFlow"; not "both encoders and projectors" for "morphs only made
    between two faces")."""
    restriction = _RESTRICTS.search(question)
    if restriction is None:
        return False
    after = tokenize(question[restriction.end() :])
    restricted = set(after or tokenize(" ".join(question[: restriction.start()].split()[-_NEAR_WORDS:])))
    return any(restricted & set(tokenize(naming.group())) for naming in _MORE_THAN_ONE.finditer(text))


def _opposite(text: str, question: str) -> bool:
    """A word of the question's whose opposite ``text`` says, and not the word itself (:data:`OPPOSITES`)."""
    asked, said = set(_words(question)), set(_words(text))
    return any(asked & a and said & b and not said & a and not asked & b for a, b in OPPOSITES)


def _words(text: str) -> list[str]:
    """Lower-case words, a hyphenated word also whole ("off-chain")."""
    return re.findall(r"[a-z]+(?:-[a-z]+)*", text.lower()) + raw_tokens(text)


def _turned_round(text: str, question: str) -> bool:
    """A comparison of the question's made the other way (:data:`COMPARATIVES`): the sentence compares in the
    opposite direction against what the question compares against ("less deceptive than the landmark ones" for
    "more often than the landmark morphs"), or in the same direction with the sides swapped ("Data scientists earn
    more than data analysts" for "Do data analysts earn more than data scientists?"), and nowhere as the question
    does. A comparative is among the few words before "than"; a side is known by the terms only it holds."""
    turned = kept = False
    compared = _comparisons(text)
    for words, against, subject in _comparisons(question):
        for a, b in COMPARATIVES:
            if not words & a:
                continue
            for said, obj, _ in compared:
                direction = bool(said & a) - bool(said & b)
                same_side, swapped = bool(obj & against), bool(obj & subject)
                if not direction or same_side == swapped:
                    continue
                if (direction < 0) != swapped:
                    turned = True
                else:
                    kept = True
    return turned and not kept


def _comparisons(text: str) -> list[tuple[set[str], set[str], set[str]]]:
    """Each "than" of ``text``: the few words before it (its comparative among them), the terms of what it
    compares against that the text before does not hold (all of them when none is left: "the old pump" against
    "Is the new pump slower": "old"), and the terms before it that the compared-against part does not hold."""
    found = []
    for m in _THAN.finditer(text):
        after, before = set(tokenize(m["object"])), set(tokenize(text[: m.start()]))
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", text[: m.start()])[-_BEFORE_THAN:]}
        found.append((words, (after - before) or after, before - after))
    return found
