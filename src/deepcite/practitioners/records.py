"""The practitioner record: one row of the directory, whatever file it was imported from."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator

_NPI_RE = re.compile(r"^\d{10}$")


class PractitionerProfile(BaseModel):
    """The directory fields a practitioner is shown with: identity, specialties, practice address,
    hospitals. Both the stored record and a search result carry them."""

    npi: str
    name: str
    credential: str | None = None
    gender: str | None = None
    primary_specialty: str | None = None
    secondary_specialties: list[str] = Field(default_factory=list)
    organisation: str | None = None
    address: str | None = None
    city: str | None = None
    state: str | None = None
    zip: str | None = None  # five digits (ZIP+4 is cut to the ZIP)
    hospital_affiliations: list[str] = Field(default_factory=list)


class Practitioner(PractitionerProfile):
    """A clinician in the directory, keyed by the 10-digit NPI."""

    first_name: str | None = None
    last_name: str | None = None
    graduation_year: int | None = None
    rating: float | None = Field(default=None, ge=0.0, le=5.0)
    review_count: int | None = Field(default=None, ge=0)
    languages: list[str] = Field(default_factory=list)
    procedures: list[str] = Field(default_factory=list)
    conditions: list[str] = Field(default_factory=list)

    @field_validator("npi")
    @classmethod
    def _ten_digits(cls, value: str) -> str:
        value = value.strip()
        if not _NPI_RE.match(value):
            raise ValueError(f"NPI must be 10 digits, got {value!r}")
        return value

    @property
    def specialties(self) -> list[str]:
        """Primary specialty first, then the secondary ones, without repeats."""
        out: list[str] = []
        for spec in [self.primary_specialty, *self.secondary_specialties]:
            if spec and spec not in out:
                out.append(spec)
        return out

    def years_of_experience(self, reference_year: int) -> int | None:
        """Years since graduation, or None when the graduation year is unknown."""
        if self.graduation_year is None:
            return None
        return max(0, reference_year - self.graduation_year)


def normalise_zip(raw: str | None) -> str | None:
    """A five-digit ZIP from CMS's digits-only values, which lost New England's leading zero.

    ``"41023134"`` (ZIP+4 without its zero) becomes ``"04102"``; ``"4416"`` becomes ``"04416"``.
    """
    if raw is None:
        return None
    digits = re.sub(r"\D", "", str(raw))
    if not digits:
        return None
    if len(digits) <= 5:
        return digits.zfill(5)
    return digits.zfill(9)[:5]
