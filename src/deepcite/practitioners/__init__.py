"""The practitioner finder: a SQLite directory, NUCC-enriched profiles, intent analysis, two-stage ranking."""

from deepcite.practitioners.api import PractitionerQuery, PractitionerResult, PractitionerSearchResponse
from deepcite.practitioners.finder import PractitionerFinder, search_practitioners

__all__ = [
    "PractitionerFinder",
    "PractitionerQuery",
    "PractitionerResult",
    "PractitionerSearchResponse",
    "search_practitioners",
]
