"""LLM triple extraction at ingest (``graph.llm_triples``): each passage's named entities and its facts as
(subject, relation, object) triples, asked for once and cached.

The approach is HippoRAG's OpenIE step (Gutiérrez et al., "HippoRAG", NeurIPS 2024; "From RAG to Memory",
2025): the LLM names a passage's entities, then states what the passage says about them as triples, as
JSON. Here one call does both for a batch of passages (``graph.llm_triples_batch``), the reply is checked
against :data:`TRIPLES_SCHEMA`, and :class:`deepcite.retrieval.graph.store.EntityGraph` turns a triple into
two entities the passage mentions and a relation edge between them. What is deepcite's own: the cache
(:class:`TripleCache`, keyed by the passage text's hash, the model and the prompt version) is written as
each reply arrives, so an ingest that was killed asks, when run again, only for the passages not yet done;
and a passage whose reply failed keeps its offline entities, the reason counted, so no LLM trouble stops
an ingest.

Usage::

    extractor = TripleExtractor(llm, TripleCache(path), settings.graph)
    found = extractor.extract(chunks)
    found.facts["c-12"].triples   # (Triple(subject='Green', relation='performed by', object='Marla Quint'),)
    found.counts                  # TripleCounts(cached=0, asked=2, requests=1, extracted=2, triples=5, failed={})
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepcite.config import GraphSettings
from deepcite.llm.client import LLMClient, Message
from deepcite.llm.deadline import failure_reason
from deepcite.llm.json import chat_json
from deepcite.models import Chunk, TripleCounts
from deepcite.retrieval.graph.extract import entity_key

SYSTEM_PROMPT = (
    "You build a knowledge graph from passages. For each passage: first list its named entities (people, "
    "places, organisations, works, events, dates, other proper names); then list the facts it states as "
    "triples [subject, relation, object], where subject and object are entities (preferably named ones from "
    "your list) and relation is a short verb phrase. Resolve pronouns to the names they stand for. Use only "
    "what the passage says. Reply with JSON only: one item per passage, with its number."
)
TRIPLES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "passages": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "passage": {"type": "integer", "minimum": 1},
                    "entities": {"type": "array", "items": {"type": "string"}},
                    "triples": {
                        "type": "array",
                        "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
                    },
                },
                "required": ["passage", "entities", "triples"],
            },
        }
    },
    "required": ["passages"],
}
MISSING = "passage missing from the reply"


@dataclass(frozen=True)
class Triple:
    """One fact of a passage: ``subject`` —``relation``→ ``object``."""

    subject: str
    relation: str
    object: str


@dataclass(frozen=True)
class PassageFacts:
    """What the LLM found in one passage: its named entities and its triples."""

    entities: tuple[str, ...] = ()
    triples: tuple[Triple, ...] = ()

    def names(self) -> list[str]:
        """Every entity name the facts use: the named entities, then the triples' subjects and objects."""
        return [*self.entities, *(n for t in self.triples for n in (t.subject, t.object))]

    def to_json(self) -> str:
        return json.dumps(
            {"entities": self.entities, "triples": [[t.subject, t.relation, t.object] for t in self.triples]}
        )

    @classmethod
    def from_json(cls, text: str) -> PassageFacts:
        data = json.loads(text)
        return cls(tuple(data["entities"]), tuple(Triple(*t) for t in data["triples"]))


@dataclass
class Extraction:
    """One extraction's result: facts by chunk id (passages whose reply failed have none) and its counts."""

    facts: dict[str, PassageFacts] = field(default_factory=dict)
    counts: TripleCounts = field(default_factory=TripleCounts)


def text_hash(text: str) -> str:
    """The cache key of a passage text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def passage_prompt_text(chunk: Chunk) -> str:
    """What the LLM reads of a passage: its title, then its text."""
    return f"{chunk.title}. {chunk.text}" if chunk.title else chunk.text


class TripleCache:
    """LLM replies by (passage text hash, model, prompt version), in a SQLite file of their own beside the
    graph: rebuilding the graph keeps them; dropping the collection deletes them (:meth:`clear`)."""

    _SCHEMA = """
    CREATE TABLE IF NOT EXISTS facts (
        text_hash TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL, facts TEXT NOT NULL,
        PRIMARY KEY (text_hash, model, prompt_version)
    ) WITHOUT ROWID;
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        # the extractor's threads write replies at once: two connections switching a new file to WAL together
        # made one fail at once with "database is locked" (the switch waits for no busy timeout), so one
        # connection at a time sets the file up
        self._setup = threading.Lock()

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30.0)) as db:
            with self._setup:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(self._SCHEMA)
            with db:
                yield db

    def get(self, hashes: Sequence[str], model: str, version: str) -> dict[str, PassageFacts]:
        """The cached facts of these text hashes for ``model`` and prompt ``version``."""
        if not hashes or not self.path.is_file():
            return {}
        out: dict[str, PassageFacts] = {}
        with self._db() as db:
            for start in range(0, len(hashes), 500):
                part = list(hashes[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"SELECT text_hash, facts FROM facts WHERE model = ? AND prompt_version = ? "
                    f"AND text_hash IN ({marks})",
                    [model, version, *part],
                )
                out.update((h, PassageFacts.from_json(f)) for h, f in rows)
        return out

    def put(self, facts: dict[str, PassageFacts], model: str, version: str) -> None:
        """Store facts by text hash (one transaction)."""
        with self._db() as db:
            db.executemany(
                "INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?)",
                [(h, model, version, f.to_json()) for h, f in facts.items()],
            )

    def count(self) -> int:
        """How many replies are cached (any model or prompt version)."""
        if not self.path.is_file():
            return 0
        with self._db() as db:
            return int(db.execute("SELECT COUNT(*) FROM facts").fetchone()[0])

    def clear(self) -> None:
        """Delete the cache's file."""
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


def _clean(item: dict[str, Any], cfg: GraphSettings) -> PassageFacts:
    """A passage's reply item as facts: names with a key, triples whose ends have distinct keys, capped."""
    entities = [e.strip() for e in item["entities"] if e.strip() and entity_key(e.strip())]
    triples: list[Triple] = []
    for subject, relation, obj in (tuple(s.strip() for s in t) for t in item["triples"]):
        a, b = entity_key(subject), entity_key(obj)
        if a and b and a != b and relation:
            triples.append(Triple(subject, relation, obj))
        if len(triples) >= cfg.llm_triples_max_per_passage:
            break
    return PassageFacts(tuple(dict.fromkeys(entities))[: cfg.max_entities_per_passage], tuple(triples))


@dataclass
class _Batch:
    """One request's outcome: facts by text hash, and the failure reason of each hash without facts."""

    facts: dict[str, PassageFacts] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


class TripleExtractor:
    """Asks ``llm`` for the facts of passages not in ``cache``, ``graph.llm_triples_batch`` passages a
    request and ``graph.llm_triples_concurrency`` requests at a time (threads; each call under the LLM
    client's deadline), and caches each reply as it arrives."""

    def __init__(self, llm: LLMClient, cache: TripleCache, settings: GraphSettings) -> None:
        self.llm = llm
        self.cache = cache
        self.settings = settings

    def extract(self, chunks: Sequence[Chunk]) -> Extraction:
        """The facts of ``chunks``: cached ones read back, the rest asked for; never raises for the LLM's
        sake (a passage whose reply failed has no facts, its reason counted)."""
        cfg, model = self.settings, self.llm.model
        version = cfg.llm_triples_prompt_version
        texts = {c.chunk_id: passage_prompt_text(c) for c in chunks}
        hashes = {cid: text_hash(t) for cid, t in texts.items()}
        by_hash = dict(zip(hashes.values(), texts.values(), strict=True))  # equal texts are asked once
        known = self.cache.get(list(by_hash), model, version)
        todo = [h for h in by_hash if h not in known]
        out = Extraction()
        out.counts.cached = len(by_hash) - len(todo)
        out.counts.asked = len(todo)
        batches = [todo[i : i + cfg.llm_triples_batch] for i in range(0, len(todo), cfg.llm_triples_batch)]
        out.counts.requests = len(batches)
        found = dict(known)
        failed: dict[str, str] = {}
        if batches:
            pool = ThreadPoolExecutor(max_workers=cfg.llm_triples_concurrency, thread_name_prefix="triples")
            try:
                futures: list[Future[_Batch]] = [
                    pool.submit(self._ask, [(h, by_hash[h]) for h in batch], model, version)
                    for batch in batches
                ]
                for future in as_completed(futures):
                    result = future.result()
                    found.update(result.facts)
                    failed.update(result.failed)
            finally:  # an interrupted ingest: requests not started are dropped; replies in flight still cached
                pool.shutdown(wait=True, cancel_futures=True)
        for reason in failed.values():
            out.counts.failed[reason] = out.counts.failed.get(reason, 0) + 1
        for h in todo:
            if h in found:
                out.counts.extracted += 1
                out.counts.triples += len(found[h].triples)
        out.facts = {cid: found[h] for cid, h in hashes.items() if h in found}
        return out

    def _ask(self, batch: list[tuple[str, str]], model: str, version: str) -> _Batch:
        """One request for a batch of (text hash, text); the reply's facts are cached before returning."""
        listing = "\n\n".join(f"Passage {n}:\n{text}" for n, (_, text) in enumerate(batch, start=1))
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": listing},
        ]
        out = _Batch()
        try:
            reply = chat_json(self.llm, messages, TRIPLES_SCHEMA)
        except Exception as exc:  # noqa: BLE001 - any LLM failure: these passages keep their offline entities
            out.failed = {h: failure_reason(exc) for h, _ in batch}
            return out
        items = {int(item["passage"]): item for item in reply["passages"]}
        for n, (h, _) in enumerate(batch, start=1):
            if n in items:
                out.facts[h] = _clean(items[n], self.settings)
            else:
                out.failed[h] = MISSING
        if out.facts:
            self.cache.put(out.facts, model, version)
        return out
