"""The saved-answer store on a real SQLite file: the cap evicts the oldest, the ACL rule, a damaged file is a
clear error, and a re-run's passage changes (added, removed, changed, unchanged)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from deepcite.answer.citations import CitationCheck
from deepcite.answer.pipeline import Citation
from deepcite.config import SavedAnswerSettings, Settings
from deepcite.errors import NotFoundError, StoreError
from deepcite.models import EvidencePack
from deepcite.saved_answers import SavedAnswers, new_saved_answer, passage_changes
from deepcite.service import AskResponse, QuestionRequest


def citation(n: int, doc: str, position: int, text: str) -> Citation:
    return Citation(
        chunk_id=f"{doc}::{position}::x", doc_id=doc, position=position, text=text, id=n, score=1.0
    )


def response(request_id: str, citations: list[Citation], cited: list[int]) -> AskResponse:
    return AskResponse(
        request_id=request_id,
        query="Does it work?",
        summary="It works [1].",
        answer="It works [1].",
        citations=citations,
        citation_check=CitationCheck(cited_ids=cited),
    )


def saved(request_id: str, groups: list[str] | None, collection: str = "demo", **kwargs: object):  # noqa: ANN201
    return new_saved_answer(
        collection=collection,
        request=QuestionRequest(query="Does it work?", collection=collection),
        settings=Settings(),
        pack=EvidencePack(question="Does it work?"),
        response=response(request_id, [citation(1, "d1", 0, "It works.")], [1]),
        acl_groups=groups,
        **kwargs,  # type: ignore[arg-type]
    )


def test_the_oldest_answers_go_past_the_cap(tmp_path: Path) -> None:
    store = SavedAnswers(tmp_path / "answers.sqlite", SavedAnswerSettings(max_answers=3))
    for n in range(5):
        store.save(saved(f"a{n}", None))
    assert store.count() == 3
    assert [a.id for a in store.list("demo", None)] == ["a4", "a3", "a2"]  # newest first
    with pytest.raises(NotFoundError):
        store.get("a0", None)
    off = SavedAnswers(tmp_path / "off.sqlite", SavedAnswerSettings(max_answers=0))
    assert not off.save(saved("b", None)) and off.count() == 0


def test_a_caller_reads_only_answers_retrieved_within_its_groups(tmp_path: Path) -> None:
    store = SavedAnswers(tmp_path / "answers.sqlite", SavedAnswerSettings())
    store.save(saved("cardio", ["cardiology"]))
    store.save(saved("public", []))
    store.save(saved("everything", None))
    store.save(saved("elsewhere", [], collection="other"))
    assert [a.id for a in store.list("demo", ("cardiology", "oncology"))] == ["public", "cardio"]
    assert [a.id for a in store.list("demo", ())] == ["public"]
    assert [a.id for a in store.list("demo", None)] == ["everything", "public", "cardio"]
    assert store.get("cardio", ("cardiology",)).acl_groups == ["cardiology"]
    for groups in [(), ("oncology",)]:
        with pytest.raises(NotFoundError):
            store.get("cardio", groups)
        with pytest.raises(NotFoundError):
            store.delete("cardio", groups)
    store.delete("cardio", ("cardiology",))
    with pytest.raises(NotFoundError):
        store.get("cardio", None)


def test_a_damaged_file_is_a_clear_error_without_its_path(tmp_path: Path) -> None:
    path = tmp_path / "answers.sqlite"
    path.write_bytes(b"this is not a database, it is a text file" * 100)
    store = SavedAnswers(path, SavedAnswerSettings())
    with pytest.raises(StoreError) as caught:
        store.save(saved("a", None))
    message = str(caught.value)
    assert "answers.sqlite in the data dir" in message and "move it aside" in message
    assert str(tmp_path) not in message


def test_an_answer_saved_before_quote_pages_loads_and_opens_at_its_chunks_first_page(tmp_path: Path) -> None:
    store = SavedAnswers(tmp_path / "answers.sqlite", SavedAnswerSettings())
    answer = saved("a", None)
    page_cited = answer.response.citations[0].model_copy(update={"page": 4, "sentence_pages": [5]})
    answer.response.citations[0] = page_cited
    store.save(answer)
    assert store.get("a", None).response.citations[0].quote_page == 4  # no quote: the chunk's first page
    with closing(sqlite3.connect(tmp_path / "answers.sqlite")) as db, db:  # a row an older deepcite wrote
        body = json.loads(db.execute("SELECT body FROM answers WHERE id = 'a'").fetchone()[0])
        for old in body["response"]["citations"]:
            del old["quote_page"], old["sentence_pages"]
        db.execute("UPDATE answers SET body = ? WHERE id = 'a'", (json.dumps(body),))
    (loaded,) = store.get("a", None).response.citations
    assert (loaded.sentence_pages, loaded.quote_page) == (None, 4)


def test_saving_an_id_again_replaces_it(tmp_path: Path) -> None:
    store = SavedAnswers(tmp_path / "answers.sqlite", SavedAnswerSettings(max_answers=2))
    store.save(saved("a", None))
    store.save(saved("b", None))
    store.save(saved("b", None))
    assert [a.id for a in store.list("demo", None)] == ["b", "a"]


def test_a_save_whose_eviction_fails_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "answers.sqlite"
    store = SavedAnswers(path, SavedAnswerSettings(max_answers=2))
    store.save(saved("a", None))
    store.save(saved("b", None))
    with closing(sqlite3.connect(path)) as db, db:  # the eviction of "a" will fail inside the save
        db.execute("CREATE TRIGGER keep BEFORE DELETE ON answers BEGIN SELECT RAISE(ABORT, 'kept'); END")
    with pytest.raises(StoreError, match="kept"):
        store.save(saved("c", None))
    assert [a.id for a in store.list("demo", None)] == ["b", "a"]  # the insert was rolled back with it


def test_passage_changes_name_added_removed_and_changed_passages() -> None:
    before = response(
        "old",
        [citation(1, "d1", 0, "Same."), citation(2, "d2", 0, "Old text."), citation(3, "d3", 1, "Gone."),
         citation(4, "d4", 0, "Never cited.")],
        [1, 2, 3],
    )  # fmt: skip
    after = response(
        "new",
        [citation(1, "d2", 0, "New text."), citation(2, "d1", 0, "Same."), citation(3, "d5", 2, "Fresh.")],
        [1, 2, 3],
    )
    changes = {(c.doc_id, c.status, c.before, c.after) for c in passage_changes(before, after)}
    assert changes == {
        ("d2", "changed", 2, 1),
        ("d3", "removed", 3, None),
        ("d5", "added", None, 3),
        ("d1", "unchanged", 1, 2),
    }
    assert [c.status for c in passage_changes(before, after)] == ["changed", "removed", "added", "unchanged"]
