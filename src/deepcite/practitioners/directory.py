"""The practitioner directory: one SQLite file, versioned schema, writes in explicit transactions."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deepcite.config import Settings
from deepcite.errors import ConfigError
from deepcite.practitioners.migrations import migrate
from deepcite.practitioners.records import Practitioner

_LIST_FIELDS = ("secondary_specialties", "hospital_affiliations", "languages", "procedures", "conditions")
_FIELDS = tuple(Practitioner.model_fields)
_COLUMNS = (*_FIELDS, "source", "updated_at")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Directory:
    """Practitioners keyed by NPI in a SQLite file at ``path`` (created and migrated on open).

    >>> directory = Directory(tmp_path / "practitioners.sqlite")  # doctest: +SKIP
    >>> with directory.transaction():  # doctest: +SKIP
    ...     directory.upsert(practitioner, source="cms-reduced")
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA journal_mode = WAL")
            migrate(self._conn)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(
                f"cannot open the practitioner directory {path}: {exc}; is it a SQLite file?"
            ) from exc
        self.path = path
        self._in_transaction = False

    @classmethod
    def open(cls, settings: Settings) -> Directory:
        """The directory at ``settings.practitioners_db``."""
        return cls(settings.practitioners_db)

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all."""
        if self._in_transaction:
            raise RuntimeError("directory transactions do not nest")
        self._conn.execute("BEGIN IMMEDIATE")
        self._in_transaction = True
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")
        finally:
            self._in_transaction = False

    def _require_transaction(self) -> None:
        if not self._in_transaction:
            raise RuntimeError("directory writes must run inside Directory.transaction()")

    # -- writes -----------------------------------------------------------------------------------------

    def upsert(self, practitioner: Practitioner, *, source: str) -> bool:
        """Insert or update by NPI; returns True when the NPI was new. Marks the search index stale."""
        self._require_transaction()
        existed = self.get(practitioner.npi) is not None
        row = _to_row(practitioner) | {"source": source, "updated_at": _now()}
        placeholders = ", ".join(f":{c}" for c in _COLUMNS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS if c != "npi")
        self._conn.execute(
            f"INSERT INTO practitioners ({', '.join(_COLUMNS)}) VALUES ({placeholders}) "
            f"ON CONFLICT(npi) DO UPDATE SET {updates}",
            row,
        )
        self.set_index_dirty(True)
        return not existed

    def record_import(
        self, *, path: str, fmt: str, rows_read: int, inserted: int, updated: int, skipped: int
    ) -> None:
        """Log an import (inside the import's transaction)."""
        self._require_transaction()
        self._conn.execute(
            "INSERT INTO imports (path, format, rows_read, inserted, updated, skipped, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (path, fmt, rows_read, inserted, updated, skipped, _now()),
        )

    def write_specialty_vectors(
        self, model: str, rows: Iterable[tuple[str, str, str, bytes]], stale: Iterable[tuple[str, str, str]]
    ) -> None:
        """Store ``(specialty, kind, text, float32 bytes)`` rows for ``model`` and delete the ``stale``
        ``(specialty, kind, text)`` ones, in one transaction."""
        with self.transaction():
            self._conn.executemany(
                "DELETE FROM specialty_vectors WHERE model = ? AND specialty = ? AND kind = ? AND text = ?",
                [(model, *key) for key in stale],
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO specialty_vectors (model, specialty, kind, text, vector) "
                "VALUES (?, ?, ?, ?, ?)",
                [(model, *row) for row in rows],
            )

    def set_index_dirty(self, dirty: bool) -> None:
        """Record whether the search index lags the directory."""
        self._conn.execute("UPDATE index_state SET dirty = ? WHERE id = 1", (int(dirty),))

    # -- reads ------------------------------------------------------------------------------------------

    def index_dirty(self) -> bool:
        return bool(self._conn.execute("SELECT dirty FROM index_state WHERE id = 1").fetchone()[0])

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM practitioners").fetchone()[0])

    def get(self, npi: str) -> Practitioner | None:
        row = self._conn.execute("SELECT * FROM practitioners WHERE npi = ?", (npi,)).fetchone()
        return _from_row(row) if row else None

    def get_many(self, npis: Iterable[str]) -> dict[str, Practitioner]:
        """NPI -> practitioner for the NPIs that exist."""
        wanted = list(dict.fromkeys(npis))
        out: dict[str, Practitioner] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ", ".join("?" * len(batch))
            for row in self._conn.execute(f"SELECT * FROM practitioners WHERE npi IN ({marks})", batch):
                out[row["npi"]] = _from_row(row)
        return out

    def __iter__(self) -> Iterator[Practitioner]:
        for row in self._conn.execute("SELECT * FROM practitioners ORDER BY npi"):
            yield _from_row(row)

    def primary_specialties(self) -> Counter[str]:
        """How many practitioners have each primary specialty."""
        rows = self._conn.execute(
            "SELECT primary_specialty, COUNT(*) FROM practitioners WHERE primary_specialty IS NOT NULL "
            "GROUP BY primary_specialty"
        )
        return Counter({spec: int(n) for spec, n in rows})

    def specialty_vectors(self, model: str) -> list[tuple[str, str, str, bytes]]:
        """The stored ``(specialty, kind, text, float32 bytes)`` rows of ``model``."""
        rows = self._conn.execute(
            "SELECT specialty, kind, text, vector FROM specialty_vectors WHERE model = ? "
            "ORDER BY specialty, kind, text",
            (model,),
        )
        return [(r[0], r[1], r[2], bytes(r[3])) for r in rows]

    def with_specialty(
        self,
        specialty: str,
        limit: int,
        *,
        city: str | None = None,
        state: str | None = None,
        zip_code: str | None = None,
    ) -> list[Practitioner]:
        """Up to ``limit`` practitioners whose primary specialty is ``specialty`` (and at the location)."""
        clauses, args = _location_clauses(city, state, zip_code)
        where = " AND ".join(["primary_specialty = ?", *clauses])
        rows = self._conn.execute(
            f"SELECT * FROM practitioners WHERE {where} ORDER BY npi LIMIT ?", [specialty, *args, limit]
        )
        return [_from_row(row) for row in rows]

    def cities(self, state: str | None = None) -> list[str]:
        """Distinct cities (optionally of one state), upper-case, sorted."""
        sql = "SELECT DISTINCT city FROM practitioners WHERE city IS NOT NULL"
        args: tuple[Any, ...] = ()
        if state:
            sql += " AND state = ?"
            args = (state.upper(),)
        return [r[0] for r in self._conn.execute(sql + " ORDER BY city", args)]

    def count_at(
        self, *, city: str | None = None, state: str | None = None, zip_code: str | None = None
    ) -> int:
        """How many practitioners match every given location field."""
        clauses, args = _location_clauses(city, state, zip_code)
        where = " AND ".join(clauses) or "1"
        return int(
            self._conn.execute(f"SELECT COUNT(*) FROM practitioners WHERE {where}", args).fetchone()[0]
        )


def _location_clauses(
    city: str | None, state: str | None, zip_code: str | None
) -> tuple[list[str], list[str]]:
    clauses: list[str] = []
    args: list[str] = []
    for column, value in (("city", city), ("state", state), ("zip", zip_code)):
        if value:
            clauses.append(f"{column} = ?")
            args.append(value.upper())
    return clauses, args


def _to_row(p: Practitioner) -> dict[str, Any]:
    row = p.model_dump()
    for field in _LIST_FIELDS:
        row[field] = json.dumps(row[field], ensure_ascii=False)
    return row


def _from_row(row: sqlite3.Row) -> Practitioner:
    data = {k: row[k] for k in _FIELDS}
    for field in _LIST_FIELDS:
        data[field] = json.loads(data[field] or "[]")
    return Practitioner(**data)
