"""Fixtures for the practitioner finder: real CMS rows, a real SQLite directory and a real Edge store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from deepcite.config import PractitionerSettings, Settings
from deepcite.practitioners.finder import PractitionerFinder
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.store import open_store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "practitioners"
MAINE = FIXTURES / "cms_maine_excerpt.csv"
NATIONAL = FIXTURES / "cms_national_excerpt.csv"
SPECIALTIES = FIXTURES / "cms_specialties.txt"
NUCC = FIXTURES / "nucc_excerpt.csv"


def make_settings(tmp_path: Path, **practitioners: Any) -> Settings:
    """Settings with every file under ``tmp_path`` and the LLM unset."""
    return Settings(data_dir=tmp_path, practitioners=PractitionerSettings(**practitioners))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


def open_finder(settings: Settings, embedder: Embedder, llm: Any = None) -> PractitionerFinder:
    """A finder with a store of its own (closed with it) and the shared MiniLM."""
    return PractitionerFinder.open(settings, store=open_store(settings), embedder=embedder, llm=llm)


def _imported(settings: Settings, embedder: Embedder) -> PractitionerFinder:
    finder = open_finder(settings, embedder)
    finder.import_file(MAINE, "cms-reduced")
    finder.import_file(NATIONAL, "cms-national")
    return finder


@pytest.fixture
def finder(settings: Settings, minilm: Embedder) -> Iterator[PractitionerFinder]:
    """A finder over the Maine and national excerpts, for tests that change the directory or index."""
    finder = _imported(settings, minilm)
    yield finder
    finder.close()


@pytest.fixture(scope="module")
def shared_finder(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[PractitionerFinder]:
    """The same finder, built once per module, for tests that only search."""
    finder = _imported(make_settings(tmp_path_factory.mktemp("practitioners")), minilm)
    yield finder
    finder.close()


class RemoteLLMStandIn:
    """Stands in for a remote OpenAI-compatible LLM (none can run here): returns canned replies per
    analysis, recognised by the JSON schema it is asked for, or waits forever / fails on request."""

    model = "stand-in-for-a-remote-llm"

    def __init__(
        self, replies: dict[str, str] | None = None, *, hang: bool = False, fail: bool = False
    ) -> None:
        self.replies = replies or {}
        self.hang = hang
        self.fail = fail
        self.calls: list[str] = []

    @staticmethod
    def _kind(schema: dict[str, Any] | None) -> str:
        keys = set((schema or {}).get("properties", {}))
        if "urgency" in keys:
            return "insights"
        if "specificity" in keys:
            return "general"
        return "clinical"

    def chat(self, messages: Sequence[dict[str, str]], *, schema=None, max_tokens=None) -> str:  # noqa: ANN001
        raise NotImplementedError("the finder uses achat")

    async def achat(self, messages: Sequence[dict[str, str]], *, schema=None, max_tokens=None) -> str:  # noqa: ANN001
        kind = self._kind(schema)
        self.calls.append(kind)
        if self.hang:
            await asyncio.Event().wait()
        if self.fail:
            from deepcite.errors import LLMError

            raise LLMError("HTTP 503 from the stand-in endpoint")
        return self.replies.get(kind, "sorry, I cannot help with that")
