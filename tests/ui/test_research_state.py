"""The research page's state and limits in a real browser (Debian's Chromium) against the real server:

- after "Done." the page goes to the answer (scrolled into view, focused);
- the collection and an open saved answer live in the URL, so a reload keeps them and the collection's
  past questions;
- the question box counts its characters against the server's limit, and a longer question is refused in
  the page with a message, never cut.
"""

from __future__ import annotations

from typing import Any

import pytest

from ui.conftest import LiveApp
from ui.test_research_page import ask, wait_for_answer

pytestmark = pytest.mark.slow


def in_view(page: Any, selector: str) -> bool:
    """Whether the top of ``selector`` is within the viewport (a scrolled-to element may sit a fraction of a
    pixel above it: -0.17 px was seen)."""
    return page.evaluate(
        """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
                      return r.top > -1 && r.top < window.innerHeight; }""",
        selector,
    )


def test_done_goes_to_the_answer(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app, question="Does atrial fibrillation increase the risk of stroke?", max_hops="1")
    wait_for_answer(page)
    page.wait_for_function("document.activeElement && document.activeElement.id === 'summary'")
    assert page.locator("#status").inner_text() == "Done."
    assert page.evaluate("window.scrollY") > 0  # the answer lies below the form, the documents and history
    assert in_view(page, "#summary")
    assert page.locator("#summary-text .cite").count() > 0


def test_the_collection_and_an_open_answer_survive_a_reload(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app, question="What treats a rare tropical fungal infection?", collection="empty")
    page.wait_for_function(
        "document.getElementById('ask-button').disabled === false && document.getElementById('status').textContent === 'Done.'"
    )
    page.wait_for_url("**/answers/*")
    answer_id = page.url.rsplit("/", 1)[1]
    page.reload()  # the open answer and its collection
    page.wait_for_selector("#summary:not([hidden])")
    assert page.input_value("#collection") == "empty"
    assert page.input_value("#question") == "What treats a rare tropical fungal infection?"
    page.locator(f"#past-list li[data-answer-id='{answer_id}']").wait_for()

    page.select_option("#collection", "demo")
    page.wait_for_function("window.location.search === '?collection=demo'")
    page.select_option("#collection", "empty")
    page.wait_for_function("window.location.search === '?collection=empty'")
    assert page.evaluate("window.location.pathname") == "/"
    page.reload()  # the chosen collection, not the server's default, and its past questions
    page.locator(f"#past-list li[data-answer-id='{answer_id}']").wait_for()
    assert page.input_value("#collection") == "empty"
    assert page.locator("#past-collection").inner_text() == "in empty"

    page.go_back()  # the history steps back to the open answer
    page.wait_for_url(f"**/answers/{answer_id}")
    page.wait_for_selector("#summary:not([hidden])")
    assert page.input_value("#collection") == "empty"


def test_the_question_box_says_its_limit_and_refuses_a_longer_question(page: Any, live_app: LiveApp) -> None:
    limit = live_app.settings.research.planning.max_question_chars
    page.goto(live_app.url + "/")
    page.wait_for_selector("#collection option[value='demo']", state="attached")
    fmt = lambda n: page.evaluate("(n) => n.toLocaleString()", n)  # noqa: E731
    assert page.locator("#question-count").inner_text() == f"0 / {fmt(limit)} characters"
    page.fill("#question", "Does warfarin prevent stroke?")
    assert page.locator("#question-count").inner_text() == f"29 / {fmt(limit)} characters"
    assert page.get_attribute("#question", "aria-invalid") is None

    long_question = ("Does warfarin prevent stroke in atrial fibrillation? " * 400)[:20_000]
    page.fill("#question", long_question)
    assert len(page.input_value("#question")) == 20_000  # never cut by the box
    over = len(long_question.strip())
    count = page.locator("#question-count")
    assert count.inner_text() == (
        f"{fmt(over)} / {fmt(limit)} characters: {fmt(over - limit)} over the limit"
    )
    assert "over" in (count.get_attribute("class") or "")
    assert page.get_attribute("#question", "aria-invalid") == "true"
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/api/unified-search" in r.url else None)
    page.click("#ask-button")
    error = page.locator("#error")
    error.wait_for(state="visible")
    assert (
        f"Your question has {fmt(over)} characters; this server takes at most {fmt(limit)}"
        in error.inner_text()
    )
    assert page.evaluate("document.activeElement.id") == "question"
    assert requests == [] and page.locator("#hops").is_hidden()
