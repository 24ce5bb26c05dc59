"""The whole flow on real CMS rows: real SQLite directory, real Edge search store, offline analyses."""

from __future__ import annotations

import copy
import inspect
import json
from dataclasses import fields
from pathlib import Path

import pytest

from deepcite.config import Settings
from deepcite.errors import ConfigError, InputError, NotFoundError
from deepcite.models import SearchMode
from deepcite.practitioners.api import ChatMessage, PractitionerQuery
from deepcite.practitioners.finder import PractitionerFinder, search_practitioners
from deepcite.practitioners.location import Location
from deepcite.practitioners.pipeline import FINDER_PIPELINE, FinderContext, FinderPipeline, FinderState, Stage
from deepcite.retrieval.embedders import Embedder
from practitioners.conftest import MAINE, RemoteLLMStandIn, make_settings, open_finder


async def ask(finder: PractitionerFinder, text: str, **kwargs: object):  # noqa: ANN201
    return await search_practitioners(PractitionerQuery(user_query=text, **kwargs), finder)  # type: ignore[arg-type]


async def test_svt_ablation_reaches_electrophysiologists_through_the_fill(
    shared_finder: PractitionerFinder,
) -> None:
    response = await ask(shared_finder, "I need SVT ablation")
    assert response.intent.q_patient == "svt ablation"
    assert response.intent.clear is True
    assert response.debug.filled_from_intent is True and "added" in str(response.debug.fill_reason)
    top = response.results[0]
    assert top.primary_specialty == "CARDIAC ELECTROPHYSIOLOGY"
    assert top.source == "intent_fill" and top.bm25 is None
    assert "cardiac electrophysiology" in top.matched_anchor_phrases
    kinds = {a.kind for a in top.adjustments}
    assert {"anchor_phrase", "intent_term"} <= kinds
    assert top.score == pytest.approx(sum(a.value for a in top.adjustments), abs=1e-3)
    electro = [r for r in response.results if r.primary_specialty == "CARDIAC ELECTROPHYSIOLOGY"]
    assert len(electro) == 4 and response.results[: len(electro)] == electro
    assert {u.source for u in response.analysis_used.values()} == {"offline"}
    assert set(response.timings_ms.model_dump()) == {"analysis", "semantic", "stage_a", "stage_b"}
    assert len(response.results) <= shared_finder.settings.practitioners.result_limit


async def test_nucc_definitions_let_a_word_reach_a_record_without_it(
    shared_finder: PractitionerFinder,
) -> None:
    hits = shared_finder.baseline("heart rhythms", 10)
    specialties = {shared_finder.directory.get(c.doc_id).primary_specialty for c, _ in hits}  # type: ignore[union-attr]
    assert "CARDIAC ELECTROPHYSIOLOGY" in specialties


def test_profiles_scoring_alike_are_cut_and_ordered_by_npi(shared_finder: PractitionerFinder) -> None:
    # the engine's own order of equal scores changes between processes; the index's must not
    index = shared_finder.index
    every = index.store.search(index.name, text="cardiology", vector=None, mode=SearchMode.BM25, k=1000)
    expected = [h.chunk.doc_id for h in sorted(every, key=lambda h: (-h.score, h.chunk.doc_id))]
    scores = [h.score for h in every]
    assert len(scores) > len(set(scores))  # the query has profiles tied on one score
    for k in range(1, len(expected) + 1):
        assert [chunk.doc_id for chunk, _ in index.search("cardiology", k)] == expected[:k]


async def test_stage_a_keeps_the_patients_words_when_they_match(shared_finder: PractitionerFinder) -> None:
    response = await ask(shared_finder, "I was diagnosed with chronic kidney disease, need a nephrologist")
    top = response.results[0]
    # an internist whose secondary specialty is nephrology can lead: experience is a (bounded) boost
    assert "NEPHROLOGY" in [top.primary_specialty, *top.secondary_specialties]
    assert all(r.source == "stage_a" and r.bm25 for r in response.results[:3])
    assert response.intent.clinical.primary_intent == "kidney"


async def test_two_stage_beats_plain_bm25_on_a_lay_query(shared_finder: PractitionerFinder) -> None:
    response = await ask(shared_finder, "my wife says I snore and stop breathing at night")
    assert response.results[0].primary_specialty == "PULMONARY DISEASE"  # no sleep medicine in the excerpt


async def test_location_filter_and_unknown_city(shared_finder: PractitionerFinder) -> None:
    response = await ask(shared_finder, "heart doctor", location=Location(city="Bangor", state="ME"))
    assert response.results and {r.city for r in response.results} == {"BANGOR"}
    typo = await ask(shared_finder, "heart doctor", location="Bangr, ME")
    assert typo.results == []
    assert "did you mean Bangor" in str(typo.reason)
    assert typo.intent.clinical.primary_intent == "coronary_chest_pain"  # the analyses still ran


async def test_nearby_orders_same_city_first_without_filtering(shared_finder: PractitionerFinder) -> None:
    response = await ask(shared_finder, "cardiologist", location="Lewiston, ME", location_mode="nearby")
    tiers = [r.proximity for r in response.results]
    assert "same_city" in tiers and "same_state" in tiers
    first_other = tiers.index("same_state")
    assert all(t == "same_city" for t in tiers[:first_other])


async def test_city_named_in_the_message_orders_results(shared_finder: PractitionerFinder) -> None:
    response = await ask(shared_finder, "I need a cardiologist in Bangor")
    assert response.intent.insights.location == "Bangor"
    assert response.results[0].city == "BANGOR"
    assert any("Bangor" in n for n in response.notes)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   ", "userQuery is empty"),
        ("the and of to it", "only common words"),
        ("x" * 10_000, "10000 characters long; the limit is 2000"),
        ("我胸口痛，需要看医生", "write it in English"),
    ],
)
async def test_bad_input_gets_a_clear_error(
    shared_finder: PractitionerFinder, text: str, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        await ask(shared_finder, text)


async def test_non_english_latin_text_gets_an_empty_answer_with_a_reason(
    shared_finder: PractitionerFinder,
) -> None:
    response = await ask(shared_finder, "J'ai très mal à la poitrine depuis hier")
    assert response.results == []
    assert "write it in English" in str(response.reason)


async def test_overlong_conversation_drops_old_messages_with_a_note(
    shared_finder: PractitionerFinder,
) -> None:
    messages = [
        ChatMessage(role="user", content="x " * 5_000),
        ChatMessage(role="user", content="I have CKD"),
    ]
    response = await ask(shared_finder, "who should I see?", messages=messages)
    assert any("1 earlier message(s) were left out" in n for n in response.notes)
    assert response.intent.clinical.primary_intent == "kidney"
    top = response.results[0]
    assert "NEPHROLOGY" in [top.primary_specialty, *top.secondary_specialties]


async def test_emergency_words_add_a_note(shared_finder: PractitionerFinder) -> None:
    response = await ask(shared_finder, "crushing chest pain and I can't breathe")
    assert response.intent.insights.urgency == "emergency"
    assert any("911" in n for n in response.notes)


async def test_llm_failure_is_reported_and_the_search_still_answers(
    settings: Settings, minilm: Embedder
) -> None:
    finder = open_finder(settings, minilm, RemoteLLMStandIn(fail=True))
    finder.import_file(MAINE, "cms-reduced")
    try:
        response = await ask(finder, "I need SVT ablation")
    finally:
        finder.close()
    assert {u.source for u in response.analysis_used.values()} == {"offline"}
    assert all("HTTP 503" in str(u.fallback_reason) for u in response.analysis_used.values())
    assert response.results[0].primary_specialty == "CARDIAC ELECTROPHYSIOLOGY"


async def test_schema_violating_llm_replies_fall_back_and_still_find_the_electrophysiologists(
    settings: Settings, minilm: Embedder
) -> None:
    # JSON objects, but none of the analyses' schemas: unknown keys, required ones missing
    wrong = json.dumps({"answer": "You should see a cardiologist.", "note": "no JSON fields of yours"})
    llm = RemoteLLMStandIn({"insights": wrong, "general": wrong, "clinical": wrong})
    finder = open_finder(settings, minilm, llm)
    finder.import_file(MAINE, "cms-reduced")
    try:
        response = await ask(finder, "I need SVT ablation")
    finally:
        finder.close()
    assert {u.source for u in response.analysis_used.values()} == {"offline"}
    assert all("does not match" in str(u.fallback_reason) for u in response.analysis_used.values())
    assert response.results[0].primary_specialty == "CARDIAC ELECTROPHYSIOLOGY"


async def test_empty_directory_says_how_to_import(tmp_path: Path, minilm: Embedder) -> None:
    finder = open_finder(make_settings(tmp_path), minilm)
    try:
        with pytest.raises(NotFoundError, match="practitioners import"):
            await ask(finder, "I need SVT ablation")
    finally:
        finder.close()


async def test_reimport_reaches_the_search_index(finder: PractitionerFinder, tmp_path: Path) -> None:
    changed = tmp_path / "moved.jsonl"
    changed.write_text(
        json.dumps(
            {
                "npi": "1003012253",
                "name": "KIMBERLY MILLS",
                "specialty": "SLEEP MEDICINE",
                "city": "BUCKSPORT",
                "state": "ME",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    finder.import_file(changed, "jsonl")
    response = await ask(finder, "sleep apnea")
    assert response.results[0].npi == "1003012253"
    assert finder.index.is_current(finder.directory)


async def test_index_left_stale_is_synced_before_searching(finder: PractitionerFinder) -> None:
    finder.store.drop_collection(finder.index.name)
    assert not finder.index.is_current(finder.directory)
    response = await ask(finder, "kidney stones")
    assert response.results and response.results[0].primary_specialty == "UROLOGY"


def test_request_json_shape() -> None:
    request = PractitionerQuery.model_validate(
        {
            "userQuery": "I need SVT ablation",
            "messages": [{"role": "user", "content": "hi"}],
            "location": {"city": "Portland", "state": "ME"},
            "limit": 5,
        }
    )
    assert request.user_query == "I need SVT ablation" and request.limit == 5
    assert isinstance(request.location, Location) and request.location.state == "ME"


# -- the finder as a pipeline of named stages ---------------------------------------------------------


def test_the_stages_are_listed_in_order_by_name() -> None:
    assert [s.name for s in FINDER_PIPELINE.stages] == [
        "analyse",
        "merge_analyses",
        "refuse_unknown_location",
        "refuse_foreign_words",
        "run_stage_a",
        "fill_from_intent",
        "fill_from_specialties",
        "run_stage_b",
        "order_by_proximity",
        "reserve_specialty_slots",
        "write_results",
    ]
    assert all(s.run.__name__ == s.name for s in FINDER_PIPELINE.stages)
    with pytest.raises(ConfigError, match="no finder stage named 'stage_c'.*run_stage_b"):
        FINDER_PIPELINE.replaced("stage_c", FINDER_PIPELINE.stages[0])


def test_a_stage_declaring_an_unknown_state_field_is_refused() -> None:
    with pytest.raises(TypeError, match="unknown state fields: \\['finder'\\]"):
        Stage("peek", lambda state, context: None, "stage_a", reads=frozenset({"finder"}))


def _checked(stage: Stage, seen: dict[str, set[str]]) -> Stage:
    """``stage``, recording into ``seen`` the state fields its run changed."""

    async def run(state: FinderState, context: FinderContext) -> None:
        before = {f.name: copy.deepcopy(getattr(state, f.name)) for f in fields(state)}
        out = stage(state, context)
        if inspect.isawaitable(out):
            await out
        changed = {name for name, value in before.items() if getattr(state, name) != value}
        seen.setdefault(stage.name, set()).update(changed)

    return Stage(stage.name, run, stage.timing, stage.reads, stage.writes)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("I need SVT ablation", None),
        ("my knee hurts when I run, I live in Portland", None),  # a city named in the conversation
        ("child with asthma", Location(city="Portland", state="ME")),  # a filtering location
        ("knee pain", Location(city="Atlantis", state="ME")),  # no practitioner there: answered early
    ],
)
async def test_every_stage_changes_only_the_fields_it_declares(
    shared_finder: PractitionerFinder, text: str, where: Location | None
) -> None:
    seen: dict[str, set[str]] = {}
    checked = FinderPipeline(stages=tuple(_checked(s, seen) for s in FINDER_PIPELINE.stages))
    finder = PractitionerFinder(
        shared_finder.settings,
        directory=shared_finder.directory,
        store=shared_finder.store,
        embedder=shared_finder.semantic.embedder,
        pipeline=checked,
    )
    await finder.search(PractitionerQuery(user_query=text, location=where))
    declared = {s.name: s.writes for s in FINDER_PIPELINE.stages}
    assert seen and set(seen) <= set(declared)
    for name, changed in seen.items():
        assert changed <= declared[name], f"{name} changed undeclared fields {changed - declared[name]}"


async def test_a_swapped_stage_runs_in_its_place(shared_finder: PractitionerFinder) -> None:
    seen: list[int] = []

    def no_fill(state: FinderState, context: FinderContext) -> None:
        seen.append(len(state.candidates))

    finder = PractitionerFinder(
        shared_finder.settings,
        directory=shared_finder.directory,
        store=shared_finder.store,
        embedder=shared_finder.semantic.embedder,
        pipeline=FINDER_PIPELINE.replaced("fill_from_intent", Stage("no_fill", no_fill, "stage_a")),
    )
    request = PractitionerQuery(user_query="I need SVT ablation")
    filled = await shared_finder.search(request)
    unfilled = await finder.search(request)
    assert filled.debug.filled_from_intent and not unfilled.debug.filled_from_intent
    assert len(seen) == 1  # the swapped stage ran once, where the fill was
    assert "intent_fill" not in {r.source for r in unfilled.results}
    assert unfilled.timings_ms.stage_a > 0 and unfilled.timings_ms.stage_b > 0


async def test_a_stage_that_answers_stops_the_rest(shared_finder: PractitionerFinder) -> None:
    response = await shared_finder.search(
        PractitionerQuery(user_query="knee pain", location="Atlantis, ME", location_mode="filter")  # type: ignore[arg-type]
    )
    assert response.results == [] and "no practitioner in the directory is at" in str(response.reason)
    assert response.timings_ms.stage_b == 0.0  # no stage B stage ran
