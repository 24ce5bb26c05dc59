"""The settings loader: sources in order (init > environment > TOML file > defaults) and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import ResearchSettings, Settings
from deepcite.errors import ConfigError


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPCITE_CONFIG", raising=False)


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "deepcite.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_init_over_env_over_file_over_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = _toml(
        tmp_path,
        'data_dir = "/from/file"\n[research.stopping]\nmin_hops = 2\nmax_hops = 7\n[research.retrieval]\nk_per_query = 11\n'
        "[search]\nrrf_k = 33\n",
    )
    monkeypatch.setenv("DEEPCITE_RESEARCH_STOPPING_MAX_HOPS", "5")
    monkeypatch.setenv("DEEPCITE_RESEARCH_RETRIEVAL_K_PER_QUERY", "12")
    monkeypatch.setenv("DEEPCITE_DATA_DIR", "/from/env")

    settings = Settings.load(file, research={"retrieval": {"k_per_query": 13}})

    assert settings.research.retrieval.k_per_query == 13  # init beats environment and file
    assert settings.research.stopping.max_hops == 5  # environment beats file
    assert settings.data_dir == Path("/from/env")
    assert settings.research.stopping.min_hops == 2  # file beats defaults
    assert settings.search.rrf_k == 33
    assert settings.search.bm25_k1 == 1.2  # defaults fill the rest
    assert settings.research.selection.mmr_lambda == ResearchSettings().selection.mmr_lambda


def test_config_file_from_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "DEEPCITE_CONFIG", str(_toml(tmp_path, "[llm]\nmodel = 'm'\nbase_url = 'http://h/v1'\n"))
    )
    settings = Settings.load()
    assert settings.llm.configured and settings.llm.model == "m"
    assert Settings().llm.model is None  # the file is read by load() only


def test_environment_parses_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCITE_RESEARCH_RETRIEVAL_MODES", '["bm25", "dense"]')
    monkeypatch.setenv("DEEPCITE_MCP_GROUPS", '["cardiology"]')
    settings = Settings.load()
    assert settings.research.retrieval.modes == ["bm25", "dense"]
    assert settings.mcp.groups == ["cardiology"]


def test_unknown_key_in_file_names_it_the_nearest_key_and_the_file(tmp_path: Path) -> None:
    file = _toml(tmp_path, "[research.stopping]\nmin_hop = 1\n")
    with pytest.raises(ConfigError) as err:
        Settings.load(file)
    message = str(err.value)
    assert "'research.stopping.min_hop'" in message and "'research.stopping.min_hops'" in message
    assert str(file) in message


def test_unknown_section_in_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown setting 'reserch'.*did you mean 'research'"):
        Settings.load(_toml(tmp_path, "[reserch]\nmin_hops = 1\n"))


def test_unknown_key_in_environment_names_the_nearest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCITE_SEARCH_RRFK", "3")
    with pytest.raises(ConfigError, match=r"unknown setting 'search.rrfk'; did you mean 'search.rrf_k'"):
        Settings.load()


@pytest.mark.parametrize(
    ("toml", "unknown", "nearest"),
    [
        ("[answer]\ncitation_judge = 'llm'\n", "answer.citation_judge", "answer.citations.judge"),
        ("[practitioners]\nfloor_ratio = 0.5\n", "practitioners.floor_ratio", "practitioners.floor.ratio"),
        ("[research.stopping]\nmax_hop = 3\n", "research.stopping.max_hop", "research.stopping.max_hops"),
    ],
)
def test_an_unknown_key_in_a_file_is_refused_with_the_nearest_known_one(
    tmp_path: Path, toml: str, unknown: str, nearest: str
) -> None:
    file = _toml(tmp_path, toml)
    with pytest.raises(ConfigError, match=rf"unknown setting {unknown!r}") as err:
        Settings.load(file)
    assert f"did you mean {nearest!r}" in str(err.value) and str(file) in str(err.value)


def test_sub_sections_of_every_section_are_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCITE_ANSWER_CITATIONS_JUDGE", "llm")
    monkeypatch.setenv("DEEPCITE_ANSWER_EMBEDDING_CACHE_SIZE", "7")  # a flat key beside the sub-sections
    monkeypatch.setenv("DEEPCITE_PRACTITIONERS_SEMANTIC_ENABLED", "false")
    monkeypatch.setenv("DEEPCITE_PRACTITIONERS_RESULT_LIMIT", "4")
    settings = Settings.load()
    assert settings.answer.citations.judge == "llm" and settings.answer.embedding_cache_size == 7
    assert not settings.practitioners.semantic.enabled and settings.practitioners.result_limit == 4
    monkeypatch.setenv("DEEPCITE_ANSWER_CITATION_JUDGE", "llm")  # the flat name of before
    with pytest.raises(
        ConfigError, match=r"unknown setting 'answer.citation_judge'.*'answer.citations.judge'"
    ):
        Settings.load()


def test_wrong_type_and_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"research.stopping.max_hops: Input should be a valid integer"):
        Settings.load(_toml(tmp_path, '[research.stopping]\nmax_hops = "many"\n'))
    with pytest.raises(ConfigError, match="does not exist"):
        Settings.load(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="cannot read settings file"):
        Settings.load(_toml(tmp_path, "[research\n"))


def test_overlapping_keys_are_gone(tmp_path: Path) -> None:
    """One setting per idea: the research graph section, the chain's own hop cap and the research RRF
    constant were merged into research.retrieval/planning, research.stopping.max_hops and search.rrf_k."""
    for toml, unknown in [
        ("[research.graph]\nenabled = true\n", "research.graph"),
        ("[research.retrieval]\nmerge_rrf_k = 3\n", "research.retrieval.merge_rrf_k"),
        ("[research.chain]\nmax_hops = 3\n", "research.chain.max_hops"),
        ("[server]\nmax_query_chars = 10\n", "server.max_query_chars"),
        ("[answer]\nembedding_weight = 0.5\n", "answer.embedding_weight"),
    ]:
        with pytest.raises(ConfigError, match=rf"unknown setting {unknown!r}"):
            Settings.load(_toml(tmp_path, toml))
