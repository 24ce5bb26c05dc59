"""The clinical intent catalogue (package data) and the phrase matching the offline analyses rest on.

``deepcite/data/practitioners/clinical_intents.json`` lists intents (``arrhythmia_rhythm``, ``kidney`` …),
each with trigger phrases by kind (procedures, diagnoses, symptoms, terms, specialty words, general words),
abbreviations, the CMS specialties that treat it, expansion terms, anchor phrases and negative terms. Trigger
matching runs on the request as :class:`~deepcite.practitioners.words.Reading` reads it (contractions whole and
expanded, lay words read clinically, then stemmed with stop words dropped but phrasal particles kept) as
contiguous token sequences, so "palpitation" finds "palpitations", "SVT" finds "svt" and "running" is no
"run down"; a two-word trigger also in either order, a few words apart (``analysis.trigger_window``: "plan
meals" is a "meal plan"). Cues (urgency, preferences, uncertainty, populations) keep their stop words ("hurt myself" keeps
its "myself") but skip the catalogue's ``cue_skip_words`` ("my face is drooping" meets "face drooping");
location cues are matched on raw lower-case words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from deepcite.practitioners.taxonomy import read_data_file
from deepcite.practitioners.words import Reading
from deepcite.text import raw_tokens, tokenize

TriggerKind = Literal["procedure", "diagnosis", "specialty", "symptom", "term", "general"]
Specificity = Literal["named_procedure", "confirmed_diagnosis", "symptom", "general"]

# catalogue list field -> trigger kind
TRIGGER_FIELDS: dict[str, TriggerKind] = {
    "procedures": "procedure",
    "diagnoses": "diagnosis",
    "specialty_words": "specialty",
    "symptoms": "symptom",
    "terms": "term",
    "general": "general",
}

T = TypeVar("T")


def phrase_key(text: str) -> tuple[str, ...]:
    """The token sequence a phrase is matched by."""
    return tuple(tokenize(text))


class PhraseMatcher(Generic[T]):
    """Greedy longest-first matching of many phrases over a token sequence, left to right.

    At each position the longest phrase starting there wins and its tokens are consumed, so "chest pain"
    is matched as one phrase and "pain" alone is not matched inside it.
    """

    def __init__(self, entries: Iterable[tuple[str, T]], key: Callable[[str], list[str]] = tokenize) -> None:
        self.key = key
        self._table: dict[tuple[str, ...], list[T]] = {}
        for phrase, payload in entries:
            tokens = tuple(key(phrase))
            if tokens:
                self._table.setdefault(tokens, []).append(payload)
        self._longest = max((len(k) for k in self._table), default=0)

    def find(
        self, tokens: Sequence[str], window: int | None = 0
    ) -> list[tuple[int, tuple[str, ...], list[T]]]:
        """Each match as (start position, token key, payloads of every phrase with that key), in order.

        Phrases of two or more contiguous words are matched first (longest first, left to right); then, with a
        ``window`` (0 or more; None: contiguous words only), a two-word phrase also matches its two words in
        either order with at most ``window`` other words between them, among the words no contiguous phrase
        took: "plan meals" meets "meal plan", "surgery to remove a cancerous lump" meets "cancer surgery" and
        "lump removal", but "screening for colon cancer" keeps its "colon cancer" (no "cancer screening"); the
        remaining words match one-word phrases."""
        found: dict[int, tuple[tuple[str, ...], Sequence[int]]] = {}
        used: set[int] = set()
        passes: list[Callable[[int], tuple[tuple[str, ...], Sequence[int]] | None]] = [
            lambda i: self._contiguous(tokens, i, used, 2),
            lambda i: self._spread(tokens, i, used, window),
            lambda i: self._contiguous(tokens, i, used, 1, longest=1),
        ]
        for match in passes:
            for i in range(len(tokens)):
                hit = None if i in used else match(i)
                if hit is not None:
                    used.update(hit[1])
                    found[i] = hit
        return [(i, found[i][0], self._table[found[i][0]]) for i in sorted(found)]

    def _contiguous(
        self, tokens: Sequence[str], i: int, used: set[int], shortest: int, longest: int | None = None
    ) -> tuple[tuple[str, ...], range] | None:
        """The longest phrase of ``shortest`` to ``longest`` contiguous unused words starting at ``i``."""
        top = min(longest or self._longest, len(tokens) - i)
        for size in range(top, shortest - 1, -1):
            key = tuple(tokens[i : i + size])
            if key in self._table and not used.intersection(range(i, i + size)):
                return key, range(i, i + size)
        return None

    def _spread(
        self, tokens: Sequence[str], i: int, used: set[int], window: int | None
    ) -> tuple[tuple[str, ...], tuple[int, int]] | None:
        """A two-word phrase made of the word at ``i`` and an unused word at most ``window`` words further on,
        in either order (the nearest first); None without a window."""
        if window is None:
            return None
        for j in range(i + 1, min(len(tokens), i + window + 2)):
            if j in used:
                continue
            for key in ((tokens[i], tokens[j]), (tokens[j], tokens[i])):
                if key in self._table:
                    return key, (i, j)
        return None

    def find_in(self, text: str, window: int | None = None) -> list[tuple[int, tuple[str, ...], list[T]]]:
        """:meth:`find` over ``text`` tokenised with this matcher's key function."""
        return self.find(self.key(text), window)


def contains_phrase(tokens: Sequence[str], phrase_tokens: Sequence[str]) -> bool:
    """Whether ``phrase_tokens`` occurs contiguously in ``tokens``."""
    n = len(phrase_tokens)
    if n == 0:
        return False
    first = phrase_tokens[0]
    return any(
        tokens[i] == first and tuple(tokens[i : i + n]) == tuple(phrase_tokens)
        for i in range(len(tokens) - n + 1)
    )


class Intent(BaseModel):
    """One clinical intent: what patients say about it and whom it should reach."""

    id: str
    label: str
    specialties: list[str]  # the best fits: their names become intent terms
    related_specialties: list[str] = Field(default_factory=list)  # also treat it; coverage only
    procedures: list[str] = Field(default_factory=list)
    diagnoses: list[str] = Field(default_factory=list)
    specialty_words: list[str] = Field(default_factory=list)
    symptoms: list[str] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)
    general: list[str] = Field(default_factory=list)
    abbreviations: dict[str, str] = Field(default_factory=dict)
    expansion_terms: list[str] = Field(default_factory=list)
    anchor_phrases: list[str] = Field(default_factory=list)
    negative_terms: list[str] = Field(default_factory=list)
    # the intents that care for a patient once this intent's procedure or diagnosis is past ("after my hip
    # replacement": physical therapy)
    aftercare: list[str] = Field(default_factory=list)

    def triggers(self) -> Iterable[tuple[str, TriggerKind]]:
        """Every trigger phrase with its kind."""
        for field, kind in TRIGGER_FIELDS.items():
            for phrase in getattr(self, field):
                yield phrase, kind


class UrgencyRule(BaseModel):
    """An urgency level, the words that call for it and the advice shown. ``onset_cues`` count only when the
    conversation also says it is happening now (an onset marker: "chest pain" + "started ten minutes ago")."""

    level: Literal["crisis", "emergency", "urgent"]
    cues: list[str]
    note: str
    specialties: list[str] = Field(default_factory=list)  # listed after the guidance, for crisis/emergency
    onset_cues: list[str] = Field(default_factory=list)


class PopulationRule(BaseModel):
    """Who the care is for (a child, an older adult, a pregnancy): the words and ages that say so, the
    specialties that care for them, the ``variants`` that replace a general specialty for them ("FAMILY
    PRACTICE" -> "PEDIATRIC MEDICINE"), the specialties ``not_for`` them, and the reason a patient reads."""

    label: str
    cues: list[str]
    specialties: list[str]
    min_age: int | None = None
    max_age: int | None = None
    variants: dict[str, str] = Field(default_factory=dict)
    not_for: list[str] = Field(default_factory=list)
    excludes_intents: list[str] = Field(default_factory=list)  # intents its cue words may trigger wrongly
    # populations whose cues in the same turn it wins over (a pregnancy's "baby" is no child of the patient's)
    outranks: list[str] = Field(default_factory=list)
    reason: str = ""  # "cares for children"
    not_for_reason: str = ""  # "mostly cares for adults"

    def fits_age(self, age: int) -> bool:
        """Whether a person of ``age`` belongs to this population (a rule with no bounds takes no age)."""
        if self.min_age is None and self.max_age is None:
            return False
        return (self.min_age is None or age >= self.min_age) and (self.max_age is None or age <= self.max_age)


class PreferenceRule(BaseModel):
    label: str
    cues: list[str]


@dataclass(frozen=True)
class Trigger:
    """A trigger phrase of an intent; ``expansion`` is set when the phrase is an abbreviation, ``past`` when the
    patient names it as a past event ("after my hip replacement")."""

    phrase: str
    kind: TriggerKind
    intent_id: str
    expansion: str | None = None
    past: bool = False


@dataclass(frozen=True)
class PastReading:
    """How a trigger the patient names as past counts: one of ``kinds`` with a catalogue ``past_before`` marker
    at most ``window`` words before it ("after my hip replacement", "I had a knee replacement") or a
    ``past_after`` phrase at most ``window`` words after it ("a stroke two years ago") weighs ``factor`` of its
    weight, and its intent's ``aftercare`` intents get the rest."""

    window: int
    factor: float
    kinds: frozenset[str]


class Catalogue(BaseModel):
    """The whole catalogue file."""

    version: int
    trigger_weights: dict[TriggerKind, float]
    specificity_of: dict[TriggerKind, Specificity]
    confidence: dict[str, float]  # per specificity, plus "none" when nothing matched
    ambiguity_factor: float
    uncertainty_cues: list[str]
    location_cues: list[str]
    filler_words: list[str]
    urgency: list[UrgencyRule]
    preferences: list[PreferenceRule]
    populations: list[PopulationRule] = Field(default_factory=list)
    segment_words: list[str] = Field(
        default_factory=list
    )  # words a request is split at for the semantic stage
    # how words are read (deepcite.practitioners.words): contractions kept whole and expanded, lay words read
    # clinically, the phrasal particles trigger phrases keep, the words cue matching skips
    contractions: dict[str, str] = Field(default_factory=dict)
    lay_terms: dict[str, str] = Field(default_factory=dict)
    particles: list[str] = Field(default_factory=list)
    cue_skip_words: list[str] = Field(default_factory=list)
    # urgency that fits: onset markers make an onset cue count; a past marker before (or a time-ago phrase after)
    # an emergency cue makes it a past event
    onset_markers: list[str] = Field(default_factory=list)
    # an event still going on: its words hold a past marker that is none ("I've had headaches for months")
    ongoing_markers: list[str] = Field(default_factory=list)
    past_before: list[str] = Field(default_factory=list)
    past_after: list[str] = Field(default_factory=list)
    intents: list[Intent]

    @classmethod
    def load(cls) -> Catalogue:
        """The catalogue shipped with deepcite (cached)."""
        return _packaged_catalogue()

    @cached_property
    def reading(self) -> Reading:
        """How this catalogue reads a request's words."""
        return Reading(self.contractions, self.lay_terms, frozenset(self.particles))

    def cue_key(self, text: str) -> list[str]:
        """The key urgency, population, preference and uncertainty cues are matched by."""
        return self.reading.cue_key(text, self._cue_skipped)

    @cached_property
    def _cue_skipped(self) -> frozenset[str]:
        return frozenset(self.cue_skip_words)

    @cached_property
    def by_id(self) -> dict[str, Intent]:
        return {intent.id: intent for intent in self.intents}

    @cached_property
    def trigger_matcher(self) -> PhraseMatcher[Trigger]:
        entries: list[tuple[str, Trigger]] = []
        for intent in self.intents:
            kinds = {tuple(self.reading.key(p)): k for p, k in intent.triggers()}
            entries.extend((p, Trigger(p, k, intent.id)) for p, k in intent.triggers())
            for abbreviation, expansion in intent.abbreviations.items():
                kind = kinds.get(tuple(self.reading.key(expansion)), "diagnosis")
                entries.append((abbreviation, Trigger(abbreviation, kind, intent.id, expansion)))
        return PhraseMatcher(entries, key=self.reading.key)

    @cached_property
    def uncertainty_matcher(self) -> PhraseMatcher[str]:
        return PhraseMatcher(((cue, cue) for cue in self.uncertainty_cues), key=self.cue_key)

    @cached_property
    def urgency_matcher(self) -> PhraseMatcher[UrgencyRule]:
        return PhraseMatcher(((cue, rule) for rule in self.urgency for cue in rule.cues), key=self.cue_key)

    @cached_property
    def onset_cue_matcher(self) -> PhraseMatcher[UrgencyRule]:
        return PhraseMatcher(((cue, r) for r in self.urgency for cue in r.onset_cues), key=self.cue_key)

    @cached_property
    def time_matcher(self) -> PhraseMatcher[str]:
        """Onset markers ("onset"), past markers before ("before") and after ("after") an urgency cue, and the
        ongoing markers ("ongoing") that hold a past marker's word but are none ("has had")."""
        entries = [
            *((m, "onset") for m in self.onset_markers),
            *((m, "ongoing") for m in self.ongoing_markers),
            *((m, "before") for m in self.past_before),
            *((m, "after") for m in self.past_after),
        ]
        return PhraseMatcher(entries, key=self.cue_key)

    @cached_property
    def preference_matcher(self) -> PhraseMatcher[str]:
        return PhraseMatcher(((cue, r.label) for r in self.preferences for cue in r.cues), key=self.cue_key)

    @cached_property
    def population_matcher(self) -> PhraseMatcher[PopulationRule]:
        return PhraseMatcher(((cue, r) for r in self.populations for cue in r.cues), key=self.cue_key)

    def segments(self, text: str) -> list[str]:
        """The parts of a request between ``segment_words`` and punctuation, each with a non-filler word."""
        cut = set(self.segment_words)
        parts: list[list[str]] = [[]]
        for token in re.findall(r"[\w'-]+|[.,;:!?\n]", text.lower()):
            if token in cut or not token[0].isalnum():
                parts.append([])
            else:
                parts[-1].append(token)
        kept = [
            " ".join(p)
            for p in parts
            if any(tokenize(w) and tokenize(w)[0] not in self.filler_tokens for w in p)
        ]
        return list(dict.fromkeys(kept))

    def population_of(self, label: str | None) -> PopulationRule | None:
        """The population rule with this label."""
        return next((rule for rule in self.populations if rule.label == label), None)

    def urgency_rule(self, level: str) -> UrgencyRule | None:
        """The rule of an urgency level (None for routine)."""
        return next((rule for rule in self.urgency if rule.level == level), None)

    @cached_property
    def filler_tokens(self) -> frozenset[str]:
        return frozenset(t for word in self.filler_words for t in tokenize(word))

    @cached_property
    def location_cue_matcher(self) -> PhraseMatcher[str]:
        return PhraseMatcher(((cue, cue) for cue in self.location_cues), key=raw_tokens)

    def past_marks(self, text: str) -> tuple[list[int], list[int]]:
        """Where past markers sit in :meth:`Reading.meaning` of ``text``: the position just after each marker
        that comes before an event ("after", "had"), and the first position of each that comes after one
        ("two years ago")."""
        keyed = self.reading.cue_keyed(text, self._cue_skipped)
        tokens = [token for token, _ in keyed]
        before: list[int] = []
        after: list[int] = []
        for start, key, kinds in self.time_matcher.find(tokens, None):
            if "before" in kinds:
                before.append(keyed[start + len(key) - 1][1] + 1)
            if "after" in kinds:
                after.append(keyed[start][1])
        return before, after

    def urgency_note(self, level: str) -> str | None:
        """The advice shown for an urgency level (None for routine)."""
        rule = self.urgency_rule(level)
        return rule.note if rule else None


@dataclass
class IntentMatch:
    """An intent the text triggered, its summed trigger weight, and the triggers that fired."""

    intent: Intent
    score: float
    triggers: list[Trigger]


def match_intents(
    text: str, catalogue: Catalogue, window: int | None = None, past: PastReading | None = None
) -> list[IntentMatch]:
    """Intents triggered by ``text``, best first (ties keep catalogue order); ``window``: see
    :meth:`PhraseMatcher.find` (a two-word trigger in either order, words apart); ``past``: see
    :class:`PastReading` (None: every trigger counts in full)."""
    found: dict[str, IntentMatch] = {}

    def add(intent_id: str, weight: float, trigger: Trigger) -> None:
        match = found.setdefault(intent_id, IntentMatch(catalogue.by_id[intent_id], 0.0, []))
        match.score += weight
        match.triggers.append(trigger)

    keyed = catalogue.reading.keyed(text)
    before, after = catalogue.past_marks(text) if past is not None else ([], [])
    for start, key, triggers in catalogue.trigger_matcher.find([token for token, _ in keyed], window):
        first, last = keyed[start][1], keyed[min(start + len(key), len(keyed)) - 1][1]
        for intent_id in dict.fromkeys(t.intent_id for t in triggers):
            trigger = next(t for t in triggers if t.intent_id == intent_id)
            weight = catalogue.trigger_weights[trigger.kind]
            if past is not None and trigger.kind in past.kinds and _is_past(first, last, before, after, past):
                trigger = replace(trigger, past=True)
                for care in catalogue.by_id[intent_id].aftercare:
                    add(care, weight * (1.0 - past.factor), replace(trigger, intent_id=care))
                weight *= past.factor
            add(intent_id, weight, trigger)
    order = {intent.id: i for i, intent in enumerate(catalogue.intents)}
    return sorted(found.values(), key=lambda m: (-m.score, order[m.intent.id]))


def _is_past(first: int, last: int, before: list[int], after: list[int], past: PastReading) -> bool:
    """Whether a trigger spanning meaning words ``first``..``last`` has a past marker close before or after."""
    return any(first - past.window <= b <= first for b in before) or any(
        last < a <= last + 1 + past.window for a in after
    )


def named_specialties(
    text: str,
    catalogue: Catalogue,
    kinds: Iterable[str],
    window: int | None = None,
    past: PastReading | None = None,
) -> list[str]:
    """The best-fit specialties of each intent the text names by a trigger of one of ``kinds`` ("an
    anesthesiologist" is a specialty word, "breast reconstruction" a procedure), not as a past event: what the
    patient asked for."""
    wanted = set(kinds)
    named = [
        specialty.strip().upper()
        for match in match_intents(text, catalogue, window, past)
        if any(t.kind in wanted and not t.past for t in match.triggers)
        for specialty in match.intent.specialties
    ]
    return list(dict.fromkeys(named))


@lru_cache(maxsize=1)
def _packaged_catalogue() -> Catalogue:
    return Catalogue.model_validate(read_data_file("clinical_intents.json"))
