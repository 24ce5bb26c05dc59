"""Intake: normalise a question, keep its literal constraints, attach the caller's guardrails."""

from __future__ import annotations

import logging
import re
import unicodedata

from pydantic import BaseModel, Field

from deepcite.errors import InputError
from deepcite.models import Filters

log = logging.getLogger(__name__)

_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,200})[\"“”«»]")
_PMID = re.compile(r"\bPMID:?\s*(\d{4,9})\b", re.IGNORECASE)
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+")
# identifiers: upper-case letters mixed with digits or dashes (BRCA1, IL-6, COVID-19, TP53), or all-caps
# abbreviations of two or more letters (SVT, ACE); drug-like suffixes (…mab, …nib, …statin, …pril, …olol)
_IDENT = re.compile(r"\b(?:[A-Z][A-Za-z]*\d[A-Za-z0-9]*|[A-Z]{2,}(?:-\d+)?|[A-Z]+-[A-Z0-9]+)\b")
_DRUG = re.compile(
    r"\b[a-z]{3,}(?:mab|nib|statin|pril|olol|sartan|mycin|cillin|azole|vir|tide|parin|oxacin)\b", re.I
)
_COMMON_CAPS = frozenset({"I", "A", "OK", "US", "USA", "UK", "VS"})


class Intake(BaseModel):
    """A normalised question with its literal constraints and guardrails."""

    question: str
    must_preserve_terms: list[str] = Field(default_factory=list)
    must_match_exactly: bool = False
    filters: Filters | None = None  # the caller's ACL groups, allowed sources and doc types
    signals: dict[str, bool] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


def normalize_question(question: str, max_chars: int) -> tuple[str, list[str]]:
    """NFKC, collapsed whitespace, truncated to ``max_chars`` (with a warning); rejects empty input."""
    if question is None or not str(question).strip():
        raise InputError("the question is empty; ask something, e.g. 'compare statins and PCSK9 inhibitors'")
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", str(question))).strip()
    warnings: list[str] = []
    if len(text) > max_chars:
        cut = text[:max_chars].rsplit(" ", 1)[0] or text[:max_chars]
        warnings.append(
            f"the question was {len(text)} characters; only the first {len(cut)} were used "
            f"(limit {max_chars}, setting research.planning.max_question_chars)"
        )
        log.warning(warnings[-1])
        text = cut
    return text, warnings


def extract_must_preserve_terms(question: str) -> tuple[list[str], bool]:
    """Terms that must reach the index verbatim, and whether the user quoted something (exact match)."""
    terms: list[str] = []
    quoted = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    terms.extend(quoted)
    terms.extend(f"PMID {m.group(1)}" for m in _PMID.finditer(question))
    terms.extend(m.group(0).rstrip(".,;)") for m in _DOI.finditer(question))
    unquoted = _QUOTED.sub(" ", _PMID.sub(" ", question))
    terms.extend(m.group(0) for m in _IDENT.finditer(unquoted) if m.group(0) not in _COMMON_CAPS)
    terms.extend(m.group(0) for m in _DRUG.finditer(unquoted))
    seen: set[str] = set()
    unique = [t for t in terms if not (t.lower() in seen or seen.add(t.lower()))]  # type: ignore[func-returns-value]
    return unique, bool(quoted)


def intake(question: str, *, max_chars: int, filters: Filters | None = None) -> Intake:
    """Normalise ``question`` and extract its constraints; ``filters`` carry the caller's guardrails."""
    text, warnings = normalize_question(question, max_chars)
    terms, exact = extract_must_preserve_terms(text)
    signals = {
        "has_identifiers": bool(terms),
        "quoted": exact,
        "multi_part": text.count("?") > 1,
    }
    return Intake(
        question=text,
        must_preserve_terms=terms,
        must_match_exactly=exact,
        filters=filters if filters is not None and not filters.is_empty() else None,
        signals=signals,
        warnings=warnings,
    )
