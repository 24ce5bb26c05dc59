"""The practitioner page in a real browser against the real server and a directory imported from a fixture."""

from __future__ import annotations

from typing import Any

import pytest

from ui.conftest import LiveApp, screenshot

pytestmark = pytest.mark.slow


def find(page: Any, live_app: LiveApp, request: str, city: str = "", state: str = "") -> None:
    page.goto(live_app.url + "/practitioners")
    page.fill("#request", request)
    page.fill("#city", city)
    page.fill("#state", state)
    page.click("#find-button")


def test_request_with_location_shows_cards_reasons_and_intent(page: Any, live_app: LiveApp) -> None:
    find(page, live_app, "I need SVT ablation", city="Portland", state="ME")
    cards = page.locator("#result-list .result")
    cards.first.wait_for()

    top = cards.first
    assert "Avery Quill" in top.locator("h3").inner_text()
    assert "CARDIAC ELECTROPHYSIOLOGY" in top.locator(".specialty").inner_text()
    assert "Harbor Heart Rhythm Center" in top.inner_text()
    assert "12 Fore St, PORTLAND, ME 04101" in top.inner_text()
    reasons = top.locator(".reasons")
    assert "Why this practitioner" in reasons.inner_text()
    assert reasons.locator("li").count() >= 1
    # the location filter keeps Portland only
    for place in cards.locator(".where").all_inner_texts():
        assert "BANGOR" not in place and "LEWISTON" not in place

    intent = page.locator("#intent")
    assert intent.is_visible()
    text = intent.inner_text()
    assert "Your words" in text and "svt ablation" in text.lower()
    assert "Kinds of practitioner that fit" in text and "Cardiac Electrophysiology" in text
    assert page.locator("#status").inner_text().endswith("practitioners found.")
    screenshot(page, "practitioners-desktop.png")


def test_a_symptom_without_location_still_finds_the_right_specialists(page: Any, live_app: LiveApp) -> None:
    find(page, live_app, "my heart keeps racing and skipping beats")
    page.locator("#result-list .result").first.wait_for()
    specialties = page.locator("#result-list .result .specialty").all_inner_texts()
    assert any("CARDI" in s for s in specialties[:3])


def test_empty_request_is_refused_and_server_errors_are_shown(page: Any, live_app: LiveApp) -> None:
    find(page, live_app, "")
    assert "describe what you need" in page.locator("#error").inner_text()
    find(page, live_app, "knee pain", state="ZZ")
    alert = page.locator("#error[role=alert]")
    alert.wait_for(state="visible")
    assert alert.inner_text().strip() != "Something went wrong"
    assert page.locator("#results").is_hidden()


def test_a_request_over_the_limit_is_counted_and_refused_never_cut(page: Any, live_app: LiveApp) -> None:
    limit = live_app.settings.practitioners.max_query_chars
    over = "knee pain after a fall " * (limit // 10)
    sent: list[str] = []
    page.on(
        "request", lambda request: sent.append(request.url) if "/api/practitioners" in request.url else None
    )
    find(page, live_app, over)
    assert page.input_value("#request") == over  # the box keeps every character
    counted = len(over.strip())
    assert page.locator("#request-count").inner_text() == (
        f"{counted:,} / {limit:,} characters: {counted - limit:,} over the limit"
    )
    assert page.get_attribute("#request", "aria-invalid") == "true"
    assert "nothing was sent" in page.locator("#error").inner_text()
    assert not sent
    page.fill("#request", "I need SVT ablation")
    assert page.locator("#request-count").inner_text() == f"19 / {limit:,} characters"
    assert page.get_attribute("#request", "aria-invalid") is None


def test_practitioner_page_on_a_phone(phone: Any, live_app: LiveApp) -> None:
    find(phone, live_app, "I need SVT ablation", state="ME")
    phone.locator("#result-list .result").first.wait_for()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    screenshot(phone, "practitioners-phone.png")


# the pipeline's own words: counts, scores, terms and stages belong to the API's debug data and the logs
INTERNAL = ("stage A", "candidates", "BM25", "score", "intent term", "anchor", "boost", "fill", "offline")


def test_the_page_speaks_to_the_patient_without_internal_notes(page: Any, live_app: LiveApp) -> None:
    find(page, live_app, "my knee hurts after running")
    cards = page.locator("#result-list .result")
    cards.first.wait_for()
    shown = page.locator("main").inner_text()
    for word in INTERNAL:
        assert word.lower() not in shown.lower(), word
    assert cards.first.locator(".reasons li").count() >= 1
    # the API still says how the results were reached, for developers
    response = page.request.post(
        live_app.url + "/api/practitioners/search", data={"userQuery": "my knee hurts after running"}
    ).json()
    assert response["debug"]["candidates"] > 0 and response["results"][0]["explanation"]


def test_cant_sleep_reads_as_cant_sleep(page: Any, live_app: LiveApp) -> None:
    find(page, live_app, "I can\u2019t sleep")
    page.locator("#result-list .result").first.wait_for()
    words = page.locator("#intent dd").first.inner_text()
    assert words == "can't sleep"


def top_specialties(page: Any, n: int = 3) -> list[str]:
    return page.locator("#result-list .result .specialty").all_inner_texts()[:n]


def test_a_follow_up_for_my_daughter_moves_the_results_toward_pediatrics(
    page: Any, live_app: LiveApp
) -> None:
    find(page, live_app, "my knee hurts after running")
    page.locator("#result-list .result").first.wait_for()
    before = top_specialties(page)
    assert not any("PEDIATRIC" in s for s in before)
    page.fill("#request", "actually, it's for my daughter")
    page.click("#find-button")
    page.locator("#intent dd", has_text="A child").wait_for()
    after = top_specialties(page)
    assert after != before
    assert any("PEDIATRIC" in s for s in after)
    assert any("SPORTS MEDICINE" in s or "ORTHOPEDIC" in s for s in after)  # still about the knee
    assert "daughter" in page.locator("#intent dd").first.inner_text()
    pediatric = page.locator("#result-list .result", has_text="PEDIATRIC MEDICINE").first
    assert "cares for children" in pediatric.locator(".reasons").inner_text()
