"""Where settings come from besides arguments: the environment with sub-sections nested, and a TOML file that
refuses unknown keys; and a validation error told as ``section.key: message`` with the nearest valid key."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, TomlConfigSettingsSource

from deepcite.errors import ConfigError


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


class NestedEnvSource(PydanticBaseSettingsSource):
    """The environment, with sub-sections nested: ``DEEPCITE_RESEARCH_STOPPING_MAX_HOPS`` arrives as
    ``research.stopping_max_hops`` and is handed on as ``research.stopping.max_hops`` (likewise
    ``DEEPCITE_ANSWER_CITATIONS_JUDGE``, ``DEEPCITE_PRACTITIONERS_SEMANTIC_ENABLED``)."""

    def __init__(self, settings_cls: type[BaseSettings], env: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self.env = env

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.env.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        data = self.env()
        fields = self.settings_cls.model_fields
        for name, values in data.items():
            model = fields[name].annotation if name in fields else None
            if isinstance(values, dict) and _is_section(model):
                data[name] = self._nest(model, values)  # type: ignore[arg-type]
        return data

    def _nest(self, model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
        """``section_key`` keys of ``values`` moved into their sub-section of ``model``."""
        sections = [n for n, f in model.model_fields.items() if _is_section(f.annotation)]
        nested: dict[str, Any] = {}
        for key, value in values.items():
            section = next((s for s in sections if key.startswith(s + "_")), None)
            if section is None or key in model.model_fields:
                nested[key] = value
                continue
            leaf = key[len(section) + 1 :]
            field = model.model_fields[section].annotation.model_fields.get(leaf)  # type: ignore[union-attr]
            if field is not None and isinstance(value, str) and self.field_is_complex(field):
                value = self.decode_complex_value(leaf, field, value)
            nested.setdefault(section, {})[leaf] = value
        return nested


class CheckedTomlSource(TomlConfigSettingsSource):
    """pydantic-settings' TOML source that refuses unknown keys, naming the file and the nearest known key."""

    def __init__(self, settings_cls: type[BaseSettings], file: Path) -> None:
        self.file = file
        try:
            super().__init__(settings_cls, toml_file=file)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(
                f"cannot read settings file {file}: {exc}; fix or unset DEEPCITE_CONFIG"
            ) from exc
        _check_keys(self.toml_data, settings_cls, (), file)


def _check_keys(data: dict[str, Any], model: type[BaseModel], where: tuple[str, ...], file: Path) -> None:
    """Raise ``ConfigError`` for the first key of ``data`` that ``model`` has no field for."""
    for key, value in data.items():
        dotted = ".".join((*where, key))
        field = model.model_fields.get(key)
        if field is None:
            raise ConfigError(f"unknown setting {dotted!r} in {file}; {_nearest(key, model, where)}")
        section = field.annotation
        if isinstance(value, dict) and isinstance(section, type) and issubclass(section, BaseModel):
            _check_keys(value, section, (*where, key), file)


def _nearest(key: str, model: type[BaseModel], where: tuple[str, ...]) -> str:
    """``did you mean 'section.key'?`` for the closest field of ``model`` or of its sub-sections (a flat
    ``citation_judge`` finds ``citations.judge``), else the fields it has."""
    paths = {name: name for name in model.model_fields}
    for name, field in model.model_fields.items():
        if _is_section(field.annotation):
            for leaf in field.annotation.model_fields:  # type: ignore[union-attr]
                paths.setdefault(f"{name}_{leaf}", f"{name}.{leaf}")
    close = difflib.get_close_matches(key, list(paths), n=1)
    if close:
        return f"did you mean {'.'.join((*where, paths[close[0]]))!r}?"
    return f"known here: {', '.join(sorted(model.model_fields))}"


def describe_error(err: Any, settings_cls: type[BaseModel]) -> str:
    """One validation error of ``settings_cls`` as ``section.key: message``, with the nearest key for an
    unknown one."""
    loc = tuple(str(part) for part in err["loc"])
    if err["type"] == "extra_forbidden" and len(loc) >= 2:
        model: Any = settings_cls
        for part in loc[:-1]:
            field = model.model_fields.get(part) if _is_section(model) else None
            model = field.annotation if field is not None else None
        if _is_section(model):
            return f"unknown setting {'.'.join(loc)!r}; {_nearest(loc[-1], model, loc[:-1])}"
    return f"{'.'.join(loc)}: {err['msg']}"
