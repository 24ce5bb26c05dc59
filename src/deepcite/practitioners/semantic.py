"""The semantic stage: the patient's words against every directory specialty, with deepcite's own embedder.

Each specialty present in the directory is described by short texts: its names (the CMS name, the NUCC
label and display name), the first ``semantic.definition_sentences`` sentences of its NUCC definitions, and
the cues of the catalogue intents it is the best fit for (their label and trigger phrases). The texts are
embedded once, when the directory changes, and stored in the directory's SQLite file
(``specialty_vectors``, keyed by the embedding model), so a search embeds only the request. A specialty's
similarity is the best cosine similarity of any of its texts to the request or to one of its parts (split at
the catalogue's ``segment_words``: "spinal adjustment | lower back pain"); the text that won is kept for
the explanation.

Usage::

    stage = SemanticStage(directory, taxonomy, catalogue, settings, embedder)
    stage.sync()                                          # at import (embeds only what is new)
    stage.similarities("spinal adjustment for lower back pain")[0].specialty   # 'CHIROPRACTIC'
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from deepcite.config import PractitionerSettings, Settings
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.taxonomy import Taxonomy, normalise_specialty
from deepcite.retrieval.embedders import Embedder
from deepcite.text import split_sentences

# catalogue trigger fields whose phrases describe a specialty well enough to embed ("general" words do not)
_CUE_FIELDS = ("procedures", "diagnoses", "symptoms", "specialty_words", "terms")

# (model, text) -> vector: a text shared by several specialties or directories is embedded once per process
_vectors: dict[tuple[str, str], np.ndarray] = {}
_vectors_lock = threading.Lock()


@dataclass(frozen=True)
class SpecialtyText:
    """One embedded description of a specialty: ``kind`` is name, definition or cue."""

    specialty: str
    kind: str
    text: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.specialty, self.kind, self.text)


@dataclass(frozen=True)
class SpecialtySimilarity:
    """A specialty's best cosine similarity to the request, and the text that reached it."""

    specialty: str
    similarity: float
    matched: SpecialtyText


def _readable(name: str) -> str:
    return " ".join(name.replace("/", " / ").split()).lower()


def specialty_texts(
    specialties: Iterable[str], taxonomy: Taxonomy, catalogue: Catalogue, definition_sentences: int
) -> list[SpecialtyText]:
    """The texts each specialty is embedded by (names, NUCC definition sentences, catalogue cues)."""
    cues: dict[str, list[str]] = {}
    for intent in catalogue.intents:
        phrases = [intent.label, *(p for f in _CUE_FIELDS for p in getattr(intent, f))]
        for specialty in intent.specialties:
            cues.setdefault(normalise_specialty(specialty), []).extend(phrases)
    out: list[SpecialtyText] = []
    for specialty in sorted({normalise_specialty(s) for s in specialties}):
        entries = taxonomy.entries_for(specialty)
        names = [
            _readable(specialty),
            *(_readable(n) for e in entries for n in (e.label, e.display_name) if n),
        ]
        definitions = [
            s for e in entries if e.definition for s in split_sentences(e.definition)[:definition_sentences]
        ]
        for kind, texts in (("name", names), ("definition", definitions), ("cue", cues.get(specialty, []))):
            for text in dict.fromkeys(t.strip() for t in texts if t.strip()):
                out.append(SpecialtyText(specialty, kind, text))
    return out


class SemanticStage:
    """Specialty similarities for a request, over the specialties the directory holds."""

    def __init__(
        self,
        directory: Directory,
        taxonomy: Taxonomy,
        catalogue: Catalogue,
        settings: Settings,
        embedder: Embedder,
    ) -> None:
        self.directory = directory
        self.taxonomy = taxonomy
        self.catalogue = catalogue
        self.settings = settings
        self.embedder = embedder
        self._lock = threading.Lock()
        self._cached_for: frozenset[str] | None = None
        self._texts: list[SpecialtyText] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    @property
    def model(self) -> str:
        """The key vectors are stored under: the embedder kind and model name."""
        e = self.settings.embedder
        return f"{e.kind}:{e.model}"

    def _wanted(self, specialties: Iterable[str]) -> list[SpecialtyText]:
        s = self.settings.practitioners
        return specialty_texts(specialties, self.taxonomy, self.catalogue, s.semantic.definition_sentences)

    def sync(self, specialties: Iterable[str] | None = None) -> int:
        """Embed the texts of the directory's specialties that are not stored yet and drop the stale ones;
        returns how many texts were embedded (0 when the stored vectors are current)."""
        names = list(self.directory.primary_specialties()) if specialties is None else list(specialties)
        wanted = self._wanted(names)
        stored = {(sp, kind, text) for sp, kind, text, _ in self.directory.specialty_vectors(self.model)}
        missing = [t for t in wanted if t.key not in stored]
        stale = stored - {t.key for t in wanted}
        if missing or stale:
            vectors = self._encode([t.text for t in missing])
            rows = [(t.specialty, t.kind, t.text, vectors[t.text].tobytes()) for t in missing]
            self.directory.write_specialty_vectors(self.model, rows, stale)
        with self._lock:
            self._cached_for = None
        return len(missing)

    def _encode(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Vectors of distinct texts, from the process cache or the embedder."""
        with _vectors_lock:
            known = {t: _vectors[(self.model, t)] for t in texts if (self.model, t) in _vectors}
        new = [t for t in dict.fromkeys(texts) if t not in known]
        if new:
            encoded = self.embedder.encode(new, kind="passage")
            with _vectors_lock:
                for text, vector in zip(new, encoded, strict=True):
                    known[text] = _vectors[(self.model, text)] = np.asarray(vector, dtype=np.float32)
        return known

    def _load(self, specialties: Sequence[str]) -> tuple[list[SpecialtyText], np.ndarray]:
        key = frozenset(normalise_specialty(s) for s in specialties)
        with self._lock:
            if self._cached_for == key:
                return self._texts, self._matrix
        self.sync(specialties)
        rows = self.directory.specialty_vectors(self.model)
        texts = [SpecialtyText(sp, kind, text) for sp, kind, text, _ in rows]
        matrix = (
            np.vstack([np.frombuffer(blob, dtype=np.float32) for *_, blob in rows])
            if rows
            else np.zeros((0, 0), dtype=np.float32)
        )
        with self._lock:
            self._cached_for, self._texts, self._matrix = key, texts, matrix
        return texts, matrix

    def similarities(self, text: str, specialties: Sequence[str] | None = None) -> list[SpecialtySimilarity]:
        """Every directory specialty with its best similarity to ``text``, best first."""
        names = list(self.directory.primary_specialties()) if specialties is None else list(specialties)
        texts, matrix = self._load(names)
        if not texts or not text.strip():
            return []
        parts = list(dict.fromkeys([text, *self.catalogue.segments(text)]))
        queries = self.embedder.encode(parts, kind="query")
        scores = (matrix @ np.asarray(queries, dtype=np.float32).T).max(axis=1)  # best part per text
        best: dict[str, tuple[float, SpecialtyText]] = {}
        for score, item in zip(scores.tolist(), texts, strict=True):
            if item.specialty not in best or score > best[item.specialty][0]:
                best[item.specialty] = (score, item)
        ranked = [SpecialtySimilarity(sp, round(score, 4), item) for sp, (score, item) in best.items()]
        return sorted(ranked, key=lambda r: (-r.similarity, r.specialty))

    def propose(self, text: str, specialties: Sequence[str] | None = None) -> list[SpecialtySimilarity]:
        """The specialties the request is about: at least ``semantic.min_similarity``, within
        ``semantic.margin`` of the best, at most ``semantic.max_specialties``."""
        return select_proposals(self.similarities(text, specialties), self.settings.practitioners)


def select_proposals(
    ranked: list[SpecialtySimilarity], settings: PractitionerSettings
) -> list[SpecialtySimilarity]:
    """The proposed specialties among ``ranked`` (best first)."""
    if not ranked or ranked[0].similarity < settings.semantic.min_similarity:
        return []
    line = max(settings.semantic.min_similarity, ranked[0].similarity - settings.semantic.margin)
    return [r for r in ranked if r.similarity >= line][: settings.semantic.max_specialties]
