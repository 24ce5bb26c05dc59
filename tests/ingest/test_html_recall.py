"""A web page's content blocks that trafilatura's main content leaves out are read, its boilerplate is not
(:mod:`deepcite.ingest.readers.html_recall`), and its footer's licence line closes its text
(:mod:`deepcite.ingest.readers.html_front`). Fixture: ``tests/fixtures/html_recall`` (see its README)."""

from __future__ import annotations

from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.readers import read_file
from deepcite.ingest.readers.base import Block
from deepcite.models import TextKind

PAGE = Path(__file__).resolve().parent.parent / "fixtures" / "html_recall" / "field_school.html"


def _blocks(settings: IngestSettings | None = None) -> list[Block]:
    result = read_file(PAGE, doc_id=PAGE.name, name=PAGE.name, settings=settings or IngestSettings())
    assert result.skip is None, result.skip
    (read,) = result.documents
    return read.blocks


def _under(blocks: list[Block], section: str) -> str:
    return "\n\n".join(b.text for b in blocks if b.section == section and b.kind != TextKind.HEADING)


def test_a_landing_pages_cards_are_read_under_their_headings() -> None:
    blocks = _blocks()
    headings = [b.text for b in blocks if b.kind == TextKind.HEADING]
    assert headings == [
        "About the Course",
        "Teaching Staff",
        "Course Director",
        "Field Coordinator",
        "Course Fee",
        "Places",
        "First Day",
        "Monday, June 14 - Arrival",
    ]
    assert _under(blocks, "Course Director").split("\n\n") == ["Dr. Ingrid Halvorsen", "University of Bergen"]
    assert _under(blocks, "Field Coordinator").split("\n\n") == ["Tomas Ferreira", "Sula Marine Station"]
    assert "EUR 450, covering board and lodging" in _under(blocks, "Course Fee")
    assert _under(blocks, "Places") == "24 students"
    # the hero's dates open the text; trafilatura's paragraphs keep their place, now under their heading
    assert "June 14 - June 27, 2027" in blocks[0].text
    assert "two-week residential course" in _under(blocks, "About the Course")


def test_a_sessions_title_after_its_time_reads_with_it_under_the_day() -> None:
    # the time is set before the session's own card (its title and description), so the title is no section
    # of its own: the time and the title stay in one passage, under the day's heading
    assert _under(_blocks(), "Monday, June 14 - Arrival").split("\n\n") == [
        "15:00 - 18:00",
        "Check-in at the Station",
        "Rooms and lab benches assigned",
        "19:30",
        "Welcome Dinner",
        "Harbour restaurant",
    ]


def test_menus_link_lists_sharing_and_forms_stay_out() -> None:
    text = "\n".join(b.text for b in _blocks())
    for boilerplate in (
        "Programme",  # the menu
        "APPLY NOW",  # a link
        "Share",
        "Twitter",  # the share bar
        "You might also like",
        "Arctic Ocean Summer Course",  # a list of links
        "Stay informed",
        "Get the station's news",  # a box with a form
        "Privacy",  # the footer
    ):
        assert boilerplate not in text, boilerplate


def test_the_footers_licence_line_closes_the_text() -> None:
    blocks = _blocks()
    assert blocks[-1].text == "Text licensed under CC BY 4.0; photographs all rights reserved"
    assert "© 2027" not in "\n".join(b.text for b in blocks)  # a copyright line names no licence
    assert blocks[-1].section is None


def test_without_recall_the_page_is_trafilaturas_main_content() -> None:
    text = "\n".join(b.text for b in _blocks(IngestSettings(html_recall=False)))
    assert "two-week residential course" in text
    assert "Dr. Ingrid Halvorsen" not in text
