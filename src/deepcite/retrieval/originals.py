"""The original files behind a collection's documents, kept so a citation can open the file at its page.

Usage::

    from deepcite.retrieval.originals import OriginalsStore

    originals = OriginalsStore.for_collection(settings, "papers")
    originals.put("pasa.pdf", Path("in/pasa.pdf"), media_type="application/pdf")
    originals.path_for("pasa.pdf")      # <data dir>/files/papers/<sha256>.pdf
    originals.media_type("pasa.pdf")    # "application/pdf"

Files are stored once per content (``<sha256>.<ext>``), written to a temporary name and renamed, so a
reader never sees half a file; a SQLite manifest maps each document id to its stored file, media type
and original name. This store does no access control: **callers must apply the document's ACL before
serving a file** (the chunks of the document carry its groups).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from deepcite.config import Settings
from deepcite.errors import CollectionDamagedError, InputError
from deepcite.retrieval.integrity import os_failure, quick_check, sqlite_failure

_SAFE_EXT = re.compile(r"^[a-z0-9]{1,10}$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS originals (
    doc_id TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    ext TEXT NOT NULL,
    media_type TEXT NOT NULL,
    name TEXT NOT NULL,
    size INTEGER NOT NULL
)
"""


@dataclass(frozen=True)
class StoredOriginal:
    """One manifest row: the document, its stored file's digest and suffix, media type and original name."""

    doc_id: str
    sha256: str
    ext: str
    media_type: str
    name: str
    size: int


class OriginalsStore:
    """Original files of one collection under ``root`` (``<data dir>/files/<collection>``)."""

    MANIFEST = "manifest.sqlite"

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def for_collection(cls, settings: Settings, collection: str) -> OriginalsStore:
        """The store of collection ``collection`` under the settings' data dir."""
        if not _SAFE_NAME.match(collection):
            raise InputError(
                f"collection name {collection!r} cannot name a folder; use letters, digits, '.', '_' or '-'"
            )
        return cls(settings.data_dir / "files" / collection)

    def put(self, doc_id: str, source: Path, *, media_type: str, name: str | None = None) -> StoredOriginal:
        """Copy ``source`` in (once per content) and record it as ``doc_id``'s original; returns the row.

        A document that already had another file is pointed at the new one and the old file is removed
        when no other document shares it.
        """
        digest = _sha256(source)
        ext = source.suffix.lower().lstrip(".")
        ext = ext if _SAFE_EXT.match(ext) else "bin"
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.root / f"{digest}.{ext}"
        if not target.exists():
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".incoming-")
            try:
                with os.fdopen(fd, "wb") as out, source.open("rb") as src:
                    shutil.copyfileobj(src, out)
                os.replace(tmp, target)
            except BaseException as exc:
                Path(tmp).unlink(missing_ok=True)
                if isinstance(exc, OSError) and os_failure(exc, self.root):
                    raise os_failure(exc, self.root) from None
                raise
        row = StoredOriginal(doc_id, digest, ext, media_type, name or source.name, target.stat().st_size)
        previous = self.get(doc_id)
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO originals VALUES (?, ?, ?, ?, ?, ?)",
                (row.doc_id, row.sha256, row.ext, row.media_type, row.name, row.size),
            )
        if previous and (previous.sha256, previous.ext) != (digest, ext):
            self._remove_file_if_unused(previous)
        return row

    def get(self, doc_id: str) -> StoredOriginal | None:
        """The manifest row of ``doc_id``, or ``None``."""
        if not (self.root / self.MANIFEST).exists():
            return None
        with self._db() as db:
            found = db.execute("SELECT * FROM originals WHERE doc_id = ?", (doc_id,)).fetchone()
        return StoredOriginal(*found) if found else None

    def path_for(self, doc_id: str) -> Path | None:
        """The stored file of ``doc_id`` (``None`` when there is none); never a path outside ``root``."""
        row = self.get(doc_id)
        if row is None:
            return None
        path = self.root / f"{row.sha256}.{row.ext}"
        return path if path.is_file() else None

    def verified_path(self, doc_id: str) -> Path | None:
        """:meth:`path_for`, the file's content checked against the digest it is stored under:
        CollectionDamagedError when they differ (a damaged file is never served as the document)."""
        path = self.path_for(doc_id)
        if path is not None and _sha256(path) != path.stem:
            raise CollectionDamagedError(
                self.root.name, f"the stored original of {doc_id!r} does not match its checksum"
            )
        return path

    def problems(self) -> list[str]:
        """What ``collections check`` finds wrong: the manifest's own verification, then each document whose
        original is missing or does not match its checksum."""
        manifest = self.root / self.MANIFEST
        found = quick_check(manifest, "originals manifest")
        if found or not manifest.exists():
            return found
        for doc_id in self.doc_ids():
            row = self.get(doc_id)
            path = self.root / f"{row.sha256}.{row.ext}" if row else None
            if path is None or not path.is_file():
                found.append(f"the original of {doc_id!r} is missing; ingest its file again")
            elif _sha256(path) != row.sha256:
                found.append(f"the original of {doc_id!r} does not match its checksum; ingest its file again")
        return found

    def media_type(self, doc_id: str) -> str | None:
        """The media type recorded for ``doc_id``'s original (``application/pdf`` …), or ``None``."""
        row = self.get(doc_id)
        return row.media_type if row else None

    def remove(self, doc_id: str) -> bool:
        """Forget ``doc_id``'s original and delete its file when no other document shares it."""
        row = self.get(doc_id)
        if row is None:
            return False
        with self._db() as db:
            db.execute("DELETE FROM originals WHERE doc_id = ?", (doc_id,))
        self._remove_file_if_unused(row)
        return True

    def doc_ids(self) -> list[str]:
        """Every document with a stored original, sorted."""
        if not (self.root / self.MANIFEST).exists():
            return []
        with self._db() as db:
            return [r[0] for r in db.execute("SELECT doc_id FROM originals ORDER BY doc_id")]

    def clear(self) -> None:
        """Delete every stored original of the collection (the collection is being dropped)."""
        shutil.rmtree(self.root, ignore_errors=True)

    def _remove_file_if_unused(self, row: StoredOriginal) -> None:
        with self._db() as db:
            shared = db.execute(
                "SELECT 1 FROM originals WHERE sha256 = ? AND ext = ?", (row.sha256, row.ext)
            ).fetchone()
        if not shared:
            (self.root / f"{row.sha256}.{row.ext}").unlink(missing_ok=True)

    def _db(self) -> _Transaction:
        self.root.mkdir(parents=True, exist_ok=True)
        return _Transaction(self.root / self.MANIFEST)


class _Transaction:
    """A short SQLite connection: commits on success, rolls back on error, always closes."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._conn = sqlite3.connect(path, timeout=30)

    def __enter__(self) -> sqlite3.Connection:
        try:
            self._conn.execute(_SCHEMA)
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._failure(exc) or exc from None
        return self._conn

    def __exit__(self, exc_type: object, exc: BaseException | None, *_: object) -> None:
        with closing(self._conn):
            try:
                if exc_type is None:
                    self._conn.commit()
                else:
                    self._conn.rollback()
            except sqlite3.Error as failed:
                raise self._failure(failed) or failed from None
        if isinstance(exc, sqlite3.Error):
            raise self._failure(exc) or exc from None
        if isinstance(exc, OSError) and os_failure(exc, self._path.parent):
            raise os_failure(exc, self._path.parent) from None

    def _failure(self, exc: sqlite3.Error) -> Exception | None:
        return sqlite_failure(exc, self._path.parent.name, "originals manifest", self._path.parent)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
