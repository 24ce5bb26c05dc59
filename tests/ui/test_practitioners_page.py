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
    reasons = top.locator("dl.reasons")
    assert "Matched intent terms" in reasons.inner_text()
    assert reasons.locator("dt", has_text="Boosts").count() == 1
    assert top.locator(".chip.plus").count() >= 1
    # the location filter keeps Portland only
    for place in cards.locator(".where").all_inner_texts():
        assert "BANGOR" not in place and "LEWISTON" not in place

    intent = page.locator("#intent")
    assert intent.is_visible()
    text = intent.inner_text()
    assert "Intent terms" in text and "Analysis used" in text and "offline" in text
    assert "svt" in text.lower()
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
