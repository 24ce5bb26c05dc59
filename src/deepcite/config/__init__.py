"""All of deepcite's settings in one place: thresholds, budgets and weights live here, never in node code.

One ``Settings`` model (:mod:`.settings`) with a section per layer, read through pydantic-settings' own
sources: arguments, then the environment (``DEEPCITE_DATA_DIR``, ``DEEPCITE_SEARCH_RRF_K=60``:
``DEEPCITE_<SECTION>_<KEY>``), then an optional TOML file (``Settings.load(path)`` or ``DEEPCITE_CONFIG``;
sections as tables: ``[search]``, ``[research]`` …), then the defaults. An unknown key in the file is an
error (:mod:`.sources`). The sections live by layer: :mod:`.retrieval`, :mod:`.ingest`, :mod:`.research`,
:mod:`.answer`, :mod:`.practitioners`, :mod:`.services`. Named here: ``Settings`` and the sections other
modules import.
"""

from deepcite.config.answer import AnswerBudgetSettings, AnswerSettings, CitationSettings
from deepcite.config.ingest import ChunkerSettings, IngestSettings, RaySettings
from deepcite.config.practitioners import PractitionerAnalysisSettings, PractitionerSettings
from deepcite.config.research import (
    ChainSettings,
    EvidenceRankingSettings,
    FollowupSettings,
    NextHopSettings,
    ResearchSettings,
    StoppingSettings,
)
from deepcite.config.retrieval import EmbedderSettings, GraphSettings, SearchSettings, StoreSettings
from deepcite.config.services import (
    LLMSettings,
    LLMSpeedSettings,
    LLMStageSettings,
    SavedAnswerSettings,
    ServerSettings,
    WebSearchSettings,
)
from deepcite.config.settings import Settings

__all__ = [
    "AnswerBudgetSettings",
    "AnswerSettings",
    "ChainSettings",
    "ChunkerSettings",
    "CitationSettings",
    "EmbedderSettings",
    "EvidenceRankingSettings",
    "FollowupSettings",
    "GraphSettings",
    "IngestSettings",
    "LLMSettings",
    "LLMSpeedSettings",
    "LLMStageSettings",
    "NextHopSettings",
    "PractitionerAnalysisSettings",
    "PractitionerSettings",
    "RaySettings",
    "ResearchSettings",
    "SavedAnswerSettings",
    "SearchSettings",
    "ServerSettings",
    "Settings",
    "StoppingSettings",
    "StoreSettings",
    "WebSearchSettings",
]
