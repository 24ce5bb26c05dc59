"""Merge the analyses into the terms stage B scores with, and decide whether the query is clear."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from deepcite.config import PractitionerSettings
from deepcite.practitioners.api import IntentTerms, SpecialtyMatch
from deepcite.practitioners.catalogue import Catalogue, Intent, contains_phrase, phrase_key
from deepcite.practitioners.schemas import ClinicalIntent, GeneralIntent, Insights
from deepcite.practitioners.semantic import SpecialtySimilarity
from deepcite.practitioners.taxonomy import Taxonomy

CLEAR_SPECIFICITIES = frozenset({"named_procedure", "confirmed_diagnosis"})


class MergedIntent(IntentTerms):
    """What stage B matches against profiles.

    ``intent_terms``: the clinical analysis's terms (expansion terms, then likely subspecialties), then the
    general analysis's, de-duplicated in order (by their stemmed tokens) and without the anchor phrases.
    ``negative_terms`` are applied only when ``clear``: confidence >= ``analysis.clear_confidence`` and the
    specificity is named_procedure or confirmed_diagnosis. A negative term that contains, or is contained
    in, an intent term or anchor phrase is dropped.
    """

    confidence: float = 0.0
    specialties: list[SpecialtyMatch] = Field(default_factory=list)
    request_specialties: list[str] = Field(default_factory=list)  # what the stage-B floor protects
    # intent terms that only a secondary offline intent brought (see :func:`secondary_terms`)
    secondary_terms: list[str] = Field(default_factory=list)
    # the anchor phrases the patient's own words hold (read as meant), not only those the intent brought
    patient_anchors: list[str] = Field(default_factory=list)


def _dedupe(terms: Iterable[str], exclude: set[tuple[str, ...]] | None = None) -> list[str]:
    seen = set(exclude or ())
    out: list[str] = []
    for term in terms:
        key = phrase_key(term)
        if key and key not in seen:
            seen.add(key)
            out.append(term)
    return out


def merge_intent(
    q_patient: str, general: GeneralIntent, clinical: ClinicalIntent, settings: PractitionerSettings
) -> MergedIntent:
    """Intent terms, anchors, negatives and clarity from the general and clinical analyses."""
    anchors = _dedupe(general.anchor_phrases)
    anchor_keys = {phrase_key(a) for a in anchors}
    terms = _dedupe(
        [
            *clinical.expansion_terms,
            *clinical.likely_subspecialties,
            *general.expansion_terms,
            *general.likely_subspecialties,
        ],
        exclude=anchor_keys,
    )
    positive = [phrase_key(t) for t in [*terms, *anchors]]
    negatives = [
        n
        for n in _dedupe([*clinical.negative_terms, *general.negative_terms])
        if not any(contains_phrase(p, phrase_key(n)) or contains_phrase(phrase_key(n), p) for p in positive)
    ]
    clear = (
        general.confidence >= settings.analysis.clear_confidence
        and general.specificity in CLEAR_SPECIFICITIES
    )
    return MergedIntent(
        q_patient=q_patient,
        intent_terms=terms,
        anchor_phrases=anchors,
        negative_terms=negatives,
        clear=clear,
        confidence=general.confidence,
    )


def secondary_terms(terms: list[str], top: Intent | None, patient_terms: list[str]) -> list[str]:
    """The intent terms that are neither the best intent's (its expansion terms and specialties) nor the
    patient's own trigger phrases: what only a secondary intent brought, weighed less in stage B."""
    if top is None:
        return []
    primary = {phrase_key(t) for t in [*top.expansion_terms, *top.specialties, *patient_terms]}
    return [t for t in terms if phrase_key(t) not in primary]


def specialty_matches(
    proposals: list[SpecialtySimilarity],
    *,
    insights: Insights,
    general: GeneralIntent,
    clinical: ClinicalIntent,
    clinical_from_llm: bool,
    catalogue: Catalogue,
    taxonomy: Taxonomy,
    known: set[str],
    settings: PractitionerSettings,
) -> list[SpecialtyMatch]:
    """The specialties the request points to, each with its boost.

    Semantic proposals get ``semantic.boost * similarity / best``, scaled by ``semantic.catalogue_factor``
    when the catalogue or the LLM already has a confident intent (unless the similarity reaches
    ``semantic.strong_similarity``: a near-verbatim match of a specialty's cue stands on its own); the LLM's likely specialties that the
    directory holds get the scaled boost; the population's and the urgency level's specialties get
    ``ranking.population_boost`` (``ranking.population_symptom_boost`` when the request names no procedure or
    diagnosis; both times ``ranking.population_urgency_factor`` when a crisis or an emergency names specialties of
    its own) and ``ranking.urgency_boost``; a population's variant of a specialty the request points to, or that
    also treats the offline intent (a child's "PEDIATRIC MEDICINE" for "FAMILY PRACTICE"), gets
    ``ranking.population_variant_boost`` (times the same factor), and the specialties not for that population
    lose ``ranking.population_penalty``. The offline intent's ``related_specialties`` get
    ``ranking.intent_specialty_boost * ranking.related_specialty_factor`` (``related_specialty_clear_factor`` when
    the request names a procedure or diagnosis) unless a kept intent names them.
    """
    confident = (
        clinical.primary_intent != "unknown" and general.confidence >= settings.semantic.catalogue_confidence
    )
    factor = settings.semantic.catalogue_factor if confident else 1.0
    out: list[SpecialtyMatch] = []
    best = proposals[0].similarity if proposals else 0.0
    for p in proposals:
        strong = settings.semantic.strong_similarity
        scale = 1.0 if strong is not None and p.similarity >= strong else factor
        out.append(
            SpecialtyMatch(
                specialty=p.specialty,
                source="semantic",
                boost=round(settings.semantic.boost * scale * p.similarity / best, 4),
                similarity=p.similarity,
                matched_text=p.matched.text,
                matched_kind=p.matched.kind,
            )
        )
    named: list[tuple[str, str, float]] = []
    r = settings.ranking
    related: list[str] = []
    if clinical_from_llm:
        boost = settings.semantic.boost * settings.semantic.catalogue_factor
        named += [(name, "llm", boost) for name in clinical.likely_subspecialties]
    else:
        top = catalogue.by_id.get(clinical.primary_intent)
        first = {name.strip().upper() for name in (top.specialties if top else [])}
        named += [
            (
                name,
                "intent",
                r.intent_specialty_boost
                * (1.0 if name.strip().upper() in first else r.secondary_intent_factor),
            )
            for name in clinical.likely_subspecialties
        ]
        # the specialties that also treat what the request is mostly about, after its best fits (a named
        # procedure or diagnosis goes to its best fits first)
        related = top.related_specialties if top else []
        clear = general.specificity in CLEAR_SPECIFICITIES
        factor = r.related_specialty_clear_factor if clear else r.related_specialty_factor
        named += [(name, "intent", r.intent_specialty_boost * factor) for name in related]
    rule = catalogue.urgency_rule(insights.urgency)
    population = catalogue.population_of(insights.population)
    if population is not None:
        # a named procedure or diagnosis goes to its specialist first; a symptom to those who care for them;
        # what a crisis or an emergency calls for comes before who the patient is
        own = r.population_boost if general.specificity in CLEAR_SPECIFICITIES else r.population_symptom_boost
        scale = r.population_urgency_factor if rule is not None and rule.specialties else 1.0
        named += [(name, "population", own * scale) for name in population.specialties]
        asked = {m.specialty for m in out} | {
            s.strip().upper()
            for s in [*clinical.likely_subspecialties, *general.likely_subspecialties, *related]
        }
        variants = {v for base, v in population.variants.items() if base.strip().upper() in asked}
        named += [(variant, "population", r.population_variant_boost * scale) for variant in sorted(variants)]
        named += [(name, "population", -r.population_penalty) for name in population.not_for]
    if rule is not None:
        named += [(name, "urgency", settings.ranking.urgency_boost) for name in rule.specialties]
    summed: dict[tuple[str, str], float] = {}  # a specialty named twice by one source (a population's own
    for name, source, boost in named:  # and its variant) gets both boosts; an intent's first naming counts
        key = (name.strip().upper(), source)
        if key[0] in known and not (source == "intent" and key in summed):
            summed[key] = summed.get(key, 0.0) + boost
    seen = {(m.specialty, m.source) for m in out}
    for (name, source), boost in summed.items():
        if boost != 0 and (name, source) not in seen:
            out.append(SpecialtyMatch(specialty=name, source=source, boost=round(boost, 4)))  # type: ignore[arg-type]
    for match in out:
        match.definition = taxonomy.plain_definition(match.specialty)
    return out


def request_specialties(
    matches: list[SpecialtyMatch], general: GeneralIntent, clinical: ClinicalIntent, known: set[str]
) -> list[str]:
    """The directory specialties the request itself points to (semantic or LLM matches and the analyses'
    likely specialties): a strong literal stage-A match of one of them keeps the stage-B floor."""
    named = [m.specialty for m in matches if m.source in ("semantic", "llm")]
    named += [s.strip().upper() for s in [*clinical.likely_subspecialties, *general.likely_subspecialties]]
    unfit = {m.specialty for m in matches if m.boost < 0}  # not for who the care is for
    return sorted({s for s in named if s in known and s not in unfit})
