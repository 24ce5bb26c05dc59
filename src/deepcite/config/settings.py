"""The one ``Settings`` model: the data dir, API keys and one section per layer, read from its sources."""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from deepcite.config.answer import AnswerSettings
from deepcite.config.ingest import ChunkerSettings, IngestSettings, RaySettings
from deepcite.config.practitioners import PractitionerSettings
from deepcite.config.research import ResearchSettings
from deepcite.config.retrieval import EmbedderSettings, GraphSettings, SearchSettings, StoreSettings
from deepcite.config.services import (
    LLMSettings,
    MCPSettings,
    SavedAnswerSettings,
    ServerSettings,
    WebSearchSettings,
)
from deepcite.config.sources import CheckedTomlSource, NestedEnvSource, describe_error
from deepcite.errors import ConfigError

_config_file: ContextVar[Path | None] = ContextVar("deepcite_config_file", default=None)


class Settings(BaseSettings):
    """Top-level settings: the data dir, API keys and one section per layer.

    Sources, the first that sets a value wins: arguments to ``Settings(...)``, the environment
    (``DEEPCITE_<SECTION>_<KEY>``, e.g. ``DEEPCITE_SEARCH_RRF_K=60``), the TOML file named by
    ``Settings.load(path)`` or ``DEEPCITE_CONFIG`` (sections as tables), then the defaults below.
    """

    model_config = SettingsConfigDict(
        env_prefix="DEEPCITE_", extra="ignore", env_nested_delimiter="_", env_nested_max_split=1
    )
    data_dir: Path = Field(default_factory=lambda: Path.home() / ".local" / "share" / "deepcite")
    # bearer tokens: "token" or "token:group1|group2" (the groups become ACL filters), comma-separated
    api_keys: str = ""
    store: StoreSettings = Field(default_factory=StoreSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    chunker: ChunkerSettings = Field(default_factory=ChunkerSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    ray: RaySettings = Field(default_factory=RaySettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    practitioners: PractitionerSettings = Field(default_factory=PractitionerSettings)
    web: WebSearchSettings = Field(default_factory=WebSearchSettings)
    mcp: MCPSettings = Field(default_factory=MCPSettings)
    saved: SavedAnswerSettings = Field(default_factory=SavedAnswerSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Init arguments, then the environment, then the TOML file: the first source to set a value wins."""
        file = _config_file.get()
        env = NestedEnvSource(settings_cls, env_settings)
        if file is None:
            return init_settings, env
        return init_settings, env, CheckedTomlSource(settings_cls, file)

    @classmethod
    def load(cls, path: str | Path | None = None, **values: Any) -> Settings:
        """Settings from ``values``, the environment and a TOML file (``path``, else ``DEEPCITE_CONFIG``).

        Raises ``ConfigError`` naming the file for an unreadable file, an unknown key (with the nearest
        valid one) or a value of the wrong type.
        """
        named = path or os.environ.get("DEEPCITE_CONFIG")
        file = Path(named) if named else None
        if file is not None and not file.is_file():
            raise ConfigError(f"settings file {file} does not exist; fix the path or unset DEEPCITE_CONFIG")
        token = _config_file.set(file)
        try:
            return cls(**values)
        except ValidationError as exc:
            where = f" (arguments, environment or {file})" if file else " (arguments or environment)"
            problems = "; ".join(describe_error(err, cls) for err in exc.errors())
            raise ConfigError(f"invalid settings{where}: {problems}") from exc
        finally:
            _config_file.reset(token)

    @property
    def qdrant_path(self) -> Path:
        return self.store.path or (self.data_dir / "qdrant")

    @property
    def edge_path(self) -> Path:
        return self.data_dir / "edge"

    @property
    def practitioners_db(self) -> Path:
        return self.practitioners.db_path or (self.data_dir / "practitioners.sqlite")

    @property
    def saved_answers_db(self) -> Path:
        return self.saved.path or (self.data_dir / "answers.sqlite")
