"""The public API: ``deepcite`` names every request, response and error a caller meets, lazily, and each
name resolves to the record the Engine's operations take or return."""

from __future__ import annotations

import inspect

import deepcite
from deepcite import errors


def test_every_public_name_resolves() -> None:
    assert set(deepcite.__all__) == {*deepcite._LAZY, "__version__"}  # noqa: SLF001 - the lazy table itself
    missing = [name for name in deepcite.__all__ if not hasattr(deepcite, name)]
    assert not missing


def test_every_error_of_the_hierarchy_is_public() -> None:
    hierarchy = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.DeepciteError)
    }
    assert hierarchy <= set(deepcite.__all__), hierarchy - set(deepcite.__all__)


def test_the_engine_operations_speak_in_public_types() -> None:
    engine = deepcite.Engine
    ask = inspect.signature(engine.ask)
    assert ask.return_annotation in ("AskResponse", deepcite.AskResponse)
    assert inspect.signature(engine.search).return_annotation in ("SearchResponse", deepcite.SearchResponse)
