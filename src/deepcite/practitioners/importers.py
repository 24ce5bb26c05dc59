"""Importers for practitioner files: both CMS Doctors and Clinicians layouts, and a generic CSV / JSONL.

Formats (``--format``):

- ``cms-national``: the CMS national downloadable file (``NPI, Ind_PAC_ID, …, lst_nm, frst_nm, mid_nm, suff,
  gndr, Cred, Med_sch, Grd_yr, pri_spec, sec_spec_1..4, …, org_nm, adr_ln_1, adr_ln_2, …, cty, st, zip, …,
  hosp_afl_lbn_1..5, …``; the header may use ``", "`` separators). A clinician listed at several
  addresses appears on several rows: the first row's address is kept and the specialties and hospital
  affiliations of all rows are merged.
- ``cms-reduced``: ``NPI, Provider Name, Primary Specialty, Address, City/Town, State, ZIP Code``.
- ``csv`` / ``jsonl``: one practitioner per row / line with deepcite's own field names (below); list
  fields are JSON arrays in JSONL and ``;``-separated in CSV.

Generic column mapping (header names are matched case-insensitively; aliases in brackets):

====================== ===================================================================
field                  meaning
====================== ===================================================================
npi                    10-digit NPI, required
name                   full name, required unless first_name/last_name are given
first_name, last_name  [first, last]
credential             MD, DO, NP … [cred]
gender                 M / F [gndr]
primary_specialty      CMS-style specialty name [specialty]
secondary_specialties  list [secondary_specialty]
organisation           practice or group name [organization, org]
address, city, state   street address; city; two-letter state
zip                    ZIP or ZIP+4, digits [zip_code, postal_code]
hospital_affiliations  list [affiliations]
graduation_year        year of graduation -> years of experience [grad_year]
rating, review_count   0..5 stars; number of reviews [reviews]
languages, procedures, conditions   lists
====================== ===================================================================

Rows without an NPI or a name are reported and skipped; blank rows are counted and ignored. The whole
file is written in one transaction: an unreadable file leaves the directory as it was.
"""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deepcite.errors import IngestError, InputError
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.records import Practitioner, normalise_zip
from deepcite.practitioners.taxonomy import Taxonomy

RawRow = dict[str, Any]


@dataclass
class RowProblem:
    """A row that was skipped, and why."""

    line: int
    reason: str


@dataclass
class ImportReport:
    """What an import read, wrote and skipped."""

    path: str
    format: str
    rows_read: int = 0
    inserted: int = 0
    updated: int = 0
    duplicates_merged: int = 0
    blank_rows: int = 0
    problems: list[RowProblem] = field(default_factory=list)
    unmapped_specialties: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def skipped(self) -> int:
        return len(self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "rows_read": self.rows_read,
            "inserted": self.inserted,
            "updated": self.updated,
            "duplicates_merged": self.duplicates_merged,
            "blank_rows": self.blank_rows,
            "skipped": self.skipped,
            "problems": [{"line": p.line, "reason": p.reason} for p in self.problems],
            "unmapped_specialties": dict(self.unmapped_specialties),
            "seconds": round(self.seconds, 3),
        }


# -- readers: a file into numbered raw rows ------------------------------------------------------------------


def _read_csv(path: Path) -> Iterator[tuple[int, RawRow]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle, skipinitialspace=True)
        if not reader.fieldnames:
            raise IngestError("the file is empty or has no header row", path=str(path))
        reader.fieldnames = [name.strip() for name in reader.fieldnames]
        for row in reader:
            yield reader.line_num, {k: v for k, v in row.items() if k is not None}


def _read_jsonl(path: Path) -> Iterator[tuple[int, RawRow]]:
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                yield number, {}
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise IngestError(
                    f"not valid JSON ({exc.msg}); fix the line or remove it", path=str(path), line=number
                ) from exc
            if not isinstance(record, dict):
                raise IngestError("each line must be a JSON object", path=str(path), line=number)
            yield number, record


# -- converters: a raw row into practitioner fields -----------------------------------------------


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def _texts(*values: Any) -> list[str]:
    return [t for t in (_text(v) for v in values) if t]


def _year(value: Any) -> int | None:
    text = _text(value)
    return int(text) if text and text.isdigit() else None


def _cms_national(row: RawRow) -> dict[str, Any]:
    first, middle, last, suffix = (_text(row.get(k)) for k in ("frst_nm", "mid_nm", "lst_nm", "suff"))
    return {
        "npi": _text(row.get("NPI")),
        "name": " ".join(p for p in (first, middle, last, suffix) if p) or None,
        "first_name": first,
        "last_name": last,
        "credential": _text(row.get("Cred")),
        "gender": _text(row.get("gndr")),
        "primary_specialty": _text(row.get("pri_spec")),
        "secondary_specialties": _texts(*(row.get(f"sec_spec_{i}") for i in range(1, 5))),
        "organisation": _text(row.get("org_nm")),
        "address": " ".join(_texts(row.get("adr_ln_1"), row.get("adr_ln_2"))) or None,
        "city": _text(row.get("cty")),
        "state": _text(row.get("st")),
        "zip": normalise_zip(row.get("zip")),
        "hospital_affiliations": _texts(*(row.get(f"hosp_afl_lbn_{i}") for i in range(1, 6))),
        "graduation_year": _year(row.get("Grd_yr")),
    }


def _cms_reduced(row: RawRow) -> dict[str, Any]:
    return {
        "npi": _text(row.get("NPI")),
        "name": _text(row.get("Provider Name")),
        "primary_specialty": _text(row.get("Primary Specialty")),
        "address": _text(row.get("Address")),
        "city": _text(row.get("City/Town")),
        "state": _text(row.get("State")),
        "zip": normalise_zip(row.get("ZIP Code")),
    }


_ALIASES = {
    "first": "first_name",
    "last": "last_name",
    "cred": "credential",
    "gndr": "gender",
    "specialty": "primary_specialty",
    "secondary_specialty": "secondary_specialties",
    "organization": "organisation",
    "org": "organisation",
    "zip_code": "zip",
    "postal_code": "zip",
    "affiliations": "hospital_affiliations",
    "grad_year": "graduation_year",
    "reviews": "review_count",
}
_LIST_FIELDS = {"secondary_specialties", "hospital_affiliations", "languages", "procedures", "conditions"}


def _generic(row: RawRow) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = _ALIASES.get(str(key).strip().lower(), str(key).strip().lower())
        if name not in Practitioner.model_fields:
            continue
        if name in _LIST_FIELDS:
            items = value if isinstance(value, list) else str(value or "").split(";")
            out[name] = _texts(*items)
        elif name in ("rating", "review_count", "graduation_year"):
            out[name] = value if value not in ("", None) else None
        else:
            out[name] = _text(value)
    if not out.get("name"):
        out["name"] = " ".join(_texts(out.get("first_name"), out.get("last_name"))) or None
    out["zip"] = normalise_zip(out.get("zip"))
    return out


@dataclass(frozen=True)
class Format:
    """How to read one file layout: a reader, a row converter and the header columns it needs."""

    read: Callable[[Path], Iterator[tuple[int, RawRow]]]
    convert: Callable[[RawRow], dict[str, Any]]
    required_columns: tuple[str, ...]


FORMATS: dict[str, Format] = {
    "cms-national": Format(_read_csv, _cms_national, ("NPI", "lst_nm", "frst_nm", "pri_spec")),
    "cms-reduced": Format(_read_csv, _cms_reduced, ("NPI", "Provider Name", "Primary Specialty")),
    "csv": Format(_read_csv, _generic, ("npi",)),
    "jsonl": Format(_read_jsonl, _generic, ()),
}


def get_format(name: str) -> Format:
    """The format called ``name``, failing with the list of valid names."""
    try:
        return FORMATS[name.strip().lower()]
    except KeyError:
        raise InputError(
            f"unknown practitioner file format {name!r}; choose one of: {', '.join(FORMATS)}"
        ) from None


def _check_header(path: Path, fmt_name: str, fmt: Format, columns: list[str]) -> None:
    lowered = {c.lower() for c in columns}
    missing = [c for c in fmt.required_columns if c.lower() not in lowered]
    if not missing:
        return
    fits = [
        n
        for n, f in FORMATS.items()
        if f.required_columns and all(c.lower() in lowered for c in f.required_columns)
    ]
    hint = f"; it looks like --format {fits[0]}" if fits else ""
    raise IngestError(
        f"not a {fmt_name} file: missing column(s) {missing} (header: {columns[:8]}…){hint}", path=str(path)
    )


def _merge(first: Practitioner, again: Practitioner) -> Practitioner:
    """The same NPI twice in one file: keep the first row's address, merge specialties and affiliations."""
    merged = first.model_copy(deep=True)
    for extra in again.specialties:
        if extra != merged.primary_specialty and extra not in merged.secondary_specialties:
            merged.secondary_specialties.append(extra)
    for hospital in again.hospital_affiliations:
        if hospital not in merged.hospital_affiliations:
            merged.hospital_affiliations.append(hospital)
    return merged


def read_practitioners(
    path: Path, fmt_name: str, report: ImportReport, taxonomy: Taxonomy | None = None
) -> Iterator[Practitioner]:
    """Valid practitioners from a file, in file order; problems and blank rows go into ``report``."""
    fmt = get_format(fmt_name)
    if not path.is_file():
        raise InputError(f"{path} does not exist or is not a file")
    header_checked = False
    try:
        for line, raw in fmt.read(path):
            if not header_checked:
                _check_header(path, fmt_name, fmt, list(raw))
                header_checked = True
            if not any(_text(v) for v in raw.values()):
                report.blank_rows += 1
                continue
            report.rows_read += 1
            fields = fmt.convert(raw)
            if not fields.get("npi"):
                report.problems.append(RowProblem(line, "missing NPI"))
                continue
            if not fields.get("name"):
                report.problems.append(RowProblem(line, f"missing name (NPI {fields['npi']})"))
                continue
            try:
                practitioner = Practitioner(**fields)
            except ValidationError as exc:
                reasons = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                report.problems.append(RowProblem(line, reasons))
                continue
            if taxonomy is not None:
                report.unmapped_specialties.update(
                    s for s in practitioner.specialties if not taxonomy.knows(s)
                )
            yield practitioner
    except UnicodeDecodeError as exc:
        raise IngestError(
            f"not UTF-8 text ({exc.reason}); convert the file to UTF-8", path=str(path)
        ) from exc
    except csv.Error as exc:
        raise IngestError(f"malformed CSV: {exc}", path=str(path)) from exc


def import_file(
    path: Path,
    fmt_name: str,
    directory: Directory,
    *,
    taxonomy: Taxonomy | None = None,
    on_row: Callable[[int], None] | None = None,
) -> ImportReport:
    """Read ``path`` and upsert every valid practitioner by NPI, all in one transaction.

    Any error that stops the read (unreadable file, wrong layout, a broken JSON line) rolls the whole
    import back, so the directory keeps its previous contents.
    """
    started = time.perf_counter()
    report = ImportReport(path=str(path), format=fmt_name)
    seen: dict[str, Practitioner] = {}
    with directory.transaction():
        for practitioner in read_practitioners(path, fmt_name, report, taxonomy):
            previous = seen.get(practitioner.npi)
            if previous is not None:
                practitioner = _merge(previous, practitioner)
                report.duplicates_merged += 1
                directory.upsert(practitioner, source=fmt_name)
            elif directory.upsert(practitioner, source=fmt_name):
                report.inserted += 1
            else:
                report.updated += 1
            seen[practitioner.npi] = practitioner
            if on_row is not None:
                on_row(report.rows_read)
        directory.record_import(
            path=str(path),
            fmt=fmt_name,
            rows_read=report.rows_read,
            inserted=report.inserted,
            updated=report.updated,
            skipped=report.skipped,
        )
    report.seconds = time.perf_counter() - started
    return report
