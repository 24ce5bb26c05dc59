"""The research page by importance, in a real browser: the question first, then an error or the live research
hops within the first screen after submit, the past questions and the "Add documents" panel below the answer.
At a phone's width (375 px) and a desktop's (1280 px)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ui.conftest import LiveApp, screenshot
from ui.test_research_page import QUESTION, ask, wait_for_answer

pytestmark = pytest.mark.slow

# Notes where the first hop is on the screen the moment it is added (after the page's own scrolling, which runs
# in the same task), before the answer's arrival moves the page on.
RECORD_FIRST_HOP = """
window.__firstHop = null;
document.addEventListener("DOMContentLoaded", () => {
  new MutationObserver((records, observer) => {
    const hop = document.querySelector("#hop-list .hop");
    if (!hop) return;
    const box = hop.getBoundingClientRect();
    window.__firstHop = { top: box.top, bottom: box.bottom, height: window.innerHeight };
    observer.disconnect();
  }).observe(document.getElementById("hop-list"), { childList: true });
});
"""

SCREENS = {"phone": (375, 812), "desktop": (1280, 900)}


@pytest.fixture(params=sorted(SCREENS))
def screen(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    width, height = SCREENS[request.param]
    phone = width < 500
    context = browser.new_context(
        viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone
    )
    page = context.new_page()
    page.set_default_timeout(120_000)
    yield page
    context.close()


def in_first_screen(page: Any, selector: str) -> bool:
    """Whether the element's top is within the viewport as the page is scrolled now."""
    return page.evaluate(
        """(selector) => {
          const box = document.querySelector(selector).getBoundingClientRect();
          return box.top >= 0 && box.top < window.innerHeight && box.height > 0;
        }""",
        selector,
    )


def test_an_error_is_announced_and_within_the_first_screen(screen: Any, live_app: LiveApp) -> None:
    screen.goto(live_app.url + "/")
    screen.wait_for_selector("#collection option[value='demo']", state="attached")
    screen.click("#ask-button")
    screen.wait_for_selector("#error:not([hidden])")
    assert "type a question" in screen.inner_text("#error")
    assert screen.get_attribute("#error", "role") == "alert"
    assert screen.get_attribute("#error", "aria-live") == "assertive"
    assert in_first_screen(screen, "#error")

    # the over-long question's error too, after the reader has scrolled to the bottom of the page
    screen.fill("#question", "why " * 2000)
    screen.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    screen.click("#ask-button")
    screen.wait_for_function("document.getElementById('error').innerText.includes('shorten it')")
    assert in_first_screen(screen, "#error")


def test_the_live_hops_are_within_the_first_screen_and_the_past_questions_below(
    screen: Any, live_app: LiveApp
) -> None:
    screen.add_init_script(RECORD_FIRST_HOP)
    ask(screen, live_app, QUESTION)
    screen.wait_for_function("window.__firstHop !== null")
    first = screen.evaluate("window.__firstHop")
    assert 0 <= first["top"] < first["height"], first
    wait_for_answer(screen)
    width = screen.viewport_size["width"]
    screenshot(screen, f"research-layout-{width}.png")

    order = screen.evaluate(
        """() => ["question", "error", "hops", "summary", "answer", "add-documents", "past"].map(
             (id) => document.getElementById(id).compareDocumentPosition(document.getElementById("report")))"""
    )
    before, after = 4, 2  # Node.DOCUMENT_POSITION_FOLLOWING / PRECEDING: the report follows, precedes
    assert order[:5] == [before] * 5  # question, error, hops and the answer come before the report
    assert order[5:] == [after] * 2  # the documents panel and the past questions after it


def test_a_reopened_answer_keeps_its_research_hops(page: Any, live_app: LiveApp) -> None:
    """A saved answer opened at /answers/{id} shows its hops, one per round it researched (they were lost)."""
    asked = httpx.post(
        live_app.url + "/api/unified-search", json={"query": QUESTION, "collection": "demo"}, timeout=600
    )
    assert asked.status_code == 200, asked.text
    rounds = asked.json()["retrieval_report"]
    assert rounds
    page.goto(f"{live_app.url}/answers/{asked.json()['request_id']}")
    page.wait_for_selector("#summary:not([hidden])")
    assert page.locator("#hops").is_visible()
    hops = page.locator("#hop-list .hop")
    assert hops.count() == len(rounds)
    assert "Hop 1" in hops.nth(0).inner_text()
    assert rounds[0]["subquestion"] in hops.nth(0).locator(".hop-sub").inner_text()
