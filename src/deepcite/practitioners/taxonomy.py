"""CMS specialty names mapped to NUCC taxonomy codes and their definitions, read from package data.

Both files live in ``deepcite/data/practitioners/``: ``specialty_map.json`` (CMS name -> NUCC codes) and
``nucc_definitions.json`` (an excerpt of the NUCC taxonomy holding only the mapped codes), so profiles get
their definitions offline. :func:`build_nucc_excerpt` regenerates the excerpt from the full NUCC CSV.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from deepcite.errors import ConfigError, InputError
from deepcite.text import split_sentences

DATA_PACKAGE = "deepcite"
DATA_DIR = ("data", "practitioners")
# NUCC rows whose definition has not been written yet carry this placeholder.
_PLACEHOLDER_DEFINITIONS = frozenset({"definition to come...", "definition to come"})


class NuccEntry(BaseModel):
    """One NUCC taxonomy code with its names and definition."""

    code: str
    grouping: str
    classification: str
    specialization: str = ""
    display_name: str = ""
    definition: str = ""

    @property
    def label(self) -> str:
        """The most specific name: the specialization when there is one, else the classification."""
        return self.specialization or self.classification


def normalise_specialty(name: str) -> str:
    """The key a specialty is looked up by: upper-case, single spaces."""
    return re.sub(r"\s+", " ", name.strip().upper())


def read_data_file(name: str) -> Any:
    """A JSON file from the package's practitioner data folder."""
    path = resources.files(DATA_PACKAGE).joinpath(*DATA_DIR, name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read package data file {name}: {exc}; reinstall deepcite") from exc


class Taxonomy:
    """CMS specialty -> NUCC entries, for profile text and for the intent catalogue's coverage checks."""

    def __init__(self, specialty_codes: dict[str, list[str]], entries: dict[str, NuccEntry]) -> None:
        missing = sorted({c for codes in specialty_codes.values() for c in codes} - set(entries))
        if missing:
            raise ConfigError(
                f"specialty map names NUCC codes absent from the definitions excerpt: {missing}"
            )
        self._codes = {normalise_specialty(k): list(v) for k, v in specialty_codes.items()}
        self._entries = entries

    @classmethod
    def load(cls) -> Taxonomy:
        """The taxonomy shipped with deepcite (cached)."""
        return _packaged_taxonomy()

    @property
    def specialties(self) -> list[str]:
        """Every CMS specialty name the map knows, sorted."""
        return sorted(self._codes)

    def knows(self, specialty: str) -> bool:
        return normalise_specialty(specialty) in self._codes

    def entries_for(self, specialty: str) -> list[NuccEntry]:
        """The NUCC entries of a CMS specialty (empty when the specialty is not mapped)."""
        return [self._entries[c] for c in self._codes.get(normalise_specialty(specialty), [])]

    def definitions_for(self, specialty: str) -> list[str]:
        """``"<label>: <definition>"`` for each mapped entry that has a real definition."""
        return [f"{e.label}: {e.definition}" for e in self.entries_for(specialty) if e.definition]

    def plain_definition(self, specialty: str) -> str | None:
        """The first sentence of the specialty's first NUCC definition: what the specialty is, in plain words."""
        for entry in self.entries_for(specialty):
            if entry.definition:
                sentences = split_sentences(entry.definition)
                return sentences[0] if sentences else entry.definition
        return None


@lru_cache(maxsize=1)
def _packaged_taxonomy() -> Taxonomy:
    mapping = read_data_file("specialty_map.json")["specialties"]
    excerpt = read_data_file("nucc_definitions.json")
    entries = {code: NuccEntry(code=code, **fields) for code, fields in excerpt["codes"].items()}
    return Taxonomy(mapping, entries)


def build_nucc_excerpt(nucc_csv: Path, codes: Iterable[str]) -> dict[str, Any]:
    """The definitions excerpt for ``codes`` from the full NUCC CSV (``Code, Grouping, Classification …``)."""
    wanted = set(codes)
    try:
        with nucc_csv.open(newline="", encoding="utf-8-sig") as handle:
            rows = {row["Code"].strip(): row for row in csv.DictReader(handle)}
    except (OSError, KeyError, csv.Error) as exc:
        raise InputError(f"cannot read the NUCC taxonomy CSV {nucc_csv}: {exc}") from exc
    absent = sorted(wanted - set(rows))
    if absent:
        raise InputError(f"{nucc_csv} has no rows for codes {absent}; is it the NUCC taxonomy CSV?")
    out: dict[str, Any] = {}
    for code in sorted(wanted):
        row = rows[code]
        definition = (row.get("Definition") or "").strip()
        if definition.lower() in _PLACEHOLDER_DEFINITIONS:
            definition = ""
        out[code] = {
            "grouping": row["Grouping"].strip(),
            "classification": row["Classification"].strip(),
            "specialization": (row.get("Specialization") or "").strip(),
            "display_name": (row.get("Display Name") or "").strip(),
            "definition": definition,
        }
    return {
        "source": "National Uniform Claim Committee (NUCC) Health Care Provider Taxonomy, version 25.1, "
        "https://www.nucc.org (free use); excerpt of the codes deepcite maps CMS specialties to.",
        "codes": out,
    }
