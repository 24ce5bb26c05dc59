"""Where the patient is: parsing ("Portland, ME 04101"), the store filter, and nearby-first tiers."""

from __future__ import annotations

import difflib
import re
from typing import Literal

from pydantic import BaseModel, field_validator

from deepcite.models import Filters
from deepcite.practitioners.records import Practitioner, normalise_zip

Proximity = Literal["same_zip", "same_city", "same_state", "elsewhere"]
PROXIMITY_TIERS: dict[Proximity, int] = {"same_zip": 0, "same_city": 1, "same_state": 2, "elsewhere": 3}

US_STATES: dict[str, str] = {
    "ALABAMA": "AL", "ALASKA": "AK", "ARIZONA": "AZ", "ARKANSAS": "AR", "CALIFORNIA": "CA", "COLORADO": "CO",
    "CONNECTICUT": "CT", "DELAWARE": "DE", "DISTRICT OF COLUMBIA": "DC", "FLORIDA": "FL", "GEORGIA": "GA",
    "HAWAII": "HI", "IDAHO": "ID", "ILLINOIS": "IL", "INDIANA": "IN", "IOWA": "IA", "KANSAS": "KS",
    "KENTUCKY": "KY", "LOUISIANA": "LA", "MAINE": "ME", "MARYLAND": "MD", "MASSACHUSETTS": "MA",
    "MICHIGAN": "MI", "MINNESOTA": "MN", "MISSISSIPPI": "MS", "MISSOURI": "MO", "MONTANA": "MT",
    "NEBRASKA": "NE", "NEVADA": "NV", "NEW HAMPSHIRE": "NH", "NEW JERSEY": "NJ", "NEW MEXICO": "NM",
    "NEW YORK": "NY", "NORTH CAROLINA": "NC", "NORTH DAKOTA": "ND", "OHIO": "OH", "OKLAHOMA": "OK",
    "OREGON": "OR", "PENNSYLVANIA": "PA", "PUERTO RICO": "PR", "RHODE ISLAND": "RI", "SOUTH CAROLINA": "SC",
    "SOUTH DAKOTA": "SD", "TENNESSEE": "TN", "TEXAS": "TX", "UTAH": "UT", "VERMONT": "VT", "VIRGINIA": "VA",
    "WASHINGTON": "WA", "WEST VIRGINIA": "WV", "WISCONSIN": "WI", "WYOMING": "WY",
}  # fmt: skip
_CODES = frozenset(US_STATES.values())
_ZIP_RE = re.compile(r"\b(\d{5})(?:-\d{4})?\b")


class Location(BaseModel):
    """A city, a state (two-letter code or full name) and/or a ZIP; all optional, stored upper-case."""

    city: str | None = None
    state: str | None = None
    zip: str | None = None

    @field_validator("city", mode="before")
    @classmethod
    def _city(cls, value: str | None) -> str | None:
        text = " ".join(str(value).split()).upper() if value else ""
        return text or None

    @field_validator("state", mode="before")
    @classmethod
    def _state(cls, value: str | None) -> str | None:
        text = " ".join(str(value).split()).upper() if value else ""
        if not text:
            return None
        code = US_STATES.get(text, text)
        if code not in _CODES:
            raise ValueError(f"unknown US state {value!r}; use a two-letter code such as ME or a full name")
        return code

    @field_validator("zip", mode="before")
    @classmethod
    def _zip(cls, value: str | int | None) -> str | None:
        return normalise_zip(str(value)) if value not in (None, "") else None

    def is_empty(self) -> bool:
        return not (self.city or self.state or self.zip)

    def label(self) -> str:
        return ", ".join(p for p in (self.city, self.state, self.zip) if p)

    def filters(self) -> Filters:
        """Store filters on the profile chunks' metadata (every given field must match)."""
        equals = {k: v for k, v in (("city", self.city), ("state", self.state), ("zip", self.zip)) if v}
        return Filters(equals=equals)

    def proximity(self, practitioner: Practitioner) -> Proximity:
        """How near a practitioner is: same ZIP, same city (and state), same state, or elsewhere."""
        same_state = not self.state or (practitioner.state or "").upper() == self.state
        if self.zip and practitioner.zip == self.zip:
            return "same_zip"
        if self.city and (practitioner.city or "").upper() == self.city and same_state:
            return "same_city"
        if self.state and same_state:
            return "same_state"
        return "elsewhere"


def parse_location(text: str) -> Location:
    """``"Portland, ME 04101"``, ``"Bangor Maine"``, ``"04101"`` or ``"Portland"`` into a Location."""
    rest = " ".join(text.replace(",", " , ").split())
    zip_code = None
    if match := _ZIP_RE.search(rest):
        zip_code = match.group(1)
        rest = (rest[: match.start()] + rest[match.end() :]).strip()
    state = None
    upper = rest.upper().rstrip(" ,")
    for name in sorted([*US_STATES, *_CODES], key=len, reverse=True):
        if upper == name or upper.endswith((f" {name}", f",{name}")):
            state = name
            upper = upper[: -len(name)]
            break
    city = upper.strip(" ,") or None
    return Location(city=city, state=state, zip=zip_code)


def close_matches(value: str, known: list[str], limit: int = 3) -> list[str]:
    """Known names spelled like ``value`` (for "did you mean …")."""
    return difflib.get_close_matches(value.upper(), known, n=limit, cutoff=0.6)
