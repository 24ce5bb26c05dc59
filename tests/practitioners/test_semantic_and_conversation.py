"""The semantic stage, the stage-B floor, conversations, crisis guidance and explanations, on real CMS rows
(real SQLite directory, real Edge store, the real all-MiniLM-L6-v2 embedder) and through the real server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from server.conftest import ADMIN, LiveServer, headers, server_settings

from deepcite.config import PractitionerSettings
from deepcite.models import Chunk
from deepcite.practitioners.api import Adjustment, ChatMessage, PractitionerQuery, SpecialtyMatch
from deepcite.practitioners.context import FinderContext, FinderState, Stage, merged_of
from deepcite.practitioners.finder import PractitionerFinder
from deepcite.practitioners.merge import MergedIntent
from deepcite.practitioners.pipeline import FINDER_PIPELINE
from deepcite.practitioners.ranking import PractitionerCandidate, stage_b
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.semantic import SemanticStage
from deepcite.practitioners.stages import refuse_unknown_location
from deepcite.retrieval.embedders import Embedder
from practitioners.conftest import MAINE


async def ask(finder: PractitionerFinder, text: str, **kwargs: object):  # noqa: ANN201
    return await finder.search(PractitionerQuery(user_query=text, **kwargs))  # type: ignore[arg-type]


# -- the semantic stage ---------------------------------------------------------------------------------------


def test_semantic_stage_proposes_a_specialty_the_words_never_name(shared_finder: PractitionerFinder) -> None:
    proposals = shared_finder.semantic.propose("spinal adjustment for lower back pain")
    names = [p.specialty for p in proposals]
    assert "CHIROPRACTIC" in names
    chiro = next(p for p in proposals if p.specialty == "CHIROPRACTIC")
    assert chiro.similarity >= shared_finder.settings.practitioners.semantic.min_similarity
    assert chiro.matched.kind in ("name", "definition", "cue") and chiro.matched.text
    ranked = shared_finder.semantic.similarities("I need new glasses and an eye exam")
    assert ranked[0].specialty in ("OPTOMETRY", "OPHTHALMOLOGY")
    assert {r.specialty for r in ranked} == set(shared_finder.directory.primary_specialties())


def test_specialty_vectors_are_stored_once_with_the_directory(shared_finder: PractitionerFinder) -> None:
    stored = shared_finder.directory.specialty_vectors(shared_finder.semantic.model)
    assert {row[0] for row in stored} == set(shared_finder.directory.primary_specialties())
    assert {row[1] for row in stored} == {"name", "definition", "cue"}
    again = SemanticStage(
        shared_finder.directory,
        shared_finder.taxonomy,
        shared_finder.catalogue,
        shared_finder.settings,
        shared_finder.semantic.embedder,
    )
    assert again.sync() == 0  # a second stage over the same file embeds nothing


async def test_semantic_specialty_reaches_results_with_its_reason(
    beside_catalogue: PractitionerFinder,
) -> None:
    response = await ask(beside_catalogue, "spinal adjustment for lower back pain")
    assert any(m.specialty == "CHIROPRACTIC" and m.source == "semantic" for m in response.specialties)
    chiro = [r for r in response.results if r.primary_specialty == "CHIROPRACTIC"]
    assert chiro, [r.primary_specialty for r in response.results]
    first = chiro[0]
    boost = next(a for a in first.adjustments if a.kind == "specialty")
    assert boost.value > 0 and boost.term == "CHIROPRACTIC (semantic)"
    assert first.specialty_definition and "chiropract" in first.specialty_definition.lower()
    assert any("CHIROPRACTIC" in line and "similarity" in line for line in first.explanation)
    assert response.timings_ms.semantic > 0


async def test_semantic_stage_can_be_switched_off(settings_off_finder: PractitionerFinder) -> None:
    response = await ask(settings_off_finder, "spinal adjustment for lower back pain")
    assert not [m for m in response.specialties if m.source == "semantic"]
    assert response.timings_ms.semantic == 0.0


async def test_semantic_stage_decides_nothing_where_the_catalogue_reads_the_intent(
    shared_finder: PractitionerFinder,
) -> None:
    # the default semantic.catalogue_factor is 0: a request the catalogue reads ("spinal adjustment" is a
    # procedure) is ranked by it, the semantic proposals are listed with no boost and explain no score part
    response = await ask(shared_finder, "spinal adjustment for lower back pain")
    proposed = [m for m in response.specialties if m.source == "semantic"]
    assert proposed and all(m.boost == 0 for m in proposed)
    assert not [a for r in response.results for a in r.adjustments if "(semantic)" in (a.term or "")]


def _tuned_finder(shared_finder: PractitionerFinder, **sections: dict[str, object]) -> PractitionerFinder:
    s = shared_finder.settings
    tuned = s.model_copy(update={"practitioners": s.practitioners.tuned(**sections)})
    return PractitionerFinder(
        tuned,
        directory=shared_finder.directory,
        store=shared_finder.store,
        embedder=shared_finder.semantic.embedder,
    )


@pytest.fixture
def settings_off_finder(shared_finder: PractitionerFinder) -> PractitionerFinder:
    return _tuned_finder(shared_finder, semantic={"enabled": False})


@pytest.fixture
def beside_catalogue(shared_finder: PractitionerFinder) -> PractitionerFinder:
    """The semantic stage weighing in beside a confident catalogue intent (half its boost)."""
    return _tuned_finder(shared_finder, semantic={"catalogue_factor": 0.5})


# -- the stage-B floor ----------------------------------------------------------------------------------------


def _candidate(npi: str, specialty: str, text: str, source: str, bm25: float | None) -> PractitionerCandidate:
    practitioner = Practitioner(npi=npi, name=f"Dr {npi[-2:]}", primary_specialty=specialty)
    chunk = Chunk(chunk_id=npi, doc_id=npi, title=practitioner.name, text=text, source="practitioners")
    candidate = PractitionerCandidate(practitioner, chunk, source, bm25)
    if bm25 is not None:
        candidate.adjustments.append(Adjustment(kind="bm25", value=bm25))
    return candidate


def _floor_case(settings: PractitionerSettings) -> list[PractitionerCandidate]:
    literal = _candidate(
        "1000000001",
        "PLASTIC AND RECONSTRUCTIVE SURGERY",
        "Plastic surgery: breast reconstruction.",
        "stage_a",
        1.0,
    )
    weak = _candidate("1000000003", "DERMATOLOGY", "Dermatology: skin.", "stage_a", 0.5)
    filled = [
        _candidate(
            f"100000001{i}",
            "GENERAL SURGERY",
            "General surgery: mastectomy breast surgery",
            "intent_fill",
            None,
        )
        for i in range(3)
    ]
    merged = MergedIntent(
        q_patient="breast reconstruction mastectomy",
        intent_terms=["mastectomy", "breast surgery", "general surgery"],
        specialties=[
            SpecialtyMatch(specialty="GENERAL SURGERY", source="semantic", boost=1.0, similarity=0.7)
        ],
        request_specialties=["PLASTIC AND RECONSTRUCTIVE SURGERY", "GENERAL SURGERY"],
    )
    return stage_b([literal, weak, *filled], merged, settings)


def test_floor_keeps_a_strong_literal_stage_a_match_near_the_top() -> None:
    settings = PractitionerSettings()
    ranked = _floor_case(settings)
    best = ranked[0].score
    literal = next(c for c in ranked if c.npi == "1000000001")
    floor = [a for a in literal.adjustments if a.kind == "floor"]
    assert len(floor) == 1 and floor[0].term == "PLASTIC AND RECONSTRUCTIVE SURGERY"
    assert 0 < floor[0].value <= settings.floor.max_lift
    assert literal.score >= settings.floor.ratio * best - 1e-9 or floor[0].value == settings.floor.max_lift
    weak = next(c for c in ranked if c.npi == "1000000003")
    assert not [a for a in weak.adjustments if a.kind == "floor"]  # BM25 share below the floor's minimum
    assert ranked[0] is literal  # lifted to the best score, first on its stronger stage-A part
    unfloored = _floor_case(PractitionerSettings().tuned(floor={"ratio": 0.0}))
    assert [c.npi for c in unfloored].index("1000000001") == 3  # buried under the intent-filled records


def test_floor_keeps_only_an_anchor_phrase_the_patient_wrote() -> None:
    # "interventional cardiology" is the intent's anchor, not the patient's words ("my cardiologist retired")
    def ranked(settings: PractitionerSettings) -> list[PractitionerCandidate]:
        literal = _candidate(
            "1000000021", "INTERVENTIONAL CARDIOLOGY", "Interventional cardiology: stents.", "stage_a", 1.0
        )
        earned = _candidate(
            "1000000022", "CARDIOVASCULAR DISEASE (CARDIOLOGY)", "Cardiology.", "intent_fill", None
        )
        earned.adjustments.append(Adjustment(kind="specialty", value=2.0))
        merged = MergedIntent(
            q_patient="cardiologist retired follow heart",
            anchor_phrases=["interventional cardiology"],
            patient_anchors=[],
        )
        return stage_b([literal, earned], merged, settings)

    own = ranked(PractitionerSettings())
    assert [c.npi for c in own] == ["1000000022", "1000000021"]
    assert not [a for a in own[1].adjustments if a.kind == "floor"]
    any_anchor = ranked(PractitionerSettings().tuned(floor={"patient_anchors_only": False}))
    assert [a.term for a in any_anchor[0].adjustments if a.kind == "floor"] == ["interventional cardiology"]


async def test_floor_protects_what_the_patient_asked_for(shared_finder: PractitionerFinder) -> None:
    seen: list[MergedIntent] = []

    def record(state: FinderState, context: FinderContext) -> None:
        seen.append(merged_of(state))
        refuse_unknown_location(state, context)

    def recording(finder: PractitionerFinder) -> PractitionerFinder:
        pipeline = FINDER_PIPELINE.replaced("refuse_unknown_location", Stage("record", record, "stage_a"))
        return PractitionerFinder(
            finder.settings,
            directory=finder.directory,
            store=finder.store,
            embedder=finder.semantic.embedder,
            pipeline=pipeline,
        )

    text = "balance and vestibular therapy for vertigo"
    await recording(shared_finder).search(PractitionerQuery(user_query=text))
    await recording(_tuned_finder(shared_finder, floor={"named_by": None})).search(
        PractitionerQuery(user_query=text)
    )
    named, pointed = seen
    # the procedure the patient named; not the specialties the request only points to
    assert "PHYSICAL THERAPIST IN PRIVATE PRACTICE" in named.request_specialties
    assert set(named.request_specialties) <= {"PHYSICAL THERAPIST IN PRIVATE PRACTICE", "PHYSICAL THERAPY"}
    assert set(named.request_specialties) <= set(pointed.request_specialties)
    assert named.patient_anchors == ["vestibular therapy"]  # the intent's own "physical therapist" is not
    # a symptom's words the patient wrote ("back pain") name no one: no floor for a profile that holds them
    text = "my back hurts and the pain shoots down my leg"
    await recording(shared_finder).search(PractitionerQuery(user_query=text))
    await recording(_tuned_finder(shared_finder, floor={"named_by": None})).search(
        PractitionerQuery(user_query=text)
    )
    assert "back pain" in seen[3].patient_anchors
    assert "back pain" not in seen[2].patient_anchors


def test_floor_lift_is_bounded() -> None:
    settings = PractitionerSettings().tuned(floor={"max_lift": 0.2})
    literal = next(c for c in _floor_case(settings) if c.npi == "1000000001")
    assert [a.value for a in literal.adjustments if a.kind == "floor"] == [pytest.approx(0.2)]


# -- conversations ---------------------------------------------------------------------------------------------


async def test_follow_up_for_a_child_changes_the_result(shared_finder: PractitionerFinder) -> None:
    alone = await ask(shared_finder, "my knee hurts when I run")
    follow_up = await ask(
        shared_finder,
        "actually, it's for my daughter",
        messages=[
            ChatMessage(role="user", content="my knee hurts when I run"),
            ChatMessage(role="assistant", content="Here are orthopaedic surgeons near you."),
        ],
    )
    assert alone.intent.insights.population is None
    assert follow_up.intent.insights.population == "child"
    assert "knee" in follow_up.intent.q_patient  # the earlier turn's words still search
    assert any(
        m.specialty == "PEDIATRIC MEDICINE" and m.source == "population" for m in follow_up.specialties
    )
    specialties = [r.primary_specialty for r in follow_up.results]
    assert "PEDIATRIC MEDICINE" in specialties and "PEDIATRIC MEDICINE" not in [
        r.primary_specialty for r in alone.results
    ]
    assert "ORTHOPEDIC SURGERY" in specialties[:5]  # the knee is still the problem


async def test_location_said_in_the_conversation_orders_nearby_first(
    shared_finder: PractitionerFinder,
) -> None:
    response = await ask(
        shared_finder,
        "who can look at my kidneys?",
        messages=[
            ChatMessage(role="user", content="I live in Bangor and my kidney function is getting worse")
        ],
    )
    assert response.intent.insights.location == "Bangor"
    assert any("BANGOR" in note.upper() and "conversation" in note for note in response.notes)
    nephrology = [r for r in response.results if r.primary_specialty == "NEPHROLOGY"]
    assert nephrology and nephrology[0].city == "BANGOR" and nephrology[0].proximity == "same_city"


# -- crisis and emergency --------------------------------------------------------------------------------------


async def test_crisis_request_answers_first_with_guidance_then_a_list(
    shared_finder: PractitionerFinder,
) -> None:
    response = await ask(shared_finder, "I want to hurt myself")
    assert response.emergency is not None and response.emergency.level == "crisis"
    assert "988" in response.emergency.guidance and "hurt myself" in response.emergency.cues
    assert next(iter(response.model_dump())) == "emergency"  # the guidance comes before the results
    assert response.results and response.results[0].primary_specialty in (
        "PSYCHIATRY",
        "CLINICAL SOCIAL WORKER",
        "PSYCHOLOGIST, CLINICAL",
        "EMERGENCY MEDICINE",
    )
    assert any(m.source == "urgency" for m in response.specialties)


async def test_emergency_and_routine_requests(shared_finder: PractitionerFinder) -> None:
    chest = await ask(shared_finder, "chest pain right now")
    assert chest.emergency is not None and chest.emergency.level == "emergency"
    assert "911" in chest.emergency.guidance
    assert "EMERGENCY MEDICINE" in [r.primary_specialty for r in chest.results]
    assert any(m.specialty == "EMERGENCY MEDICINE" and m.source == "urgency" for m in chest.specialties)
    routine = await ask(shared_finder, "I need new glasses")
    assert routine.emergency is None


# -- explanations through the real HTTP server -----------------------------------------------------------------


@pytest.fixture(scope="module")
def maine_server(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[LiveServer]:
    """The real app on 127.0.0.1 over a directory of the Maine excerpt (its own data dir)."""
    from deepcite.practitioners.directory import Directory
    from deepcite.retrieval.store import open_store
    from deepcite.server.app import create_app

    settings = server_settings(tmp_path_factory.mktemp("practitioner-server"))
    store = open_store(settings)
    finder = PractitionerFinder(settings, directory=Directory.open(settings), store=store, embedder=minilm)
    try:
        finder.import_file(MAINE, "cms-reduced")
    finally:
        finder.directory.close()  # the store stays open: the server shares it
    with LiveServer(create_app(settings, store=store, embedder=minilm)) as server:
        yield server
    store.close()


@pytest.mark.slow
def test_api_results_explain_themselves(maine_server: LiveServer) -> None:
    with httpx.Client(base_url=maine_server.base_url, headers=headers(ADMIN), timeout=120) as c:
        response = c.post(
            "/api/practitioners/search",
            json={
                "userQuery": "actually, it's for my son",
                "messages": [{"role": "user", "content": "I think I broke my ankle"}],
            },
        )
        crisis = c.post("/api/practitioners/search", json={"userQuery": "I want to hurt myself"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["emergency"] is None and body["results"], body.get("reason")
    for result in body["results"]:
        assert result["explanation"] and result["explanation"][-1].startswith("score ")
        assert {"adjustments", "specialty_definition", "specialty_matches", "matched_intent"} <= set(result)
        assert all("value" in a and "kind" in a for a in result["adjustments"])
    assert any(m["source"] == "population" for m in body["specialties"])
    assert crisis.status_code == 200 and list(crisis.json())[0] == "emergency"
    assert crisis.json()["emergency"]["level"] == "crisis"


async def test_exercises_after_back_surgery_find_physical_therapists_first(
    shared_finder: PractitionerFinder,
) -> None:
    response = await ask(shared_finder, "exercises to get stronger after my back surgery")
    # the fixture holds Maine's and national's names for physical therapists
    therapists = {"PHYSICAL THERAPIST IN PRIVATE PRACTICE", "PHYSICAL THERAPY"}
    assert response.results[0].primary_specialty in therapists
    assert response.intent.clinical.primary_intent == "physical_therapy"
