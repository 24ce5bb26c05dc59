"""Title, authors and year of the project's real documents as the readers find them, against lists checked by
hand: the shared set (fixtures/real_docs_metadata.json), the blind sets' files (fixtures/blind_docs_metadata.json,
read by hand before deepcite's reading was looked at) and ten files of Debian's documentation
(fixtures/unseen_docs_metadata.json, written before the readers were run on them). Right for at least 0.90 of the
documents that state each where the floors say so, and no year where the document states none (a year is never
guessed)."""

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
EVAL = Path(__file__).parents[2] / "eval"  # blind*/files: not committed, rebuilt as each set's README says
DOCS = Path("/usr/share/doc")  # Debian's package documentation (the unseen list names each file's package)
FIXTURES = Path(__file__).parent / "fixtures"
# each list: the folder its names are under, and the checked list
LISTS = {
    "shared": (FILES, "real_docs_metadata.json"),
    "blind": (EVAL, "blind_docs_metadata.json"),
    "unseen": (DOCS, "unseen_docs_metadata.json"),
}
SHARE = 0.90  # the target of issue 47
# the shared and blind lists meet it (the blind list is the one the readers' rules were worked out on); the
# unseen list (written before the readers were run on it, docs/benchmarks/document-metadata.md) does not: its
# floors keep what is read right from going back
FLOORS = {
    "shared": {"title": SHARE, "authors": SHARE, "year": SHARE},  # read right: 17/17, 12/12, 11/11
    "blind": {"title": SHARE, "authors": 0.96, "year": 0.96},  # read right: 36/40, 32/33, 30/31
    "unseen": {"title": 0.9, "authors": 0.14, "year": 0.55},  # read right: 9/10, 1/7, 5/9
}


def words(text: str) -> str:
    """A text compared as its words: accents, case, punctuation (a curly apostrophe as a straight one) and single
    letters (initials) aside."""
    plain = unicodedata.normalize("NFKD", text.replace("’", "'")).encode("ascii", "ignore").decode().lower()
    return " ".join(w for w in re.findall(r"[a-z0-9]+", plain) if len(w) > 1)


def title_right(found: str, checked: dict[str, Any]) -> bool:
    """The title as stated, with a short label before it (a report number: 'GAO-23-106826, …') or not, and
    followed by all or the first words of its subtitle, if it has one."""
    found, title = words(found), words(checked["title"])
    subtitle = words(checked.get("subtitle") or "").split()
    ends = [" ".join([title, *subtitle[:n]]) for n in range(len(subtitle) + 1)]
    return any(found.endswith(end) and len(found) - len(end) <= 20 for end in ends)


Checked = tuple[str, dict[str, Any], dict[str, Document]]  # a list's name, its documents, what is read


@pytest.fixture(scope="module", params=sorted(LISTS))
def checked(request: pytest.FixtureRequest) -> Checked:
    """One checked list's name, its documents and what the readers find in its files."""
    folder, listing = LISTS[request.param]
    documents = json.loads((FIXTURES / listing).read_text())["documents"]
    missing = [n for n in documents if not (folder / n).is_file()]
    if missing:
        pytest.skip(f"{len(missing)} files of the {request.param} list are not here ({missing[0]}, …)")
    settings = Settings().ingest
    found = {}
    for name in documents:
        result = read_file(folder / name, doc_id=name, name=Path(name).name, settings=settings)
        assert result.documents, (name, result)
        found[name] = result.documents[0].document
    return request.param, documents, found


def score(checked: Checked, field: str, right: Any) -> tuple[float, list[str]]:
    _, documents, read = checked
    stated = {n: c for n, c in documents.items() if c[field] is not None}
    wrong = [f"{n}: {getattr(read[n], field)!r}" for n, c in stated.items() if not right(read[n], c)]
    return 1 - len(wrong) / len(stated), wrong


def test_titles_authors_and_years_as_the_documents_state_them(checked: Checked) -> None:
    floor = FLOORS[checked[0]]
    titles, bad_titles = score(checked, "title", lambda d, c: title_right(d.title, c))
    authors, bad_authors = score(
        checked, "authors", lambda d, c: [words(a) for a in d.authors] == [words(a) for a in c["authors"]]
    )
    years, bad_years = score(checked, "year", lambda d, c: d.year == c["year"])
    assert titles >= floor["title"], bad_titles
    assert authors >= floor["authors"], bad_authors
    assert years >= floor["year"], bad_years


def test_no_year_is_invented(checked: Checked) -> None:
    _, documents, read = checked
    invented = {
        n: read[n].year for n, c in documents.items() if c["year"] is None and read[n].year is not None
    }
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
