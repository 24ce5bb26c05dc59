"""Versioned schema of the practitioner directory: ordered steps, the applied version in PRAGMA user_version.

Append a new step to :data:`MIGRATIONS` to change the schema; never edit a step that has shipped. Each
step runs inside one transaction together with the version bump, so a failed step leaves the file at
the previous version.
"""

from __future__ import annotations

import sqlite3

from deepcite.errors import ConfigError

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE practitioners (
            npi TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            first_name TEXT,
            last_name TEXT,
            credential TEXT,
            gender TEXT,
            primary_specialty TEXT,
            secondary_specialties TEXT NOT NULL DEFAULT '[]',
            organisation TEXT,
            address TEXT,
            city TEXT,
            state TEXT,
            zip TEXT,
            hospital_affiliations TEXT NOT NULL DEFAULT '[]',
            graduation_year INTEGER,
            rating REAL,
            review_count INTEGER,
            languages TEXT NOT NULL DEFAULT '[]',
            procedures TEXT NOT NULL DEFAULT '[]',
            conditions TEXT NOT NULL DEFAULT '[]',
            source TEXT,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX practitioners_location ON practitioners (state, city);
        CREATE INDEX practitioners_zip ON practitioners (zip);
        CREATE INDEX practitioners_specialty ON practitioners (primary_specialty);
        """,
    ),
    (
        2,
        """
        CREATE TABLE imports (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL,
            format TEXT NOT NULL,
            rows_read INTEGER NOT NULL,
            inserted INTEGER NOT NULL,
            updated INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            finished_at TEXT NOT NULL
        );
        CREATE TABLE index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            dirty INTEGER NOT NULL
        );
        INSERT INTO index_state (id, dirty) VALUES (1, 1);
        """,
    ),
    (
        3,
        """
        CREATE TABLE specialty_vectors (
            model TEXT NOT NULL,
            specialty TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, specialty, kind, text)
        );
        """,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1][0]


def schema_version(conn: sqlite3.Connection) -> int:
    """The version recorded in the file (0 for a new file)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply every step newer than the file's version, in order; returns the versions applied.

    ``conn`` must be in autocommit mode (``isolation_level=None``): each step opens its own transaction.
    """
    current = schema_version(conn)
    if current > SCHEMA_VERSION:
        raise ConfigError(
            f"practitioner directory schema is version {current}, newer than this deepcite "
            f"({SCHEMA_VERSION}); upgrade deepcite or point DEEPCITE_PRACTITIONERS_DB_PATH at another file"
        )
    applied: list[int] = []
    for version, script in MIGRATIONS:
        if version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(version)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
