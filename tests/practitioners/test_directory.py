"""The SQLite directory: versioned migrations and all-or-nothing transactions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from deepcite.errors import ConfigError
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.migrations import MIGRATIONS, SCHEMA_VERSION, migrate, schema_version
from deepcite.practitioners.records import Practitioner


def _doctor(npi: str = "1234567893", **fields: object) -> Practitioner:
    return Practitioner(npi=npi, name=str(fields.pop("name", "ANA EXAMPLE")), **fields)  # type: ignore[arg-type]


def test_new_file_gets_every_migration(tmp_path: Path) -> None:
    directory = Directory(tmp_path / "d.sqlite")
    conn = sqlite3.connect(tmp_path / "d.sqlite")
    assert schema_version(conn) == SCHEMA_VERSION == MIGRATIONS[-1][0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"practitioners", "imports", "index_state"} <= tables
    directory.close()


def test_older_file_is_migrated_forward_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for statement in MIGRATIONS[0][1].split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO practitioners (npi, name, updated_at) VALUES ('1234567893', 'OLD ROW', 'x')")
    conn.execute("PRAGMA user_version = 1")
    conn.execute("COMMIT")
    conn.close()
    directory = Directory(path)
    assert directory.get("1234567893").name == "OLD ROW"  # type: ignore[union-attr]
    assert directory.index_dirty()  # version 2 added the index state, marked stale
    directory.close()
    assert migrate(sqlite3.connect(path, isolation_level=None)) == []  # nothing left to apply


def test_file_from_a_newer_deepcite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(ConfigError, match="newer than this deepcite"):
        Directory(path)


def test_a_failed_transaction_writes_nothing(tmp_path: Path) -> None:
    directory = Directory(tmp_path / "d.sqlite")
    with directory.transaction():
        directory.upsert(_doctor(), source="test")
    with pytest.raises(RuntimeError), directory.transaction():
        directory.upsert(_doctor(name="CHANGED"), source="test")
        directory.upsert(_doctor("1588667638"), source="test")
        raise RuntimeError("boom")
    assert directory.count() == 1
    assert directory.get("1234567893").name == "ANA EXAMPLE"  # type: ignore[union-attr]


def test_writes_outside_a_transaction_are_refused(tmp_path: Path) -> None:
    directory = Directory(tmp_path / "d.sqlite")
    with pytest.raises(RuntimeError, match="transaction"):
        directory.upsert(_doctor(), source="test")


def test_lists_round_trip(tmp_path: Path) -> None:
    directory = Directory(tmp_path / "d.sqlite")
    doctor = _doctor(
        secondary_specialties=["SLEEP MEDICINE"], languages=["French"], rating=4.5, review_count=12
    )
    with directory.transaction():
        assert directory.upsert(doctor, source="test") is True
        assert directory.upsert(doctor, source="test") is False
    assert directory.get(doctor.npi) == doctor
