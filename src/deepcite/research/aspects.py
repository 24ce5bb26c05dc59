"""Heuristic aspect extraction: what a complete answer to a question must cover.

A comparison ("X vs Y", "compare X and Y", "which is older, X or Y") yields a definition aspect for
each side plus the comparison itself; "what is", "how does", "why", "advantages/disadvantages" and
"uses/examples" map to definition, process, causal, evaluation and application aspects; a multi-part
question is split on "?" and on "and" before a new question word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepcite.config import ResearchSettings
from deepcite.models import AspectType, QueryAspect
from deepcite.text import STOP_WORDS, folded, raw_tokens

_QWORDS = r"(?:what|how|why|when|where|which|who|whom|whose|does|do|did|is|are|was|were|can|could|should)"
# a new part starts after "?" or ";", or at "and" before a question word that opens a new question
# ("… and how is it treated"); "and who/which/that …" usually continues the same clause, so it does not split
_QWORDS_SET = frozenset(_QWORDS[3:-1].split("|"))
_PART_SPLIT = re.compile(r"\?\s*|;\s+|,?\s+and\s+(?=(?:what|how|why|when|where)\b)", re.IGNORECASE)
_SIDE = r"(.+?)"
_COMPARISONS = [
    re.compile(
        rf"^(?:please\s+)?(?:compare|contrast)\s+{_SIDE}\s+(?:and|with|to|versus|vs\.?)\s+{_SIDE}$", re.I
    ),
    re.compile(rf"\bdifferences?\s+between\s+{_SIDE}\s+and\s+{_SIDE}$", re.I),
    re.compile(rf"^(?:{_QWORDS}\s+)?{_SIDE}\s+(?:vs\.?|versus|compared (?:to|with))\s+{_SIDE}$", re.I),
    re.compile(rf"^(?:which|who|what)\b[^,]*,\s*{_SIDE}\s+or\s+{_SIDE}$", re.I),
    re.compile(
        rf"^(?:are|were|is|was|do|did|does|have|has)\s+{_SIDE}\s+and\s+{_SIDE}\s+"
        r"(?:both|either|each|of the same|the same|from the same|in the same|located in the same)\b",
        re.I,
    ),
    re.compile(
        rf"^(?:which|who)\s+\w+\s+(?:\w+\s+){{0,3}}(?:first|earlier|later|older|younger|more|less)\b"
        rf"[^,]*[,:]?\s+{_SIDE}\s+or\s+{_SIDE}$",
        re.I,
    ),
]
_DEFINITION = re.compile(r"^(?:what|who)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?(.+)$", re.I)
_PROCESS = re.compile(r"^how\s+(?:does|do|did|is|are|can|could)\b", re.I)
_CAUSAL = re.compile(r"^why\b|\b(?:cause[sd]?|leads? to|because|reason)\b", re.I)
_EVALUATION = re.compile(
    r"\b(?:advantages?|disadvantages?|pros|cons|benefits?|risks?|drawbacks?|effective(?:ness)?|efficacy|"
    r"safety|better|worse|limitations?|strengths?|weaknesses?)\b",
    re.I,
)
_APPLICATION = re.compile(r"\b(?:uses?|used for|examples?|applications?|applied|treat(?:s|ment)?)\b", re.I)
_LEADING = re.compile(r"^(?:please\s+)?(?:tell me|explain|describe|summari[sz]e)\s+", re.I)


@dataclass(frozen=True)
class AspectWeights:
    """Importance per role, read from :class:`ResearchSettings`."""

    main: float
    side: float
    secondary: float

    @classmethod
    def from_settings(cls, settings: ResearchSettings) -> AspectWeights:
        return cls(
            settings.planning.main_aspect_importance,
            settings.planning.side_aspect_importance,
            settings.planning.secondary_aspect_importance,
        )


def keywords_of(text: str) -> list[str]:
    """Content words of ``text`` (lower-case, accents folded as the index folds them, no stop words, order kept,
    no repeats): "Hernández" is "hernandez", not "hern" and "ndez"."""
    out: list[str] = []
    for tok in raw_tokens(folded(text)):
        if tok not in STOP_WORDS and len(tok) > 1 and tok not in out:
            out.append(tok)
    return out


def _clean(side: str) -> str:
    return side.strip(" ,.;:?!\"'").removeprefix("the ").strip()


def comparison_sides(part: str) -> tuple[str, str] | None:
    """The two sides of a comparison question, or ``None``."""
    text = part.strip().rstrip("?.! ")
    for pattern in _COMPARISONS:
        m = pattern.search(text)
        if m:
            left, right = _clean(m.group(1)), _clean(m.group(2))
            if left and right and left.lower() != right.lower():
                return left, right
    return None


def _aspect(text: str, kind: AspectType, importance: float) -> QueryAspect:
    return QueryAspect(aspect=text, aspect_type=kind, importance=importance, keywords=keywords_of(text))


def _part_aspects(part: str, w: AspectWeights) -> list[QueryAspect]:
    part = _LEADING.sub("", part.strip().rstrip("?.! "))
    sides = comparison_sides(part)
    if sides:
        left, right = sides
        return [
            _aspect(part, AspectType.COMPARISON, w.main),
            _aspect(left, AspectType.DEFINITION, w.side),
            _aspect(right, AspectType.DEFINITION, w.side),
        ]
    out: list[QueryAspect] = []
    m = _DEFINITION.match(part)
    if _PROCESS.search(part):
        out.append(_aspect(part, AspectType.PROCESS, w.main))
    elif _CAUSAL.search(part):
        out.append(_aspect(part, AspectType.CAUSAL, w.main))
    elif m and not _EVALUATION.search(part) and not _APPLICATION.search(part):
        out.append(_aspect(_clean(m.group(1)), AspectType.DEFINITION, w.main))
    elif _EVALUATION.search(part):
        out.append(_aspect(part, AspectType.EVALUATION, w.main))
    elif _APPLICATION.search(part):
        out.append(_aspect(part, AspectType.APPLICATION, w.main))
    else:
        out.append(_aspect(part, AspectType.DEFINITION, w.main))
    main = out[0].aspect_type
    if main is not AspectType.EVALUATION and _EVALUATION.search(part):
        out.append(_aspect(part, AspectType.EVALUATION, w.secondary))
    if main is not AspectType.APPLICATION and _APPLICATION.search(part):
        out.append(_aspect(part, AspectType.APPLICATION, w.secondary))
    return out


# a later part's pronoun ("… and how is it treated") stands for the first part's topic
_PRONOUN = re.compile(r"\b(?:it|they|them|this|these)\b", re.IGNORECASE)
# verbs that end a question's topic phrase ("does [atrial fibrillation] increase …")
_TOPIC_END = frozenset(
    """increase increases reduce reduces lower lowers raise raises cause causes improve improves affect affects
    prevent prevents lead leads work works help helps treat treats influence influences predict predicts
    change changes differ differs compare compares protect protects worsen worsens occur occurs""".split()
)


# a verb in the past that is not a regular "-ed" form ("How many people [took] part …")
_IRREGULAR_PAST = frozenset(
    """took made gave got came went saw found ran won wrote held paid said kept left brought thought told became
    began led met put sent spent stood built bought chose drew drove fell felt fought grew heard knew lost meant
    rose sold showed shown taught""".split()
)
# words of five letters or more in "-ed" that are no verb in the past
_NOT_PAST = frozenset("speed breed greed bleed indeed hundred kindred".split())


def _ends_topic(word: str) -> bool:
    """Whether ``word`` (lower case) is the verb after a question's topic: a listed verb or one in the past."""
    if word in _TOPIC_END or word in _IRREGULAR_PAST:
        return True
    return len(word) >= 5 and word.endswith("ed") and word not in _NOT_PAST


def question_topic(part: str) -> str:
    """The first run of content words of a question part, up to its verb: the part's topic ("How many
    [people] took part …", "Does [atrial fibrillation] increase …"); the word after "how" (many, much, long)
    is not."""
    words: list[str] = []
    previous = ""
    for token in part.strip().rstrip("?.! ").split():
        bare = token.strip(",;:()").lower()
        if _ends_topic(bare) or (bare in STOP_WORDS and words):
            break
        if bare and bare not in STOP_WORDS and bare not in _QWORDS_SET and previous != "how":
            words.append(token.strip(",;:()"))
        previous = bare
    return " ".join(words)


def resolve_pronouns(parts: list[str]) -> list[str]:
    """Replace a pronoun in every part after the first by the first part's topic."""
    if len(parts) < 2:
        return parts
    topic = question_topic(parts[0])
    if not topic:
        return parts
    return [parts[0], *(_PRONOUN.sub(topic, p, count=1) for p in parts[1:])]


def heuristic_aspects(question: str, settings: ResearchSettings) -> list[QueryAspect]:
    """Aspects of ``question`` by pattern; always at least one (the question itself)."""
    w = AspectWeights.from_settings(settings)
    parts = resolve_pronouns([p for p in _PART_SPLIT.split(question) if p and len(keywords_of(p)) > 0])
    aspects: list[QueryAspect] = []
    seen: set[str] = set()
    for part in parts or [question]:
        for aspect in _part_aspects(part, w):
            key = f"{aspect.aspect_type}:{aspect.aspect.lower()}"
            if key not in seen and aspect.keywords:
                seen.add(key)
                aspects.append(aspect)
    if not aspects:
        aspects.append(_aspect(question, AspectType.DEFINITION, w.main))
    return aspects


_QUESTION_START = re.compile(rf"^{_QWORDS}\b|^(?:has|have|had|will|would|may|might|must)\b", re.I)


def subquestion_for(aspect: QueryAspect) -> str:
    """A sub-question that targets one aspect, worded as a person would ask it.

    A part that already is a question is asked as it is ("Does atrial fibrillation increase the risk of
    stroke?"); otherwise the aspect's type gives the wording: "What are statins?" for a short definition,
    "How do statins and PCSK9 inhibitors compare?", "What are the benefits and risks of statin therapy?",
    "How is aspirin used?".
    """
    text = aspect.aspect.strip().rstrip("?.! ")
    if _QUESTION_START.match(text):
        return _sentence_case(f"{text}?")
    kind = aspect.aspect_type
    if kind is AspectType.COMPARISON:
        sides = comparison_sides(text)
        return f"How do {sides[0]} and {sides[1]} compare?" if sides else _sentence_case(f"{text}?")
    if kind is AspectType.DEFINITION and len(text.split()) <= 8:
        plural = re.search(r"[^su]s$", text.split()[-1])
        return f"What {'are' if plural else 'is'} {text}?"
    if kind is AspectType.EVALUATION:
        if _EVALUATION.search(text):
            return (
                f"What is known about the {text}?"
                if _LEADS_WITH_NOUN.match(text)
                else f"What is known about {text}?"
            )
        return f"What are the benefits and risks of {text}?"
    if kind is AspectType.APPLICATION:
        return f"What is known about {text}?" if _APPLICATION.search(text) else f"How is {text} used?"
    return _sentence_case(f"{text}?")


# an evaluation phrase that starts with its noun ("advantages of …", "risks of …") reads with "the"
_LEADS_WITH_NOUN = re.compile(
    r"^(?:advantages?|disadvantages?|benefits?|risks?|drawbacks?|limitations?|strengths?)\b", re.I
)


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]
