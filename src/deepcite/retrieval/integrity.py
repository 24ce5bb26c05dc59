"""What a collection's parts say when their files fail: a damaged part is :class:`CollectionDamagedError` (503,
with the repair command), a full disk is :class:`NoSpaceError` ("not enough space in <data dir>: needs about N
MB, M MB free"), checked before a write where the size is known, and a SQLite file's own verification
(``PRAGMA quick_check``) is what ``collections check`` reads for the graph and the originals' manifest.

Usage::

    require_space(settings.data_dir, needed_bytes, settings.store.min_free_mb)   # before writing
    try:
        ...
    except sqlite3.Error as exc:
        raise sqlite_failure(exc, "papers", "entity graph", settings.data_dir) or exc
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

from deepcite.errors import CollectionDamagedError, DeepciteError, NoSpaceError

_MB = 1024 * 1024


def free_mb(folder: Path) -> float:
    """Free megabytes on the file system of ``folder`` (its nearest existing parent)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return shutil.disk_usage(folder).free / _MB


def no_space(folder: Path, needed_mb: float) -> NoSpaceError:
    """The error of a write that did not fit in ``folder``."""
    return NoSpaceError(
        f"not enough space in {folder}: needs about {max(needed_mb, 1):.0f} MB, {free_mb(folder):.0f} MB free; "
        "free some space (or move the data dir) and try again. What was written before is kept and readable"
    )


def require_space(folder: Path, needed_bytes: int, min_free_mb: float) -> None:
    """NoSpaceError unless ``folder``'s file system has ``needed_bytes`` free beyond ``min_free_mb``."""
    needed_mb = needed_bytes / _MB + min_free_mb
    if free_mb(folder) < needed_mb:
        raise no_space(folder, needed_mb)


def os_failure(exc: OSError, folder: Path) -> DeepciteError | None:
    """A full disk (``ENOSPC``, ``EDQUOT``) as NoSpaceError; None for any other OSError."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return no_space(folder, 0)
    return None


def sqlite_failure(exc: sqlite3.Error, collection: str, part: str, folder: Path) -> DeepciteError | None:
    """A SQLite failure of a collection's ``part``: a full disk as NoSpaceError, a malformed file as
    CollectionDamagedError; None for anything else (a lock held too long, a bug)."""
    text = str(exc)
    if "full" in text:
        return no_space(folder, 0)
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return CollectionDamagedError(collection, f"{part} unreadable: {text}")
    if "malformed" in text or "not a database" in text:
        return CollectionDamagedError(collection, f"{part} unreadable: {text}")
    return None


def quick_check(path: Path, part: str) -> list[str]:
    """SQLite's own verification of the file at ``path`` (``PRAGMA quick_check``): its problems, none when ok."""
    if not path.is_file():
        return []
    try:
        db = sqlite3.connect(path, timeout=30)
        try:
            rows = [r[0] for r in db.execute("PRAGMA quick_check")]
        finally:
            db.close()
    except sqlite3.Error as exc:
        return [f"{part}: {exc}"]
    return [] if rows == ["ok"] else [f"{part}: {r}" for r in rows[:5]]
