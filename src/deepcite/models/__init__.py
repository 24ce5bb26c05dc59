"""Typed records shared by every layer: one type per concept, defined once.

By concept: :mod:`.choices` (search modes, fusion methods), :mod:`.documents` (documents and chunks),
:mod:`.search` (filters and hits), :mod:`.coverage` (aspects and their coverage), :mod:`.evidence`
(candidates, round reports, the evidence pack), :mod:`.collections` (a collection's listing and statistics).
Named here: the records other modules import.
"""

from deepcite.models.choices import FusionMethod, SearchMode, _ChoiceEnum
from deepcite.models.collections import (
    CollectionInfo,
    CollectionStats,
    EmbedderPrecision,
    TripleCounts,
    VectorSource,
)
from deepcite.models.coverage import (
    AspectCoverage,
    AspectType,
    CoverageReport,
    QueryAspect,
    coverage_percent,
    question_parts,
)
from deepcite.models.documents import ANSWER_KINDS, Chunk, Document, SourceFields, TextKind
from deepcite.models.evidence import (
    BridgeCandidate,
    Candidate,
    ChainStep,
    EvidenceLink,
    EvidencePack,
    Provenance,
    QueryKind,
    RankedList,
    RoundReport,
    SelectedPassage,
    Selection,
    SkippedQuery,
)
from deepcite.models.search import Filters, GraphLink, SearchHit

__all__ = [
    "ANSWER_KINDS",
    "AspectCoverage",
    "AspectType",
    "BridgeCandidate",
    "Candidate",
    "ChainStep",
    "Chunk",
    "CollectionInfo",
    "CollectionStats",
    "CoverageReport",
    "coverage_percent",
    "Document",
    "EmbedderPrecision",
    "EvidenceLink",
    "EvidencePack",
    "Filters",
    "FusionMethod",
    "GraphLink",
    "Provenance",
    "QueryAspect",
    "question_parts",
    "QueryKind",
    "RankedList",
    "RoundReport",
    "SearchHit",
    "SearchMode",
    "SelectedPassage",
    "Selection",
    "SkippedQuery",
    "SourceFields",
    "TextKind",
    "TripleCounts",
    "VectorSource",
    "_ChoiceEnum",
]
