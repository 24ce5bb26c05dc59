"""Evaluated systems as named settings profiles: TOML files over the settings in force, not code paths.

A profile holds only the settings it changes (``[research.retrieval] use_graph = true``). The shipped
profiles live beside this module (``default`` changes nothing: the system users run); any TOML file path works
too. :func:`profile_settings` lays a profile over a base :class:`Settings`, refusing unknown keys.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from deepcite.config import Settings
from deepcite.errors import ConfigError, InputError

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
DEFAULT_PROFILE = "default"


def profile_names() -> list[str]:
    """The profiles shipped with deepcite, by name."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))


def load_profile(name: str) -> dict[str, Any]:
    """A shipped profile by name, or a TOML file by path; InputError naming the known ones otherwise."""
    path = Path(name) if name.endswith(".toml") else PROFILE_DIR / f"{name}.toml"
    if not path.is_file():
        raise InputError(
            f"no settings profile {name!r}; choose one of {', '.join(profile_names())} or a .toml file"
        )
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read settings profile {path.name}: {exc}") from exc


def _laid_over(model: BaseModel, values: dict[str, Any], where: str) -> BaseModel:
    """``model`` with ``values`` laid over it, sub-sections merged key by key; unknown keys refused."""
    update: dict[str, Any] = {}
    for key, value in values.items():
        if key not in type(model).model_fields:
            raise ConfigError(f"unknown setting {where}{key!r} in a settings profile")
        current = getattr(model, key)
        if isinstance(value, dict) and isinstance(current, BaseModel):
            update[key] = _laid_over(current, value, f"{where}{key}.")
        else:
            update[key] = value
    try:
        return type(model).model_validate({**model.model_dump(), **update})
    except ValidationError as exc:
        raise ConfigError(f"invalid settings profile at {where or 'top level'}: {exc}") from exc


def profile_settings(base: Settings, profile: dict[str, Any]) -> Settings:
    """``base`` with a profile's sections laid over it (the data dir and everything unnamed kept)."""
    sections = {}
    for name, values in profile.items():
        current = getattr(base, name, None)
        if not isinstance(current, BaseModel) or not isinstance(values, dict):
            raise ConfigError(f"a settings profile names sections ([research], [graph], ...), not {name!r}")
        sections[name] = _laid_over(current, values, f"{name}.")
    return base.model_copy(update=sections)
