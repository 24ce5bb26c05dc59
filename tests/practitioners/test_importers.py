"""Importers on real CMS rows: both layouts, generic CSV/JSONL, problems, updates and atomicity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepcite.errors import IngestError, InputError
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.importers import import_file
from deepcite.practitioners.records import normalise_zip
from deepcite.practitioners.taxonomy import Taxonomy
from practitioners.conftest import MAINE, NATIONAL


@pytest.fixture
def directory(tmp_path: Path) -> Directory:
    return Directory(tmp_path / "practitioners.sqlite")


def test_maine_reduced_layout(directory: Directory) -> None:
    report = import_file(MAINE, "cms-reduced", directory, taxonomy=Taxonomy.load())
    assert (report.rows_read, report.inserted, report.updated, report.skipped) == (57, 57, 0, 0)
    assert report.blank_rows == 2  # the file ends with blank rows, as the full Maine file does
    assert report.unmapped_specialties == {}
    first = directory.get("1003012253")
    assert first is not None
    assert (first.name, first.primary_specialty, first.address, first.city, first.state, first.zip) == (
        "KIMBERLY MILLS",
        "CLINICAL SOCIAL WORKER",
        "110 BROADWAY",
        "BUCKSPORT",
        "ME",
        "04416",
    )
    portland = [p for p in directory if p.city == "PORTLAND"]
    assert portland and all(p.zip and p.zip.startswith("04") for p in portland)  # leading zero restored


def test_national_layout_merges_a_clinician_listed_at_three_addresses(directory: Directory) -> None:
    report = import_file(NATIONAL, "cms-national", directory)
    assert report.rows_read == 45
    assert report.duplicates_merged == 2
    assert report.inserted == 43
    mueller = directory.get("1215925722")
    assert mueller is not None
    assert mueller.name == "CHRISTINE M MUELLER"
    assert (mueller.gender, mueller.graduation_year, mueller.primary_specialty) == (
        "F",
        1988,
        "FAMILY MEDICINE",
    )
    assert mueller.address == "1425 N RANDALL RD" and mueller.city == "ELGIN" and mueller.zip == "60123"
    assert mueller.hospital_affiliations == [
        "ADVOCATE SHERMAN HOSPITAL",
        "NORTHWESTERN MEDICINE WOODSTOCK HOSPITAL",
    ]
    with_secondary = [p for p in directory if p.secondary_specialties]
    assert with_secondary, "the excerpt holds clinicians with secondary specialties"


def test_rows_without_npi_or_name_are_reported_and_skipped(tmp_path: Path, directory: Directory) -> None:
    path = tmp_path / "people.csv"
    path.write_text(
        "npi,name,specialty,city,state,zip\n"
        "1234567893,ANA EXAMPLE,NEPHROLOGY,Portland,ME,04101\n"
        ",NO NPI,NEPHROLOGY,Portland,ME,04101\n"
        "1588667638,,UROLOGY,Bangor,ME,04401\n"
        "12345,SHORT NPI,UROLOGY,Bangor,ME,04401\n",
        encoding="utf-8",
    )
    report = import_file(path, "csv", directory)
    assert report.inserted == 1
    assert [(p.line, p.reason.split(" (")[0].split(":")[0]) for p in report.problems] == [
        (3, "missing NPI"),
        (4, "missing name"),
        (5, "npi"),
    ]
    assert directory.count() == 1


def test_reimport_updates_in_place_by_npi(tmp_path: Path, directory: Directory) -> None:
    import_file(MAINE, "cms-reduced", directory)
    original = MAINE.read_text(encoding="utf-8")
    changed = original.replace("KIMBERLY MILLS,CLINICAL SOCIAL WORKER", "KIMBERLY MILLS,FAMILY PRACTICE", 1)
    assert changed != original
    path = tmp_path / "maine_v2.csv"
    path.write_text(changed, encoding="utf-8")
    report = import_file(path, "cms-reduced", directory)
    assert (report.inserted, report.updated) == (0, 57)
    assert directory.count() == 57
    assert directory.get("1003012253").primary_specialty == "FAMILY PRACTICE"  # type: ignore[union-attr]


def test_a_failing_import_leaves_the_old_directory_intact(tmp_path: Path, directory: Directory) -> None:
    import_file(MAINE, "cms-reduced", directory)
    before = {p.npi: p for p in directory}
    path = tmp_path / "broken.jsonl"
    lines = [
        json.dumps({"npi": "1003012253", "name": "RENAMED", "primary_specialty": "UROLOGY"}),
        json.dumps({"npi": "1234567893", "name": "NEW PERSON"}),
        '{"npi": "1588667638", "name": broken',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"broken\.jsonl:3: not valid JSON"):
        import_file(path, "jsonl", directory)
    assert {p.npi: p for p in directory} == before


def test_jsonl_with_lists_and_quality_fields(tmp_path: Path, directory: Directory) -> None:
    path = tmp_path / "people.jsonl"
    record = {
        "npi": "1234567893",
        "first_name": "Ana",
        "last_name": "Example",
        "specialty": "CARDIAC ELECTROPHYSIOLOGY",
        "organization": "Heart Rhythm Clinic",
        "procedures": ["SVT ablation", "pacemaker"],
        "languages": ["Spanish"],
        "rating": 4.8,
        "reviews": 120,
        "grad_year": 2001,
        "zip_code": "04101-1234",
    }
    path.write_text(json.dumps(record) + "\n\n", encoding="utf-8")
    report = import_file(path, "jsonl", directory)
    assert (report.inserted, report.blank_rows) == (1, 1)
    doctor = directory.get("1234567893")
    assert doctor is not None
    assert doctor.name == "Ana Example" and doctor.organisation == "Heart Rhythm Clinic"
    assert doctor.procedures == ["SVT ablation", "pacemaker"]
    assert (doctor.rating, doctor.review_count, doctor.graduation_year, doctor.zip) == (
        4.8,
        120,
        2001,
        "04101",
    )


def test_wrong_layout_names_the_missing_columns_and_the_likely_format(directory: Directory) -> None:
    with pytest.raises(IngestError, match="missing column.*looks like --format cms-reduced"):
        import_file(MAINE, "cms-national", directory)
    assert directory.count() == 0


def test_unknown_format_lists_the_choices(directory: Directory) -> None:
    with pytest.raises(InputError, match="cms-national, cms-reduced, csv, jsonl"):
        import_file(MAINE, "excel", directory)


def test_missing_file(tmp_path: Path, directory: Directory) -> None:
    with pytest.raises(InputError, match="does not exist"):
        import_file(tmp_path / "nope.csv", "csv", directory)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("41023134", "04102"), ("4416", "04416"), ("601232300", "60123"), ("04101", "04101"), ("", None)],
)
def test_zip_normalisation(raw: str, expected: str | None) -> None:
    assert normalise_zip(raw) == expected
