"""Title, authors and year of the project's real documents as the readers find them, against a list checked by
hand (fixtures/real_docs_metadata.json): right for at least 0.90 of the documents that state each, and no year
where the document states none (a year is never guessed)."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from deepcite.config import Settings
from deepcite.ingest.readers import read_file
from deepcite.models import Document

pytestmark = pytest.mark.slow

FILES = Path("/work/shared/datasets/real_docs/files")
CHECKED = json.loads((Path(__file__).parent / "fixtures" / "real_docs_metadata.json").read_text())[
    "documents"
]
SHARE = 0.90


def words(text: str) -> str:
    """A text compared as its words: accents, case, punctuation and single letters (initials) aside."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return " ".join(w for w in re.findall(r"[a-z0-9]+", plain) if len(w) > 1)


def title_right(found: str, expected: str) -> bool:
    """The title as stated, or it with a short label before it (a report number: 'GAO-23-106826, …')."""
    found, expected = words(found), words(expected)
    return found.endswith(expected) and len(found) - len(expected) <= 20


@pytest.fixture(scope="module")
def read() -> dict[str, Document]:
    settings = Settings().ingest
    found = {}
    for name in CHECKED:
        result = read_file(FILES / name, doc_id=name, name=name, settings=settings)
        assert result.documents, (name, result)
        found[name] = result.documents[0].document
    return found


def score(read: dict[str, Document], field: str, right: Any) -> tuple[float, list[str]]:
    stated = {n: c[field] for n, c in CHECKED.items() if c[field] is not None}
    wrong = [f"{n}: {getattr(read[n], field)!r}" for n, want in stated.items() if not right(read[n], want)]
    return 1 - len(wrong) / len(stated), wrong


def test_titles_authors_and_years_as_the_documents_state_them(read: dict[str, Document]) -> None:
    titles, bad_titles = score(read, "title", lambda d, want: title_right(d.title, want))
    authors, bad_authors = score(
        read, "authors", lambda d, want: [words(a) for a in d.authors] == [words(a) for a in want]
    )
    years, bad_years = score(read, "year", lambda d, want: d.year == want)
    assert titles >= SHARE, bad_titles
    assert authors >= SHARE, bad_authors
    assert years >= SHARE, bad_years


def test_no_year_is_invented(read: dict[str, Document]) -> None:
    invented = {n: read[n].year for n, c in CHECKED.items() if c["year"] is None and read[n].year is not None}
    assert not invented


def test_deepcite_search_shows_who_and_when(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real page ingested and searched through the CLI: each hit's title with its authors and year."""
    monkeypatch.setenv("DEEPCITE_DATA_DIR", str(tmp_path / "data"))
    for name in ("DEEPCITE_LLM_BASE_URL", "DEEPCITE_LLM_MODEL", "DEEPCITE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()
    ingested = runner.invoke(app, ["ingest", str(FILES / "flag_day.html"), "--collection", "pages"])
    assert ingested.exit_code == 0, ingested.output
    found = runner.invoke(app, ["search", "flag of Canada day", "-c", "pages"], env={"COLUMNS": "200"})
    assert found.exit_code == 0, found.output
    assert "National Flag of Canada Day" in found.output
    assert "Contributors to Wikimedia projects · 2005 · Wikimedia Foundation, Inc." in found.output
    hits = json.loads(runner.invoke(app, ["search", "flag of Canada day", "-c", "pages", "--json"]).output)
    first = hits["hits"][0]
    assert (first["authors"], first["year"], first["venue"]) == (
        ["Contributors to Wikimedia projects"],
        2005,
        "Wikimedia Foundation, Inc.",
    )
