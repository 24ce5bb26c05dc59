"""Offline analyses: insights, general intent and clinical intent from the catalogue, with no LLM.

Everything here reads the catalogue (triggers, weights, confidences, cues); no medical knowledge lives in
code. The intents kept for a query are the best one plus any scoring at least
``PractitionerSettings.analysis.secondary_intent_ratio`` of it, up to ``analysis.max_intents``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import get_args

from deepcite.config import PractitionerSettings
from deepcite.practitioners.catalogue import (
    Catalogue,
    IntentMatch,
    PastReading,
    PhraseMatcher,
    Specificity,
    UrgencyRule,
    match_intents,
)
from deepcite.practitioners.schemas import ClinicalIntent, GeneralIntent, Insights
from deepcite.practitioners.words import APOSTROPHES
from deepcite.text import raw_tokens

# most specific first: the order of the Specificity values
SPECIFICITY_ORDER: tuple[Specificity, ...] = get_args(Specificity)
URGENCY_ORDER = ("crisis", "emergency", "urgent")


@dataclass
class Conversation:
    """The patient's words: the current request, earlier messages, and a location if one was given."""

    user_query: str
    messages: list[tuple[str, str]] = field(default_factory=list)  # (role, content), oldest first
    location: str | None = None

    @property
    def user_turns(self) -> list[str]:
        """What the patient wrote, turn by turn: earlier user messages, then the current request."""
        return [*(content for role, content in self.messages if role == "user"), self.user_query]

    @property
    def patient_text(self) -> str:
        """Everything the patient wrote: earlier user messages, then the current request."""
        return "\n".join(self.user_turns)

    def transcript(self) -> str:
        """The conversation as ``role: text`` lines, for an LLM prompt."""
        lines = [f"{role}: {content}" for role, content in self.messages]
        lines.append(f"user: {self.user_query}")
        return "\n".join(lines)


def past_reading(settings: PractitionerSettings) -> PastReading:
    """How triggers named as past events count (``analysis.past_window``, ``past_trigger_factor``,
    ``past_kinds``)."""
    a = settings.analysis
    return PastReading(a.past_window, a.past_trigger_factor, frozenset(a.past_kinds))


def kept_intents(
    conversation: Conversation, catalogue: Catalogue, settings: PractitionerSettings
) -> list[IntentMatch]:
    """The intents the patient's words are about: the best, and those close enough to it, leaving out those
    the population the care is for excludes (a baby's yellow skin is no pregnancy)."""
    rule = catalogue.population_of(find_population(conversation, catalogue))
    excluded = set(rule.excludes_intents) if rule is not None else set()
    window = settings.analysis.trigger_window
    found = match_intents(conversation.patient_text, catalogue, window, past_reading(settings))
    matches = [m for m in found if m.intent.id not in excluded]
    if not matches:
        return []
    floor = matches[0].score * settings.analysis.secondary_intent_ratio
    return [m for m in matches if m.score >= floor][: settings.analysis.max_intents]


def _specificity(matches: list[IntentMatch], catalogue: Catalogue, uncertain: bool) -> Specificity:
    found: set[Specificity] = set()
    for match in matches:
        for trigger in match.triggers:
            level = catalogue.specificity_of[trigger.kind]
            if uncertain and level == "confirmed_diagnosis":
                level = "symptom"
            found.add(level)
    return next((level for level in SPECIFICITY_ORDER if level in found), "general")


def offline_general(
    conversation: Conversation, catalogue: Catalogue, settings: PractitionerSettings
) -> GeneralIntent:
    """Specificity, confidence, anchors and expansions from the catalogue's trigger phrases."""
    text = conversation.patient_text
    matches = kept_intents(conversation, catalogue, settings)
    if not matches:
        return GeneralIntent(goal="find a practitioner", confidence=catalogue.confidence["none"])
    uncertain = bool(catalogue.uncertainty_matcher.find_in(text))
    specificity = _specificity(matches, catalogue, uncertain)
    confidence = catalogue.confidence[specificity]
    if len(matches) > 1:
        confidence *= catalogue.ambiguity_factor
    fired = [t for m in matches for t in m.triggers]
    phrases = [t.expansion or t.phrase for t in fired]
    multiword = [p for t in fired if len((p := t.expansion or t.phrase).split()) > 1]
    top = matches[0].intent
    return GeneralIntent(
        goal=f"find a practitioner for {top.label} ({', '.join(dict.fromkeys(phrases))})",
        specificity=specificity,
        confidence=round(confidence, 4),
        expansion_terms=phrases,
        negative_terms=[],
        anchor_phrases=[*top.anchor_phrases, *multiword],
        likely_subspecialties=[m.intent.specialties[0] for m in matches],
    )


def offline_clinical(
    conversation: Conversation, catalogue: Catalogue, settings: PractitionerSettings
) -> ClinicalIntent:
    """The best intent's id, expansion and negative terms, and the kept intents' specialties."""
    matches = kept_intents(conversation, catalogue, settings)
    if not matches:
        return ClinicalIntent(primary_intent="unknown")
    top = matches[0].intent
    return ClinicalIntent(
        primary_intent=top.id,
        expansion_terms=[term for m in matches for term in m.intent.expansion_terms],
        negative_terms=top.negative_terms,
        likely_subspecialties=[spec for m in matches for spec in m.intent.specialties],
    )


def find_city(text: str, catalogue: Catalogue, cities: list[str]) -> str | None:
    """A directory city the text names after a location cue ("in Portland", "near Bangor")."""
    if not cities:
        return None
    tokens = raw_tokens(text)
    city_matcher: PhraseMatcher[str] = PhraseMatcher(((c, c) for c in cities), key=raw_tokens)
    cue_ends = {start + len(key) for start, key, _ in catalogue.location_cue_matcher.find(tokens)}
    for start, _key, names in city_matcher.find(tokens):
        if start in cue_ends:
            return names[0]
    return None


_AGE_WORDS = r"(?:years?|yrs?)[ -]old|y/?o\b"
_INFANT_WORDS = r"(?:months?|weeks?|days?)[ -]old"
_AGE = re.compile(
    rf"\b(\d{{1,3}})[ -]?(?:(?P<years>{_AGE_WORDS})|(?P<infant>{_INFANT_WORDS}))"
    r"|\b(?:i'?m|i am|he'?s|she'?s|he is|she is|who is|who's|aged?)\s+(?P<stated>\d{1,3})\b(?!\s*(?:weeks?|months?|days?))"
    r"|\bin (?:my|his|her|their) (?P<decade>[1-9]0)s\b"
)


def stated_age(text: str) -> int | None:
    """The last age the text states: "my 4 year old", "she's 88", "6 months old" (0), "in his 80s"."""
    ages: list[int] = []
    for match in _AGE.finditer(text.lower().translate(APOSTROPHES)):
        if match.group("infant"):
            ages.append(0)
        elif match.group("years") or match.group("stated"):
            ages.append(int(match.group(1) or match.group("stated")))
        elif match.group("decade"):
            ages.append(int(match.group("decade")))
    return ages[-1] if ages else None


def find_population(conversation: Conversation, catalogue: Catalogue) -> str | None:
    """Who the care is for, from the patient's words: the latest turn that says so wins, so a follow-up such
    as "actually, it's for my daughter" changes it; within a turn a stated age wins over a cue word, a
    population over those it ``outranks`` ("I'm pregnant and the baby is breech" is a pregnancy), and the last
    cue over earlier ones."""
    for turn in reversed(conversation.user_turns):
        age = stated_age(turn)
        if age is not None:
            rule = next((r for r in catalogue.populations if r.fits_age(age)), None)
            if rule is not None:
                return rule.label
        found = [rules[0] for _, _, rules in catalogue.population_matcher.find_in(turn)]
        if found:
            kept = [rule for rule in found if not any(rule.label in r.outranks for r in found)]
            return (kept or found)[-1].label
    return None


def urgency_cues(
    conversation: Conversation, catalogue: Catalogue, settings: PractitionerSettings
) -> list[tuple[UrgencyRule, str]]:
    """The urgency rules the conversation calls for, each with the words that did, as a triage nurse reads
    them: an onset cue ("chest pain") counts only with an onset marker anywhere in the conversation ("started
    ten minutes ago", "right now"); an emergency or urgent cue with a past marker up to
    ``analysis.past_window`` words before it ("after a heart attack", "since my stroke") or a time-ago phrase
    after it in the same turn ("my stroke two years ago") is a past event and counts for nothing. A crisis cue
    always counts."""
    window = settings.analysis.past_window
    turns = conversation.user_turns
    marks = [catalogue.time_matcher.find_in(turn) for turn in turns]
    now = any(kind == "onset" for found in marks for _, _, kinds in found for kind in kinds)
    out: list[tuple[UrgencyRule, str]] = []
    for turn, found_marks in zip(turns, marks, strict=True):
        before = [start + len(key) for start, key, kinds in found_marks if "before" in kinds]
        after = [start for start, _, kinds in found_marks if "after" in kinds]
        cues = catalogue.urgency_matcher.find_in(turn)
        if now:
            cues += catalogue.onset_cue_matcher.find_in(turn)
        for start, key, rules in cues:
            end = start + len(key)
            past = any(start - window <= b <= start for b in before) or any(a >= end for a in after)
            for rule in rules:
                if rule.level == "crisis" or not past:
                    out.append((rule, " ".join(key)))
    return out


def offline_insights(
    conversation: Conversation, catalogue: Catalogue, settings: PractitionerSettings, cities: list[str]
) -> Insights:
    """Symptoms, preferences, urgency, specialty and location from the catalogue's cue lists."""
    text = conversation.patient_text
    all_matches = match_intents(text, catalogue, settings.analysis.trigger_window, past_reading(settings))
    symptoms = [t.phrase for m in all_matches for t in m.triggers if t.kind == "symptom"]
    preferences = [label for _, _, labels in catalogue.preference_matcher.find_in(text) for label in labels]
    levels = {rule.level for rule, _ in urgency_cues(conversation, catalogue, settings)}
    urgency = next((level for level in URGENCY_ORDER if level in levels), "routine")
    kept = kept_intents(conversation, catalogue, settings)
    specialty = kept[0].intent.specialties[0] if kept else None
    population = find_population(conversation, catalogue)
    found = None if conversation.location else find_city(text, catalogue, cities)
    location = conversation.location or (found.title() if found else None)
    wants = kept[0].intent.label if kept else "not stated"
    summary = f"Looking for care for: {wants}. Urgency: {urgency}."
    if symptoms:
        summary += f" Symptoms: {', '.join(dict.fromkeys(symptoms))}."
    if population:
        summary += f" For: {population}."
    return Insights(
        symptoms=symptoms,
        preferences=preferences,
        urgency=urgency,
        specialty=specialty,
        location=location,
        population=population,
        summary=summary,
    )
