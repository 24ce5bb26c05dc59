"""Saved answers: every answer kept with what made it, in one SQLite file of the data dir.

Usage::

    store = SavedAnswers.open(settings)  # <data dir>/answers.sqlite (setting saved.path)
    store.save(saved)  # a SavedAnswer: question, request, settings, evidence pack, response, ACL groups
    store.list("demo", groups=("cardiology",))  # newest first, only those the caller may read
    store.get(answer_id, groups)  # NotFoundError when missing or not the caller's to read

A saved answer may be read by a caller whose ACL groups include every group it was retrieved under (an
unrestricted caller reads all; an answer retrieved without restriction only an unrestricted caller), so
a saved answer never shows passages its reader could not search; any other caller gets the same 404 as
for an id that does not exist. Every write is one transaction: the new answer and the eviction of the
oldest past ``saved.max_answers`` commit together. :func:`passage_changes` compares the cited passages of
two answers to one question (a re-run against the collection as it is now).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from deepcite.answer.pipeline import Citation
from deepcite.config import SavedAnswerSettings, Settings
from deepcite.errors import ForbiddenError, NotFoundError, StoreError
from deepcite.models import EvidencePack
from deepcite.service import AskResponse, Groups, QuestionRequest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    collection TEXT NOT NULL,
    question TEXT NOT NULL,
    created_at TEXT NOT NULL,
    acl TEXT,
    cited INTEGER NOT NULL,
    rerun_of TEXT,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_by_collection ON answers (collection, seq);
"""
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


Status = Literal["added", "removed", "changed", "unchanged"]


class PassageChange(BaseModel):
    """How one cited passage differs between an answer and its re-run: ``added`` (cited now, not before),
    ``removed`` (cited before, not now), ``changed`` (the same place of the same document, another text) or
    ``unchanged``. Passages are matched by document and position in it; ``before``/``after`` are the
    citation ids in each answer, ``text_before``/``text_after`` their passages' texts and
    ``page_before``/``page_after`` the pages they open at (the quote's page, else the passage's first; None
    for a document without pages)."""

    status: Status
    doc_id: str
    position: int
    title: str = ""
    before: int | None = None
    after: int | None = None
    text_before: str = ""
    text_after: str = ""
    page_before: int | None = None
    page_after: int | None = None


class SavedAnswerInfo(BaseModel):
    """A saved answer as a listing shows it."""

    id: str
    collection: str
    question: str
    created_at: datetime
    cited: int  # passages the answer cites
    rerun_of: str | None = None


class SavedAnswer(SavedAnswerInfo):
    """An answer with what made it: the request as asked, the settings that shaped research and answer (a
    snapshot kept as plain JSON so it reads after settings change), the evidence pack, the response (its
    citations, quotes and citation-check counts), the ACL groups it was retrieved under and, for a re-run,
    how its cited passages differ from the answer it re-ran."""

    request: QuestionRequest
    settings: dict[str, Any] = Field(default_factory=dict)
    pack: EvidencePack
    response: AskResponse
    acl_groups: list[str] | None = None  # None: retrieved without ACL restriction
    changes: list[PassageChange] = Field(default_factory=list)

    def info(self) -> SavedAnswerInfo:
        return SavedAnswerInfo.model_validate(self, from_attributes=True)


class SavedAnswerList(BaseModel):
    """``GET /api/answers``: the newest saved answers of a collection that the caller may read."""

    collection: str
    answers: list[SavedAnswerInfo]


def settings_snapshot(settings: Settings) -> dict[str, Any]:
    """The settings sections that shape an answer (search, research, answer, embedder), as JSON."""
    return {
        name: getattr(settings, name).model_dump(mode="json")
        for name in ("search", "research", "answer", "embedder")
    }


def cited_citations(response: AskResponse) -> list[Citation]:
    """The citations some kept sentence of the response cites (summary, answer or a sub-answer)."""
    cited = set(response.citation_check.cited_ids)
    return [c for c in response.citations if c.id in cited]


def passage_changes(before: AskResponse, after: AskResponse) -> list[PassageChange]:
    """The cited passages of ``after`` against those of ``before``: changed, removed and added ones first,
    then unchanged, each in citation order."""
    old = {(c.doc_id, c.position): c for c in cited_citations(before)}
    new = {(c.doc_id, c.position): c for c in cited_citations(after)}
    changes: list[PassageChange] = []
    for key in [*old, *(k for k in new if k not in old)]:
        was, now = old.get(key), new.get(key)
        if was is None or now is None:
            status: Status = "added" if was is None else "removed"
        else:
            status = "unchanged" if was.text == now.text else "changed"
        changes.append(
            PassageChange(
                status=status,
                doc_id=key[0],
                position=key[1],
                title=(now or was).title,  # type: ignore[union-attr]  # one of them is set
                before=was.id if was else None,
                after=now.id if now else None,
                text_before=was.text if was else "",
                text_after=now.text if now else "",
                page_before=was.quote_page if was else None,
                page_after=now.quote_page if now else None,
            )
        )
    order = {"changed": 0, "removed": 1, "added": 2, "unchanged": 3}
    return sorted(changes, key=lambda c: order[c.status])


def may_read(owner: Sequence[str] | None, groups: Groups) -> bool:
    """Whether a caller with ``groups`` (None: unrestricted) may read what was retrieved under ``owner``."""
    return groups is None or (owner is not None and set(owner) <= set(groups))


class SavedAnswers:
    """The saved answers of one data dir (see the module docstring); safe from threads (a connection per
    operation, SQLite's own locking between processes)."""

    def __init__(self, path: Path, settings: SavedAnswerSettings) -> None:
        self.path = path
        self.settings = settings

    @classmethod
    def open(cls, settings: Settings) -> SavedAnswers:
        """The store at ``settings.saved_answers_db`` (the file is made on first use)."""
        return cls(settings.saved_answers_db, settings.saved)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.path, timeout=self.settings.busy_timeout_s)) as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
                with db:  # one transaction: committed on success, rolled back on error
                    yield db
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"the saved answers file ({self.path.name} in the data dir) cannot be used: {exc}; "
                "move it aside to start a new one (setting saved.path)"
            ) from exc
        except OSError as exc:
            raise StoreError(
                f"the saved answers file ({self.path.name} in the data dir) cannot be written: "
                f"{exc.strerror or exc}; check the data dir's space and permissions"
            ) from exc

    def save(self, answer: SavedAnswer) -> bool:
        """Keep ``answer`` (replacing one of the same id), evicting the oldest past ``saved.max_answers``;
        False when saving is off (``max_answers`` 0)."""
        cap = self.settings.max_answers
        if cap == 0:
            return False
        acl = None if answer.acl_groups is None else json.dumps(sorted(answer.acl_groups))
        row = (
            answer.id,
            answer.collection,
            answer.question,
            answer.created_at.isoformat(),
            acl,
            answer.cited,
            answer.rerun_of,
            answer.model_dump_json(),
        )
        with self._db() as db:
            db.execute("DELETE FROM answers WHERE id = ?", (answer.id,))
            db.execute(
                "INSERT INTO answers (id, collection, question, created_at, acl, cited, rerun_of, body) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            db.execute(
                "DELETE FROM answers WHERE seq <= (SELECT seq FROM answers ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                (cap,),
            )
        return True

    def list(self, collection: str, groups: Groups, limit: int | None = None) -> list[SavedAnswerInfo]:
        """The newest saved answers of ``collection`` the caller may read (at most ``saved.list_limit``)."""
        limit = min(limit or self.settings.list_limit, self.settings.list_limit)
        out: list[SavedAnswerInfo] = []
        with self._db() as db:
            rows = db.execute(
                "SELECT id, collection, question, created_at, acl, cited, rerun_of FROM answers "
                "WHERE collection = ? ORDER BY seq DESC",
                (collection,),
            )
            for row in rows:
                if not may_read(_groups(row[4]), groups):
                    continue
                out.append(
                    SavedAnswerInfo(
                        id=row[0],
                        collection=row[1],
                        question=row[2],
                        created_at=datetime.fromisoformat(row[3]),
                        cited=row[5],
                        rerun_of=row[6],
                    )
                )
                if len(out) >= limit:
                    break
        return out

    def get(self, answer_id: str, groups: Groups) -> SavedAnswer:
        """The saved answer ``answer_id``; NotFoundError when there is none the caller may read."""
        with self._db() as db:
            body = _readable_body(db, answer_id, groups)
        try:
            return SavedAnswer.model_validate_json(body)
        except ValidationError as exc:
            raise StoreError(
                f"saved answer {answer_id!r} cannot be read back ({exc.error_count()} problems, e.g. "
                f"{exc.errors()[0]['msg']}); delete it and ask again"
            ) from exc

    def delete(self, answer_id: str, groups: Groups) -> None:
        """Delete a saved answer the caller owns: NotFoundError when it may not read it, ForbiddenError (403)
        when it may read but not own it (:func:`may_delete`)."""
        with self._db() as db:
            _readable_body(db, answer_id, groups)
            owner = _groups(db.execute("SELECT acl FROM answers WHERE id = ?", (answer_id,)).fetchone()[0])
            if not may_delete(owner, groups):
                raise ForbiddenError(
                    "this saved answer was asked under groups your token does not have (or by a token with no "
                    "group); only a token of its groups, or an unrestricted token, may delete it"
                )
            db.execute("DELETE FROM answers WHERE id = ?", (answer_id,))

    def count(self) -> int:
        """How many answers are saved (for every caller)."""
        with self._db() as db:
            return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])


def new_saved_answer(
    *,
    collection: str,
    request: QuestionRequest,
    settings: Settings,
    pack: EvidencePack,
    response: AskResponse,
    acl_groups: list[str] | None,
    previous: SavedAnswer | None = None,
) -> SavedAnswer:
    """The record of an answer just given (its id is the response's request id); for a re-run,
    ``previous`` is the answer re-run and the cited passages' changes against it are kept."""
    public_pack = pack.model_copy(deep=True)
    for candidate in [
        *public_pack.final_evidence,
        *(c for v in public_pack.subquery_evidence.values() for c in v),
    ]:
        candidate.chunk.acl = []  # who may read the answer is acl_groups; the chunks' groups stay internal
    return SavedAnswer(
        id=response.request_id,
        collection=collection,
        question=request.query,
        created_at=datetime.now(UTC),
        cited=len(cited_citations(response)),
        rerun_of=previous.id if previous else None,
        request=request,
        settings=settings_snapshot(settings),
        pack=public_pack,
        response=response,
        acl_groups=acl_groups,
        changes=passage_changes(previous.response, response) if previous else [],
    )


def may_delete(owner: Sequence[str] | None, groups: Groups) -> bool:
    """Whether a caller with ``groups`` owns an answer asked under ``owner``: an unrestricted caller owns every
    answer; a restricted one those asked under some of its groups (an answer asked with no group is public:
    any token reads it, only an unrestricted one deletes it)."""
    return groups is None or (bool(owner) and set(owner or ()) <= set(groups))


def _groups(raw: str | None) -> list[str] | None:
    return None if raw is None else list(json.loads(raw))


def _readable_body(db: sqlite3.Connection, answer_id: str, groups: Groups) -> str:
    """The stored JSON of saved answer ``answer_id`` when the caller with ``groups`` may read it;
    NotFoundError otherwise (for a malformed id too: ids do not leak)."""
    if not _ID_RE.match(answer_id):
        raise _not_found()
    row = db.execute("SELECT acl, body FROM answers WHERE id = ?", (answer_id,)).fetchone()
    if row is None or not may_read(_groups(row[0]), groups):
        raise _not_found()
    return row[1]


def _not_found() -> NotFoundError:
    return NotFoundError(
        "no saved answer with that id that you may read; list the collection's saved answers for the ids"
    )
