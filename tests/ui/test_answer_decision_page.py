"""The answer's decision in a real browser over a real saved web page (Wikipedia's National Flag of Canada Day,
tests/fixtures/docs/flag_day.html): a yes/no question opens with its verdict, a question the page does not
answer says so first and marks what follows as the closest evidence."""

from __future__ import annotations

from typing import Any

import pytest

from ui.conftest import LiveApp, screenshot
from ui.test_research_page import ask, wait_for_answer

pytestmark = pytest.mark.slow


def decided(page: Any, live_app: LiveApp, question: str) -> tuple[Any, str]:
    """Ask ``question`` of the Flag Day page: the decision's badge and the summary's text."""
    ask(page, live_app, question, collection="flags")
    wait_for_answer(page)
    return page.locator("#summary .decision"), page.inner_text("#summary-text")


def test_a_yes_no_question_opens_with_its_verdict(page: Any, live_app: LiveApp) -> None:
    badge, summary = decided(page, live_app, "Is Flag Day observed every year on February 15?")
    assert badge.get_attribute("data-status") == "stated"
    assert "verdict: Yes" in badge.inner_text()
    assert summary.startswith("Yes: ") and "February 15" in summary
    screenshot(page, "decision-verdict.png")


def test_a_question_the_page_does_not_answer_says_so_first(page: Any, live_app: LiveApp) -> None:
    badge, summary = decided(page, live_app, "How much did the first Flag Day ceremony cost?")
    assert badge.get_attribute("data-status") == "not_stated"
    assert "Not stated in the sources" in badge.inner_text()
    assert summary.startswith("The sources do not state the number or amount asked for")
    assert page.locator("#summary-text .cite").count() >= 1  # the closest evidence, cited
    screenshot(page, "decision-not-stated.png")
