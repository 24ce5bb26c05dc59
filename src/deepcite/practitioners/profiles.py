"""Profile text: what stage A's BM25 searches for each practitioner, and the chunk that carries it."""

from __future__ import annotations

from deepcite.models import Chunk
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.taxonomy import Taxonomy

PROFILE_SOURCE = "practitioners"


def profile_text(practitioner: Practitioner, taxonomy: Taxonomy) -> str:
    """Specialties, organisation, affiliations, procedures, conditions, languages and the NUCC definitions
    of the practitioner's specialties (the name goes in the chunk title).

    The definitions are what let "electrophysiology" reach a record that only says CARDIAC ELECTROPHYSIOLOGY.
    """
    parts: list[str] = []
    if practitioner.specialties:
        parts.append("Specialties: " + "; ".join(practitioner.specialties) + ".")
    if practitioner.credential:
        parts.append(f"Credential: {practitioner.credential}.")
    if practitioner.organisation:
        parts.append(f"Organisation: {practitioner.organisation}.")
    if practitioner.hospital_affiliations:
        parts.append("Hospital affiliations: " + "; ".join(practitioner.hospital_affiliations) + ".")
    for label, values in (
        ("Procedures", practitioner.procedures),
        ("Conditions treated", practitioner.conditions),
        ("Languages", practitioner.languages),
    ):
        if values:
            parts.append(f"{label}: " + "; ".join(values) + ".")
    seen: set[str] = set()
    for specialty in practitioner.specialties:
        for definition in taxonomy.definitions_for(specialty):
            if definition not in seen:
                seen.add(definition)
                parts.append(definition)
    return " ".join(parts)


def profile_chunk(practitioner: Practitioner, taxonomy: Taxonomy) -> Chunk:
    """The practitioner as a searchable chunk: chunk_id and doc_id are the NPI, location in metadata."""
    return Chunk(
        chunk_id=practitioner.npi,
        doc_id=practitioner.npi,
        title=practitioner.name,
        text=profile_text(practitioner, taxonomy),
        source=PROFILE_SOURCE,
        metadata={
            "city": (practitioner.city or "").upper(),
            "state": (practitioner.state or "").upper(),
            "zip": practitioner.zip or "",
            "primary_specialty": practitioner.primary_specialty or "",
        },
    )
