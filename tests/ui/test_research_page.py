"""The research page in a real browser (Debian's Chromium) against the real server over a real index.

The web-search source is the stand-in web (fixture pages and an MCP ``web_search`` tool on 127.0.0.1).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ui.conftest import LiveApp, keep_for_readme, screenshot

QUESTION = "Does atrial fibrillation increase the risk of stroke, and how is it treated?"

pytestmark = pytest.mark.slow

# Records, in order, the first time each part of the page appears (hops, summary, answer, report):
# a sequence, not a clock, so the test checks the order without timing anything.
RECORD_ORDER = """
const OBSERVE = { subtree: true, childList: true, attributes: true, attributeFilter: ["hidden"] };
window.__order = [];
document.addEventListener("DOMContentLoaded", () => {
  const seen = new Set();
  const note = (name) => { if (!seen.has(name)) { seen.add(name); window.__order.push(name); } };
  new MutationObserver(() => {
    if (document.querySelector("#hop-list .hop")) note("hop");
    for (const id of ["summary", "answer", "subanswers", "report"]) {
      const node = document.getElementById(id);
      if (node && !node.hidden) note(id);
    }
  }).observe(document.body, OBSERVE);
});
"""


def ask(
    page: Any, live_app: LiveApp, question: str = QUESTION, max_hops: str = "", collection: str = "demo"
) -> None:
    page.goto(live_app.url + "/")
    page.wait_for_selector(f"#collection option[value='{collection}']", state="attached")
    page.fill("#question", question)
    page.select_option("#collection", collection)
    if max_hops:
        page.fill("#max-hops", max_hops)
    page.click("#ask-button")


def wait_for_answer(page: Any) -> None:
    page.wait_for_selector("#report:not([hidden])")
    page.wait_for_function("document.getElementById('ask-button').disabled === false")


def test_hops_stream_then_cited_summary_and_answer(page: Any, live_app: LiveApp) -> None:
    page.add_init_script(RECORD_ORDER)
    ask(page, live_app)
    wait_for_answer(page)

    order = page.evaluate("window.__order")
    assert order.index("hop") < order.index("summary") < order.index("answer") < order.index("report")

    hops = page.locator("#hop-list .hop")
    assert hops.count() >= 1
    first = hops.nth(0)
    assert "Hop 1" in first.inner_text()
    assert first.locator(".hop-sub").inner_text().strip()
    meta = first.locator(".hop-meta").inner_text()
    assert "documents found" in meta and "of aspects covered" not in meta
    bars = first.locator("[role=progressbar]")
    assert bars.count() >= 2  # the hop's coverage, then each aspect's
    assert bars.nth(0).get_attribute("aria-label") == "Coverage after hop 1"
    assert bars.nth(1).get_attribute("aria-label").startswith("Coverage of ")
    for row in first.locator(".aspect").all():  # the figure each row states is the one its bar is drawn from
        value = row.locator("[role=progressbar]").get_attribute("aria-valuenow")
        assert 0 <= int(value) <= 100
        assert row.locator(".aspect-pct").inner_text() == value + "%"
        assert f"width: {value}%" in row.locator("[role=progressbar] span").get_attribute("style")
    hop_coverage = bars.nth(0).get_attribute("aria-valuenow") + "%"

    assert page.locator("#summary-text .cite").count() >= 1
    assert page.locator("#answer-text .cite").count() >= 1
    assert "Citation check:" in page.inner_text("#citation-check")
    # the report has one row per hop, with the counts of each round
    rows = page.locator("#report-table tbody tr")
    assert rows.count() == hops.count()
    cells = rows.nth(0).locator("td")
    assert cells.nth(0).inner_text() == "1"
    assert cells.nth(5).inner_text() == hop_coverage  # the report's coverage is the hop's
    assert int(cells.nth(2).inner_text()) >= int(cells.nth(3).inner_text()) > 0
    assert cells.nth(6).inner_text().split()[0] in ("continue", "stop")
    # web evidence found by the stand-in web search is listed as such, linked to its page
    web_source = page.locator("#source-list li:has(.badge.web)").first
    assert live_app.web.base_url in web_source.locator("a").first.get_attribute("href")

    screenshot(page, "research-desktop.png")


def test_citation_popover_by_click_keyboard_and_hover(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app)
    wait_for_answer(page)
    pop = page.locator("#cite-pop")

    cite = page.locator("#summary-text .cite").first
    cite_id = cite.get_attribute("data-cite")
    source_title = page.locator(f"#source-list li[data-source-id='{cite_id}'] .src-title").inner_text()
    cite.click()
    assert pop.is_visible()
    assert cite.get_attribute("aria-expanded") == "true"
    assert pop.locator(".cite-pop-title").inner_text() == source_title
    assert pop.locator(".cite-pop-id").inner_text().startswith(f"[{cite_id}]")
    assert pop.locator(".cite-pop-text").inner_text().strip()
    assert "score" in pop.locator(".cite-pop-meta").inner_text()
    for link in pop.locator(".cite-pop-links a").all():
        href = link.get_attribute("href")
        assert href.startswith(("https://pubmed.ncbi.nlm.nih.gov/", "https://doi.org/", "http://127.0.0.1"))
    screenshot(page, "research-citation.png")
    # the README's picture: the hops, then the summary with this citation open
    page.set_viewport_size({"width": 1100, "height": 1250})
    page.evaluate("window.scrollTo(0, document.getElementById('hops').offsetTop - 12)")
    keep_for_readme(screenshot(page, "research-readme.png", full_page=False), "screenshot-research.png")

    page.set_viewport_size({"width": 1100, "height": 900})
    page.keyboard.press("Escape")
    assert pop.is_hidden()
    assert page.evaluate("document.activeElement.dataset.cite") == cite_id  # focus went back to [n]

    # keyboard: focusing a citation shows its passage; hover does too
    other = page.locator("#answer-text .cite").first
    other.focus()
    assert pop.is_visible()
    assert pop.locator(".cite-pop-id").inner_text().startswith(f"[{other.get_attribute('data-cite')}]")
    page.keyboard.press("Escape")
    page.locator("h1").hover()
    page.locator("#summary-text .cite").last.hover()
    assert pop.is_visible()


def test_pubmed_links_point_at_the_resolver(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app)
    wait_for_answer(page)
    pmid_link = page.locator("#source-list a[href^='https://pubmed.ncbi.nlm.nih.gov/']").first
    text = pmid_link.inner_text()
    assert text.startswith("PMID ")
    assert pmid_link.get_attribute("href") == f"https://pubmed.ncbi.nlm.nih.gov/{text.split()[1]}/"


def test_subquestion_tabs_show_each_answer_with_exactly_its_own_evidence(
    page: Any, live_app: LiveApp
) -> None:
    ask(page, live_app)
    wait_for_answer(page)
    # the same request through the JSON API (the pipeline is deterministic offline) gives the expected ids
    api = httpx.post(
        live_app.url + "/api/unified-search", json={"query": QUESTION, "collection": "demo"}, timeout=600
    ).json()
    subanswers = api["subanswers"]
    tabs = page.locator("#subq-tabs [role=tab]")
    assert tabs.count() == len(subanswers) >= 2

    def shown_ids(index: int) -> list[int]:
        panel = page.locator(f"#subq-panel-{index}")
        return [
            int(x)
            for x in panel.locator(".evidence-list > li").evaluate_all(
                "els => els.map(e => e.dataset.sourceId)"
            )
        ]

    assert tabs.nth(0).get_attribute("aria-selected") == "true"
    assert page.locator("#subq-panel-0").is_visible() and page.locator("#subq-panel-1").is_hidden()
    assert shown_ids(0) == subanswers[0]["evidence"]

    tabs.nth(1).click()
    assert tabs.nth(1).get_attribute("aria-selected") == "true"
    assert tabs.nth(0).get_attribute("aria-selected") == "false"
    assert page.locator("#subq-panel-1").is_visible() and page.locator("#subq-panel-0").is_hidden()
    assert shown_ids(1) == subanswers[1]["evidence"]
    assert page.locator("#subq-panel-1 h3").inner_text() == subanswers[1]["subquestion"]
    screenshot(page, "research-subquestion-tab.png")

    # keyboard: arrows move between tabs (roving focus), Home goes back to the first
    tabs.nth(1).focus()
    page.keyboard.press("ArrowLeft")
    assert tabs.nth(0).get_attribute("aria-selected") == "true"
    assert page.evaluate("document.activeElement.id") == "subq-tab-0"
    page.keyboard.press("End")
    assert tabs.nth(len(subanswers) - 1).get_attribute("aria-selected") == "true"

    # web evidence stays under the sub-question whose web search found it
    web_ids = {c["id"] for c in api["citations"] if c.get("source") == "web"}
    assert web_ids, "the stand-in web search added evidence"
    assert any(set(sub["evidence"]) & web_ids for sub in subanswers)


def test_server_error_is_shown_as_an_error(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app, max_hops="99")
    alert = page.locator("#error[role=alert]")
    alert.wait_for(state="visible")
    assert "max_hops" in alert.inner_text()
    assert page.locator("#summary").is_hidden() and page.locator("#answer").is_hidden()


def test_empty_question_is_refused_in_the_page(page: Any, live_app: LiveApp) -> None:
    page.goto(live_app.url + "/")
    page.wait_for_selector("#collection option[value='empty']", state="attached")
    # the picker offers the research collections, not the practitioner profile index
    options = page.locator("#collection option").evaluate_all("els => els.map(e => e.value)")
    assert sorted(options) == ["demo", "empty", "flags"]
    assert page.locator("#collection").input_value() == "demo"
    page.click("#ask-button")
    assert "type a question" in page.locator("#error").inner_text()
    assert page.evaluate("document.activeElement.id") == "question"


def test_no_evidence_shows_the_insufficient_evidence_template(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app, question="xylophonic quasars", max_hops="1", collection="empty")
    page.locator("#summary .notice.insufficient").wait_for(state="visible")
    page.wait_for_function("document.getElementById('ask-button').disabled === false")
    assert "insufficient evidence" in page.inner_text("#summary")
    assert page.locator("#summary .cite").count() == 0
    screenshot(page, "research-insufficient.png")


def test_untrusted_text_is_escaped(page: Any, live_app: LiveApp) -> None:
    page.add_init_script("window.__pwned = false;")
    ask(
        page,
        live_app,
        question='stroke risk <img src=x onerror="window.__pwned=true"> <b>bold</b>',
        max_hops="1",
    )
    wait_for_answer(page)
    assert "<img src=x" in page.locator("#hop-list .hop-sub").first.inner_text()
    assert page.locator("main img").count() == 0 and page.locator("main b").count() == 0
    assert page.evaluate("window.__pwned") is False


def test_readable_on_a_phone(phone: Any, live_app: LiveApp) -> None:
    ask(phone, live_app)
    wait_for_answer(phone)
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the page scrolls sideways on a 375px screen ({width}px wide)"
    screenshot(phone, "research-phone.png")
    phone.evaluate("window.scrollTo(0, document.getElementById('hops').offsetTop - 8)")
    screenshot(phone, "research-phone-hops.png", full_page=False)
    phone.evaluate("window.scrollTo(0, document.getElementById('report').offsetTop - 8)")
    screenshot(phone, "research-phone-report.png", full_page=False)


def test_every_control_has_a_label(page: Any, live_app: LiveApp) -> None:
    for path in ("/", "/practitioners"):
        page.goto(live_app.url + path)
        unlabeled = page.evaluate(
            """() => [...document.querySelectorAll('input, select, textarea')]
                .filter(el => !(el.id && document.querySelector(`label[for="${el.id}"]`)))
                .filter(el => !el.getAttribute('aria-label'))
                .map(el => el.outerHTML)"""
        )
        assert unlabeled == [], f"{path}: controls without a label: {unlabeled}"
        assert page.locator("nav[aria-label=Main] a[aria-current=page]").count() == 1
