"""The CMS -> NUCC specialty map, the packaged definitions excerpt and the profile text built from them."""

from __future__ import annotations

from pathlib import Path

from deepcite.practitioners.profiles import profile_chunk, profile_text
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.taxonomy import Taxonomy, build_nucc_excerpt, read_data_file
from practitioners.conftest import NUCC, SPECIALTIES


def test_every_specialty_in_both_cms_files_maps_to_a_defined_nucc_code() -> None:
    taxonomy = Taxonomy.load()
    specialties = [line for line in SPECIALTIES.read_text(encoding="utf-8").splitlines() if line]
    assert len(specialties) == 81
    unmapped = [s for s in specialties if not taxonomy.knows(s)]
    assert unmapped == []
    undefined = [s for s in specialties if not taxonomy.definitions_for(s)]
    assert undefined == []


def test_definitions_excerpt_holds_exactly_the_mapped_codes() -> None:
    mapping = read_data_file("specialty_map.json")["specialties"]
    excerpt = read_data_file("nucc_definitions.json")
    assert {code for codes in mapping.values() for code in codes} == set(excerpt["codes"])
    assert "nucc.org" in excerpt["source"]


def test_build_excerpt_drops_placeholder_definitions(tmp_path: Path) -> None:
    excerpt = build_nucc_excerpt(NUCC, ["207RC0001X", "101YM0800X"])
    codes = excerpt["codes"]
    assert codes["207RC0001X"]["specialization"] == "Clinical Cardiac Electrophysiology"
    assert "heart rhythms" in codes["207RC0001X"]["definition"]
    assert codes["101YM0800X"]["definition"] == ""  # NUCC says "Definition to come..."


def test_profile_text_carries_the_nucc_definition() -> None:
    doctor = Practitioner(
        npi="1234567893",
        name="ANA EXAMPLE",
        primary_specialty="CARDIAC ELECTROPHYSIOLOGY",
        organisation="MAINE HEART GROUP",
        hospital_affiliations=["MAINE MEDICAL CENTER"],
    )
    text = profile_text(doctor, Taxonomy.load())
    assert "CARDIAC ELECTROPHYSIOLOGY" in text
    assert "evaluate heart rhythms" in text  # from NUCC 207RC0001X
    assert "MAINE HEART GROUP" in text and "MAINE MEDICAL CENTER" in text
    chunk = profile_chunk(doctor, Taxonomy.load())
    assert chunk.chunk_id == chunk.doc_id == "1234567893"
    assert chunk.title == "ANA EXAMPLE"
