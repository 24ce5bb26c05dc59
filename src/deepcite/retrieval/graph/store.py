"""The entity graph of one collection, in a SQLite file beside the collection (``<data dir>/graph/<name>.sqlite``).

Usage::

    graph = EntityGraph.for_collection(settings, "papers")
    graph.add(chunks)                 # passages and the entities they mention (one transaction)
    graph.delete_documents(["doc-1"])  # its passages go; entities no passage mentions any more go too
    graph.stats()                     # GraphStats(passages=…, entities=…, mentions=…, synonyms=…)

Nodes are passages and entities; a ``mentions`` row is a passage–entity edge (``title`` when the entity is
the passage's own title). Title links (a passage mentions another document's title) and co-occurrence
(two entities in one passage) are read off the mentions when the walk is built
(:mod:`deepcite.retrieval.graph.ppr`), so adding or deleting a document touches only its own rows. A
``synonyms`` row joins two entity names whose embeddings are close. A ``relations`` row is a triple an LLM
read in a passage (``graph.llm_triples``, :mod:`deepcite.retrieval.graph.triples`): its subject and object
are entities the passage mentions, and the walk joins them by a relation edge. A ``leads`` row keeps a titled
document's lead sentence (the first of its first passage: "X is a city in …"), which says what the page's subject
is (``graph.leads``; :mod:`deepcite.research.answer_types` reads it). Every write bumps ``version``, which
tells a cached walk matrix it is stale. A new graph is stamped with :data:`FORMAT`, the version of the rules that
read what it stores; one stamped otherwise (or not at all) is not :meth:`EntityGraph.current`, and the next ingest
rebuilds it from the collection's stored chunks. Being a file of its own, the graph works the same with the Edge
store and with a Qdrant cluster.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deepcite.config import GraphSettings, Settings
from deepcite.models import Chunk
from deepcite.retrieval.graph.aliases import first_sentence, page_aliases
from deepcite.retrieval.graph.extract import Mention, entity_key, passage_mentions
from deepcite.retrieval.graph.rows import GraphRows
from deepcite.retrieval.graph.triples import PassageFacts
from deepcite.retrieval.integrity import os_failure, quick_check, sqlite_failure
from deepcite.retrieval.originals import OriginalsStore

# the version of the rules that read what the graph stores (names, aliases, leads: extract.py, aliases.py); raise it
# when a change to them alters what a graph holds. 1: leads kept (graph.leads); 2: a lead sentence's life note in
# parentheses gives no aliases ("(born March 12, 1909, St Louis, Missouri)" names no page "St Louis"); 3: letters
# with no decomposition spelled in Latin in a name's key ("Đức" -> "duc", was "uc"; text.accent_free)
FORMAT = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE NOT NULL, doc_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages (doc_id);
CREATE TABLE IF NOT EXISTS entities (
    id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, name TEXT NOT NULL, vector BLOB
);
CREATE TABLE IF NOT EXISTS mentions (
    passage INTEGER NOT NULL, entity INTEGER NOT NULL, is_title INTEGER NOT NULL,
    PRIMARY KEY (passage, entity)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_entity ON mentions (entity);
CREATE TABLE IF NOT EXISTS synonyms (
    a INTEGER NOT NULL, b INTEGER NOT NULL, similarity REAL NOT NULL, PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS synonyms_b ON synonyms (b);
CREATE TABLE IF NOT EXISTS leads (
    passage INTEGER PRIMARY KEY, title TEXT NOT NULL, sentence TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS relations (
    passage INTEGER NOT NULL, subject INTEGER NOT NULL, object INTEGER NOT NULL, relation TEXT NOT NULL,
    PRIMARY KEY (passage, subject, object, relation)
) WITHOUT ROWID;
"""

Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class GraphStats:
    """How big a collection's graph is."""

    passages: int
    entities: int
    mentions: int
    synonyms: int
    relations: int = 0  # triples from the LLM (graph.llm_triples)


class EntityGraph:
    """Passages, entities and their edges for one collection, kept in one SQLite file."""

    def __init__(self, path: Path, settings: GraphSettings) -> None:
        self.path = path
        self.settings = settings

    @classmethod
    def for_collection(cls, settings: Settings, collection: str) -> EntityGraph:
        """The graph of ``collection`` under the settings' data dir (the file is made on first write)."""
        OriginalsStore.for_collection(settings, collection)  # the same check that the name can name a file
        return cls(settings.data_dir / "graph" / f"{collection}.sqlite", settings.graph)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """One transaction on the graph file; a malformed file is CollectionDamagedError, a full disk
        NoSpaceError (:mod:`~deepcite.retrieval.integrity`)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.path, timeout=30.0)) as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
                with db:  # one transaction: committed on success, rolled back on error
                    yield db
        except sqlite3.Error as exc:
            raise sqlite_failure(exc, self.path.stem, "entity graph", self.path.parent) or exc from None
        except OSError as exc:
            raise os_failure(exc, self.path.parent) or exc from None

    def problems(self) -> list[str]:
        """SQLite's own verification of the graph file (``PRAGMA quick_check``): what ``collections check``
        reports; none when the file is sound or was never written."""
        return quick_check(self.path, "entity graph")

    def exists(self) -> bool:
        """Whether the graph was ever written (a collection ingested before graphs existed has none)."""
        return self.path.is_file()

    def _meta(self, key: str) -> int | None:
        """A ``meta`` value of the graph; None when the graph or the key is missing."""
        if not self.exists():
            return None
        with self._db() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else None

    def version(self) -> int:
        """A counter bumped by every write: a walk matrix built at another version is stale."""
        return self._meta("version") or 0

    def current(self) -> bool:
        """Whether the graph was built by today's reading rules (:data:`FORMAT`); True when there is none yet."""
        return not self.exists() or self._meta("format") == FORMAT

    @staticmethod
    def _bump(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO meta VALUES ('version', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1")

    # -- writes --------------------------------------------------------------------------------------
    def add(
        self,
        chunks: Sequence[Chunk],
        embed: Embed | None = None,
        facts: Mapping[str, PassageFacts] | None = None,
        *,
        replace: bool = True,
    ) -> None:
        """Add (or replace) these passages and the entities they mention, in one transaction.

        ``replace`` (a new version of a document) first deletes every passage of the chunks' documents, so a
        document is replaced whole; :meth:`rebuild` adds to a cleared graph without it, since one document's
        chunks may come in two batches. With ``embed`` (names → unit vectors) and ``synonyms`` on, each new entity name is embedded once
        and joined to existing names at least ``synonym_threshold`` similar. ``facts`` (chunk id → what an
        LLM read in it) adds the facts' entities to a passage's mentions and its triples as relations.
        """
        cfg = self.settings
        found: list[tuple[Chunk, list[Mention]]] = [
            (
                c,
                passage_mentions(
                    c,
                    max_entities=cfg.max_entities_per_passage,
                    keyphrase_words=cfg.keyphrase_max_words,
                    keyphrase_min_count=cfg.keyphrase_min_count,
                ),
            )
            for c in chunks
        ]
        if cfg.aliases:  # names to pages: the page's aliases are title mentions of it
            for chunk, mentions in found:
                # only a document's first passage opens with its lead sentence
                lead = chunk.text if chunk.position == 0 else ""
                aliases = page_aliases(
                    chunk.title, lead, max_words=cfg.alias_max_words, lead_chars=cfg.alias_lead_chars
                )
                at = {m.key: i for i, m in enumerate(mentions)}
                for key, name in aliases.items():
                    if key not in at:
                        mentions.append(Mention(name, key, is_title=True))
                    elif not mentions[at[key]].is_title:  # a name of its text that is one of its names
                        mentions[at[key]] = Mention(mentions[at[key]].name, key, is_title=True)
        facts = facts or {}
        for chunk, mentions in found:
            held = {m.key for m in mentions}
            for name in facts[chunk.chunk_id].names() if chunk.chunk_id in facts else []:
                key = entity_key(name)
                if key and key not in held:
                    held.add(key)
                    mentions.append(Mention(name, key))
        with self._db() as db:
            if db.execute("SELECT 1 FROM passages LIMIT 1").fetchone() is None:  # a new graph: today's rules
                db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (FORMAT,))
            if replace:
                self._delete_docs(db, list({c.doc_id for c in chunks}))
            names: dict[str, str] = {}
            for _, mentions in found:
                for m in mentions:
                    # a document's own title is the best display name of its entity
                    if m.is_title or m.key not in names:
                        names[m.key] = m.name
            keys = list(names)
            known = self._entity_ids(db, keys)
            new_keys = [k for k in keys if k not in known]
            db.executemany(
                "INSERT INTO entities (key, name) VALUES (?, ?)", [(k, names[k]) for k in new_keys]
            )
            db.executemany(
                "UPDATE entities SET name = ? WHERE key = ?",
                [(m.name, m.key) for _, ms in found for m in ms if m.is_title and m.key in known],
            )
            ids = self._entity_ids(db, keys)
            db.executemany(
                "INSERT OR IGNORE INTO passages (chunk_id, doc_id) VALUES (?, ?)",
                [(c.chunk_id, c.doc_id) for c, _ in found],
            )
            rows = self._passage_ids(db, [c.chunk_id for c, _ in found])
            db.executemany(
                "INSERT OR REPLACE INTO mentions VALUES (?, ?, ?)",
                [(rows[c.chunk_id], ids[m.key], int(m.is_title)) for c, ms in found for m in ms],
            )
            db.executemany(
                "INSERT OR IGNORE INTO relations VALUES (?, ?, ?, ?)",
                [
                    (rows[cid], ids[entity_key(t.subject)], ids[entity_key(t.object)], t.relation)
                    for cid, found_facts in facts.items()
                    if cid in rows
                    for t in found_facts.triples
                ],
            )
            if cfg.leads:  # what each page says its subject is: its first passage's first sentence
                db.executemany(
                    "INSERT OR REPLACE INTO leads VALUES (?, ?, ?)",
                    [
                        (rows[c.chunk_id], c.title.strip(), first_sentence(c.text, cfg.lead_chars))
                        for c, _ in found
                        if c.position == 0 and c.title.strip()
                    ],
                )
            if embed is not None and cfg.synonyms and new_keys:
                self._join_synonyms(db, [(ids[k], names[k]) for k in new_keys], embed)
            self._bump(db)

    def rebuild(
        self,
        chunks: Iterable[Chunk],
        *,
        batch: int,
        embed: Embed | None = None,
        facts: Callable[[Sequence[Chunk]], Mapping[str, PassageFacts] | None] | None = None,
    ) -> GraphStats:
        """Build the graph again from ``chunks`` (every stored chunk of the collection, in the store's order: a
        document's chunks need not be together), ``batch`` passages per transaction; ``facts`` gives each
        batch's LLM facts (``graph.llm_triples``) when on."""
        self.clear()
        pending: list[Chunk] = []
        for chunk in chunks:
            pending.append(chunk)
            if len(pending) >= batch:
                self.add(pending, embed=embed, facts=facts(pending) if facts else None, replace=False)
                pending = []
        # makes the file
        self.add(pending, embed=embed, facts=facts(pending) if facts and pending else None, replace=False)
        return self.stats()

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        """Remove the passages of these documents, and entities no passage mentions any more."""
        if not doc_ids or not self.exists():
            return
        with self._db() as db:
            self._delete_docs(db, doc_ids)
            self._bump(db)

    def clear(self) -> None:
        """Delete the graph's file (the collection was dropped)."""
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    @staticmethod
    def _delete_docs(db: sqlite3.Connection, doc_ids: Sequence[str]) -> None:
        """Delete these documents' passages and mentions, then the entities left without a mention."""
        db.execute("CREATE TEMP TABLE IF NOT EXISTS gone (id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM gone")
        for start in range(0, len(doc_ids), 500):
            part = list(doc_ids[start : start + 500])
            marks = ",".join("?" * len(part))
            db.execute(f"INSERT INTO gone SELECT id FROM passages WHERE doc_id IN ({marks})", part)
        if db.execute("SELECT COUNT(*) FROM gone").fetchone()[0] == 0:
            return
        orphans_before = "SELECT DISTINCT entity FROM mentions WHERE passage IN (SELECT id FROM gone)"
        touched = [r[0] for r in db.execute(orphans_before)]
        db.execute("DELETE FROM mentions WHERE passage IN (SELECT id FROM gone)")
        db.execute("DELETE FROM relations WHERE passage IN (SELECT id FROM gone)")
        db.execute("DELETE FROM leads WHERE passage IN (SELECT id FROM gone)")
        db.execute("DELETE FROM passages WHERE id IN (SELECT id FROM gone)")
        db.execute("DELETE FROM gone")
        db.executemany("INSERT OR IGNORE INTO gone VALUES (?)", [(e,) for e in touched])
        db.execute(
            "DELETE FROM gone WHERE id IN (SELECT entity FROM mentions WHERE entity IN (SELECT id FROM gone))"
        )
        db.execute("DELETE FROM synonyms WHERE a IN (SELECT id FROM gone) OR b IN (SELECT id FROM gone)")
        db.execute("DELETE FROM entities WHERE id IN (SELECT id FROM gone)")

    def _join_synonyms(self, db: sqlite3.Connection, new: list[tuple[int, str]], embed: Embed) -> None:
        """Embed the new names (batched) and record every pair, old or new, at least ``synonym_threshold`` alike."""
        vectors = np.asarray(embed([name for _, name in new]), dtype=np.float32)
        db.executemany(
            "UPDATE entities SET vector = ? WHERE id = ?",
            [(v.astype(np.float16).tobytes(), eid) for (eid, _), v in zip(new, vectors, strict=True)],
        )
        stored = db.execute("SELECT id, vector FROM entities WHERE vector IS NOT NULL").fetchall()
        all_ids = np.asarray([r[0] for r in stored], dtype=np.int64)
        matrix = np.frombuffer(b"".join(r[1] for r in stored), dtype=np.float16).reshape(len(stored), -1)
        new_ids = np.asarray([eid for eid, _ in new], dtype=np.int64)
        pairs: list[tuple[int, int, float]] = []
        step = 1024
        for start in range(0, len(new_ids), step):
            sims = vectors[start : start + step] @ matrix.astype(np.float32).T
            for i, j in zip(*np.nonzero(sims >= self.settings.synonym_threshold), strict=True):
                a, b = int(new_ids[start + i]), int(all_ids[j])
                if a != b:
                    pairs.append((min(a, b), max(a, b), float(sims[i, j])))
        db.executemany("INSERT OR REPLACE INTO synonyms VALUES (?, ?, ?)", pairs)

    @staticmethod
    def _entity_ids(db: sqlite3.Connection, keys: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            out.update(db.execute(f"SELECT key, id FROM entities WHERE key IN ({marks})", part).fetchall())
        return out

    @staticmethod
    def _passage_ids(db: sqlite3.Connection, chunk_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for start in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[start : start + 500])
            marks = ",".join("?" * len(part))
            out.update(
                db.execute(f"SELECT chunk_id, id FROM passages WHERE chunk_id IN ({marks})", part).fetchall()
            )
        return out

    # -- reads ---------------------------------------------------------------------------------------
    def stats(self) -> GraphStats:
        """Counts of passages, entities, mention edges and synonym pairs."""
        if not self.exists():
            return GraphStats(0, 0, 0, 0, 0)
        with self._db() as db:
            counts = [
                db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("passages", "entities", "mentions", "synonyms", "relations")
            ]
        return GraphStats(*counts)

    def leads(self) -> dict[str, tuple[str, str]]:
        """Chunk id → (title, lead sentence) of every titled document's first passage (``graph.leads``; empty for
        a graph built before leads were kept, until the next ingest rebuilds it: :meth:`current`)."""
        if not self.exists():
            return {}
        with self._db() as db:
            rows = db.execute(
                "SELECT p.chunk_id, l.title, l.sentence FROM leads l JOIN passages p ON p.id = l.passage"
            ).fetchall()
        return {chunk_id: (title, sentence) for chunk_id, title, sentence in rows}

    def rows(self) -> GraphRows:
        """The whole graph as arrays (read in one transaction, so the version matches the rows)."""
        with self._db() as db:
            version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            passages = db.execute("SELECT id, chunk_id, doc_id FROM passages ORDER BY id").fetchall()
            entities = db.execute("SELECT id, key, name FROM entities ORDER BY id").fetchall()
            mentions = np.asarray(
                db.execute("SELECT passage, entity, is_title FROM mentions").fetchall(), dtype=np.int64
            )
            synonyms = db.execute("SELECT a, b, similarity FROM synonyms").fetchall()
            relations = db.execute("SELECT subject, object, relation FROM relations").fetchall()
        mentions = mentions.reshape(-1, 3)
        syn = np.asarray(synonyms, dtype=np.float64).reshape(-1, 3)
        return GraphRows(
            version=int(version[0]) if version else 0,
            passage_ids=np.asarray([p[0] for p in passages], dtype=np.int64),
            chunk_ids=[p[1] for p in passages],
            doc_ids=[p[2] for p in passages],
            entity_ids=np.asarray([e[0] for e in entities], dtype=np.int64),
            entity_keys=[e[1] for e in entities],
            entity_names=[e[2] for e in entities],
            mention_passage=mentions[:, 0],
            mention_entity=mentions[:, 1],
            mention_is_title=mentions[:, 2].astype(bool),
            synonym_a=syn[:, 0].astype(np.int64),
            synonym_b=syn[:, 1].astype(np.int64),
            synonym_similarity=syn[:, 2],
            relation_subject=np.asarray([r[0] for r in relations], dtype=np.int64),
            relation_object=np.asarray([r[1] for r in relations], dtype=np.int64),
            relation_text=[r[2] for r in relations],
        )
