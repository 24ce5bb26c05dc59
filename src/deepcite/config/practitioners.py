"""Settings of the practitioner finder: its directory and limits, and each ranking stage's weights."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from deepcite.config.section import Section


class PractitionerAnalysisSettings(Section):
    """How a patient's words become an analysis: specialties, terms, the clinical intents they match."""

    timeout_s: float = 20.0  # an LLM analysis; the offline one is used when it fails or runs out
    clear_confidence: float = 0.75  # an analysis this confident is clear (not ambiguous)
    max_llm_terms: int = 15  # terms kept from each list an LLM analysis returns
    max_intents: int = 2  # offline clinical intents merged into one analysis (the best first)
    # an intent that scores below this fraction of the best intent is left out (and makes the query ambiguous
    # only above it)
    secondary_intent_ratio: float = 0.5
    # an emergency cue with a catalogue past_before word at most this many words before it is a past event
    # ("a checkup after a heart attack"): no emergency guidance
    past_window: int = 3
    # a trigger of these kinds the patient names as past ("after my hip replacement", "I had a knee replacement
    # last month": a past_before marker at most past_window words before it, or a past_after phrase at most
    # past_window words after it) weighs this fraction of its weight, and its intent's catalogue aftercare
    # intents (physical therapy) get the rest; it names no specialty for the floor. 1.0: a past event counts as
    # a present one
    past_trigger_factor: float = 0.3
    past_kinds: list[str] = Field(default_factory=lambda: ["procedure", "diagnosis"])
    # a two-word trigger phrase also matches its words in either order with at most this many other words
    # between them ("plan meals" is a "meal plan", "surgery to remove a cancerous lump" a "cancer surgery"); None: in
    # the catalogue's order only
    trigger_window: int | None = 1


class PractitionerSemanticSettings(Section):
    """The semantic stage: the patient's words against each directory specialty's name, NUCC definition
    sentences and catalogue cues (embedded once per directory, stored in the SQLite file). A specialty is
    proposed when its best cosine similarity is at least ``min_similarity`` and within ``margin`` of the best;
    its practitioners get ``boost * similarity / best similarity``, scaled by ``catalogue_factor`` when the
    catalogue (or LLM) has an intent at least ``catalogue_confidence`` confident of its own."""

    enabled: bool = True
    min_similarity: float = 0.5
    margin: float = 0.08
    max_specialties: int = 5
    definition_sentences: int = 3  # NUCC definition sentences embedded per specialty
    boost: float = 1.0
    # 0: where the catalogue knows the intent, the semantic stage decides nothing (it proposes for the requests
    # the catalogue cannot read)
    catalogue_factor: float = 0.0
    catalogue_confidence: float = 0.6
    # a proposal this similar keeps its full boost regardless, and gets a reserved place (None: none does)
    strong_similarity: float | None = None
    fill_k: int = 15  # practitioners added per proposed specialty (nearest location filter applied)


class PractitionerRankingSettings(Section):
    """Stage A (BM25 candidates) and stage B (the request's terms, phrases and cues re-scoring them)."""

    stage_a_k: int = 50
    intent_term_boost: float = 0.3
    max_intent_terms: int | None = 4  # intent terms a profile is boosted for (None: every one it contains)
    # an intent term only a secondary offline intent brought (not the best intent's, not the patient's words)
    # boosts by intent_term_boost times this
    secondary_term_factor: float = 0.5
    anchor_phrase_boost: float = 0.5
    negative_penalty_min: float = 1.0
    negative_penalty_max: float = 3.0
    # population (a child, an older adult) and urgency (crisis, emergency) cues name specialties of their own
    population_boost: float = 1.5
    population_symptom_boost: float = 2.5  # the same when the request names no procedure or diagnosis
    # a population's variant of a specialty the request points to (a child's pediatrics for family practice),
    # and the penalty of the specialties not for that population (internal medicine for a child)
    population_variant_boost: float = 1.0
    population_penalty: float = 1.0
    urgency_boost: float = 4.0
    # the offline clinical intent's best-fit specialties (its first intent's in full, the others' times the
    # factor); off when an LLM names the specialties
    intent_specialty_boost: float = 1.0
    secondary_intent_factor: float = 0.5
    # the specialties that also treat the offline intent (its related_specialties) get intent_specialty_boost
    # times this, and count as specialties the request points to for a population's variants
    related_specialty_factor: float = 0.75
    related_specialty_clear_factor: float = 0.5  # the same when the request names a procedure or diagnosis
    # the population's own boosts are multiplied by this when a crisis or an emergency names specialties
    population_urgency_factor: float = 0.5
    # stage A is "short" when fewer than the requested results fit the intent (at least this many intent
    # terms, or an anchor phrase): the candidate set is then filled by BM25 searches on the intent terms
    fill_min_intent_matches: int = 2
    # nearby-first ordering applies to candidates scoring at least this fraction of the best score
    nearby_min_score_ratio: float = 0.5


class PractitionerQualitySettings(Section):
    """Quality boosts: rating/5 * ``rating_boost_max``; log1p(reviews)/log1p(``reviews_saturation``) capped at
    1; years of experience / ``experience_saturation_years`` capped at 1."""

    rating_boost_max: float = 0.3
    reviews_boost_max: float = 0.2
    experience_boost_max: float = 0.2
    reviews_saturation: int = 500
    experience_saturation_years: int = 30
    reference_year: int | None = None  # year experience is counted to; None means the current year


class PractitionerFloorSettings(Section):
    """Stage B's floor and reserved slots. A stage-A candidate with at least ``min_bm25_share`` of the best BM25
    whose profile literally contains an anchor phrase of the request, or whose specialty the request names,
    keeps at least ``ratio`` of the best final score (lifted by at most ``max_lift``). A specialty the request
    names strongly (semantic similarity >= semantic.strong_similarity, or urgency) with no practitioner in the
    results gets its best one moved to ``reserved_slot_position`` (at most ``reserved_slots_max``)."""

    min_bm25_share: float = 0.8
    # only an anchor phrase the patient's own words hold keeps the floor, not one the intent brought (a
    # specialty's name the patient never wrote)
    patient_anchors_only: bool = True
    # None: every specialty the request points to keeps the floor; else only the best fits of the intents the
    # patient named by a catalogue trigger of these kinds ("an anesthesiologist" is a specialty word, "breast
    # reconstruction" a procedure), or an LLM's likely specialties; and no anchor phrase that is the patient's
    # trigger of another kind keeps it (a symptom's "back pain" found in a rheumatologist's profile)
    named_by: list[str] | None = Field(default_factory=lambda: ["specialty", "procedure"])
    ratio: float = 1.0
    max_lift: float = 3.0
    reserved_slot_position: int = 4
    reserved_slots_max: int = 2


class PractitionerSettings(Section):
    """The practitioner finder: its directory and limits here, each stage's weights in its own section."""

    db_path: Path | None = None  # None means <data_dir>/practitioners.sqlite
    collection: str = "practitioners"  # the BM25-only search collection holding one profile per NPI
    index_batch: int = 500  # profiles upserted into the search store per call
    result_limit: int = 15
    max_query_chars: int = 2000
    max_conversation_chars: int = 8000  # all messages together; older messages are dropped beyond this
    analysis: PractitionerAnalysisSettings = Field(default_factory=PractitionerAnalysisSettings)
    semantic: PractitionerSemanticSettings = Field(default_factory=PractitionerSemanticSettings)
    ranking: PractitionerRankingSettings = Field(default_factory=PractitionerRankingSettings)
    quality: PractitionerQualitySettings = Field(default_factory=PractitionerQualitySettings)
    floor: PractitionerFloorSettings = Field(default_factory=PractitionerFloorSettings)
