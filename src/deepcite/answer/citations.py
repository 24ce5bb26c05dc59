"""The citation check every generated text passes through before it reaches a user.

Rules, applied line by line (so headings, lists and paragraphs keep their shape):

- A citation marker is ``[n]``, ``[n, m]``, ``[n; m]`` or a range ``[n-m]``. Ids that are not in
  ``valid_ids`` are removed (a range keeps the valid ids inside it, and is dropped whole when it spans more
  than ``max_range_width`` ids: ``[0-500]`` cites nothing); what remains is written ``[a][b]``.
- With ``supports`` (:class:`deepcite.answer.support.CitationSupport` over the context's passages), each
  id a factual sentence keeps must support it; one that does not is removed, and a sentence left with no
  supported citation is unsupported, like one that cited nothing. When ``supports`` answers with a
  :class:`SupportMatch`, each judged (sentence, id) pair is kept in ``CitationCheck.claims`` with its
  score, verdict and quote span: the rows of the evidence table (:mod:`deepcite.answer.evidence`).
  A marker placed after the full stop (``… works. [2] Next …``) belongs to the sentence before it.
- Structural lines are not factual sentences: blank lines, markdown headings (``# …``), horizontal rules,
  lines that are wholly bold (``**Risk**``), one-sentence lines ending in a colon (a label or list
  lead-in such as ``Key findings:``) and lines without a letter or digit. They keep their valid markers,
  lose invalid ones, and are not counted.
- Every other line (a list marker such as ``-`` or ``1.`` is kept aside) is split into sentences with
  :func:`deepcite.text.split_sentences`. A sentence that is the unknown phrase or the insufficient-evidence
  template is kept as is. A sentence left with no valid citation is replaced by "Unknown based on
  provided sources." (policy ``replace``; repeated unknown phrases in a row are written once) or removed
  (policy ``drop``). A text left with nothing factual at all becomes the unknown phrase.

Invariant: every marker in the returned text resolves to ``valid_ids``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from deepcite.answer.decision import VERDICT_OPENING
from deepcite.answer.prompts import INSUFFICIENT, UNKNOWN, not_stated
from deepcite.answer.question_kind import AnswerKind
from deepcite.text import split_sentences

Policy = Literal["replace", "drop"]


class SupportMatch(BaseModel):
    """Whether a passage supports a sentence, the combined support score, and the quote: the span of the
    passage text (character offsets) that supports it (:meth:`deepcite.answer.support.CitationSupport.match`)."""

    supported: bool
    score: float | None = None
    quote_start: int = 0
    quote_end: int = 0


class ClaimCheck(SupportMatch):
    """One cited sentence (``claim``, without its markers) and one passage it cited (``id``), as judged."""

    claim: str
    id: int
    part: str = ""  # which text: "summary", "answer" or the sub-question

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> Literal["supported", "removed"]:
        return "supported" if self.supported else "removed"


# (sentence without markers, cited id) -> does the passage support it (with its score and quote, as a match)
Supports = Callable[[str, int], bool | SupportMatch]

_ID = r"\d+"
CITATION_RE = re.compile(rf"\[\s*{_ID}(?:\s*(?:[,;]|[-–])\s*{_ID})*\s*\]")
_RANGE_RE = re.compile(rf"^({_ID})\s*[-–]\s*({_ID})$")
# markers after a sentence's full stop, where the next sentence (or the line's end) follows; a further
# marker is not the start of a next sentence
_AFTER_STOP_RE = re.compile(
    rf"([.!?])((?:\s*{CITATION_RE.pattern})+)(?=\s*$|\s+(?!{CITATION_RE.pattern})[\"'(\[]?[A-Z0-9])"
)
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s")
_RULE_RE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_BOLD_LINE_RE = re.compile(r"^\s*\*\*[^*]+\*\*\s*:?\s*$")
_LIST_MARKER_RE = re.compile(r"^(\s*(?:[-*+•]|\d+[.)])\s+)")
# stops and commas left at a sentence's start once a marker before them is removed ("[0] . . . Stroke [4]"):
# the splitter would cut them off as a sentence of their own when the text is checked again
_LEADING_STOPS_RE = re.compile(r"^[\s.,;:!?…]+(?=[^\W_])")
_REMOVED = "\x00"  # stands for a removed marker while cleaning
# bare form -> canonical: the unknown and insufficient phrases, and the summary's "not stated" sentence for
# each kind of question (said of no passage, so cited by none)
_EXEMPT = {
    p.lower().rstrip("."): p
    for p in (UNKNOWN, INSUFFICIENT, *(f"{not_stated(kind.asked_for)}." for kind in AnswerKind))
}


class CitationCheck(BaseModel):
    """What the check found and changed in one text (or several, merged)."""

    sentences: int = 0  # factual sentences seen (structural lines excluded)
    cited: int = 0  # sentences left with at least one valid citation
    repaired: int = 0  # sentences replaced by the unknown phrase
    dropped: int = 0  # sentences removed
    invalid_ids: int = 0  # citation ids removed because they resolve to no chunk
    ranges_dropped: int = (
        0  # ranges removed whole for spanning more than answer.citations.max_range_width ids
    )
    supported: int = 0  # citations (sentence, id) kept because the passage supports the sentence
    removed: int = 0  # citations removed because the passage does not support the sentence
    unsupported_sentences: int = 0  # sentences whose every citation was removed (then repaired or dropped)
    cited_ids: list[int] = Field(default_factory=list)  # distinct valid ids the text cites
    claims: list[ClaimCheck] = Field(default_factory=list)  # every judged (sentence, id), in text order

    def merge(self, other: CitationCheck) -> CitationCheck:
        """Totals of two checks."""
        return CitationCheck(
            sentences=self.sentences + other.sentences,
            cited=self.cited + other.cited,
            repaired=self.repaired + other.repaired,
            dropped=self.dropped + other.dropped,
            invalid_ids=self.invalid_ids + other.invalid_ids,
            ranges_dropped=self.ranges_dropped + other.ranges_dropped,
            supported=self.supported + other.supported,
            removed=self.removed + other.removed,
            unsupported_sentences=self.unsupported_sentences + other.unsupported_sentences,
            cited_ids=sorted(set(self.cited_ids) | set(other.cited_ids)),
            claims=[*self.claims, *other.claims],
        )

    def for_part(self, part: str) -> CitationCheck:
        """This check with its claims labelled as coming from ``part``."""
        return self.model_copy(update={"claims": [c.model_copy(update={"part": part}) for c in self.claims]})


def _resolve(marker: str, valid: Collection[int], max_width: int | None = None) -> tuple[list[int], int, int]:
    """Valid ids of one marker, how many ids it named that do not resolve, and how many ranges were wider
    than ``max_width`` (dropped whole)."""
    kept: list[int] = []
    invalid = wide = 0
    for part in re.split(r"[,;]", marker.strip("[] \t")):
        part = part.strip()
        found = _RANGE_RE.match(part)
        if found:
            low, high = int(found.group(1)), int(found.group(2))
            if max_width is not None and not 0 <= high - low < max_width:
                wide += 1
                continue
            invalid += (low not in valid) + (high not in valid)
            kept.extend(sorted(i for i in valid if low <= i <= high))
        elif part.isdigit():
            if int(part) in valid:
                kept.append(int(part))
            else:
                invalid += 1
    return list(dict.fromkeys(kept)), invalid, wide


def _clean_markers(
    text: str, valid: Collection[int], check: CitationCheck, max_width: int | None = None
) -> tuple[str, list[int]]:
    """Rewrite every marker to its valid ids; returns the text and the ids kept.

    A removed marker takes the blanks before it along (``common [9].`` becomes ``common.``) unless a
    kept marker follows (``work [9][2]`` becomes ``work [2]``). Removal repeats until nothing changes,
    so brackets that meet after a removal cannot form a new marker.
    """

    def rewrite(match: re.Match[str]) -> str:
        kept, invalid, wide = _resolve(match.group(0), valid, max_width)
        check.invalid_ids += invalid
        check.ranges_dropped += wide
        return "".join(f"[{i}]" for i in kept) or _REMOVED

    previous = None
    cleaned = text.replace(_REMOVED, "")
    while cleaned != previous:
        previous = cleaned
        cleaned = CITATION_RE.sub(rewrite, cleaned)
        cleaned = re.sub(rf"[ \t]*{_REMOVED}+(?![\[{_REMOVED}])", "", cleaned).replace(_REMOVED, "")
    ids = [i for m in CITATION_RE.finditer(cleaned) for i in _resolve(m.group(0), valid, max_width)[0]]
    return cleaned.strip(), list(dict.fromkeys(ids))


def _is_structural(line: str) -> bool:
    bare = CITATION_RE.sub("", line).strip()
    return (
        not re.search(r"[A-Za-z0-9]", bare)
        or bool(_HEADING_RE.match(line))
        or bool(_RULE_RE.match(line))
        or bool(_BOLD_LINE_RE.match(bare))
        or (bare.endswith(":") and len(split_sentences(bare)) == 1)
    )


def _exempt_phrase(sentence: str) -> str | None:
    """The canonical unknown / insufficient phrase when the sentence is one of them, else None."""
    bare = re.sub(r"\s+", " ", CITATION_RE.sub("", sentence)).strip().lower().rstrip(" .")
    return _EXEMPT.get(bare)


def _keep_supported(
    sentence: str, ids: list[int], supports: Supports, check: CitationCheck
) -> tuple[str, list[int]]:
    """The sentence with only the citations whose passage supports it, and those ids."""
    bare = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s+", " ", CITATION_RE.sub("", sentence))).strip()
    bare = VERDICT_OPENING.sub("", bare)  # "Yes: …" is supported as "…" is
    kept = []
    for i in ids:
        found = supports(bare, i)
        if isinstance(found, SupportMatch):
            check.claims.append(ClaimCheck(**found.model_dump(), claim=bare, id=i))
            found = found.supported
        if found:
            kept.append(i)
    check.supported += len(kept)
    check.removed += len(ids) - len(kept)
    if len(kept) == len(ids):
        return sentence, ids
    if not kept:
        check.unsupported_sentences += 1
    return _clean_markers(sentence, frozenset(kept), CitationCheck())


def check_citations(
    text: str,
    valid_ids: Collection[int],
    policy: Policy = "replace",
    *,
    max_range_width: int | None = None,
    supports: Supports | None = None,
) -> tuple[str, CitationCheck]:
    """Remove unresolved and unsupported citations, and repair or drop sentences left without one (rules in
    the module doc)."""
    valid = frozenset(valid_ids)
    check = CitationCheck()
    cited: set[int] = set()
    out_lines: list[str] = []
    factual_left = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            out_lines.append("")
            continue
        if _is_structural(line):
            cleaned, ids = _clean_markers(line, valid, check, max_range_width)
            cited.update(ids)
            out_lines.append(cleaned)
            continue
        prefix_match = _LIST_MARKER_RE.match(line)
        prefix = prefix_match.group(1).lstrip() if prefix_match else ""
        body = line[prefix_match.end() :] if prefix_match else line
        body = _AFTER_STOP_RE.sub(lambda m: " " + m.group(2).strip() + m.group(1), body)
        kept: list[str] = []
        for sentence in split_sentences(body):
            cleaned, ids = _clean_markers(sentence, valid, check, max_range_width)
            cleaned = _LEADING_STOPS_RE.sub("", cleaned)
            if not re.search(r"[A-Za-z0-9]", CITATION_RE.sub("", cleaned)):
                continue  # a stray marker or punctuation: nothing to say or check
            check.sentences += 1
            phrase = _exempt_phrase(cleaned)
            if not phrase and ids and supports is not None:
                cleaned, ids = _keep_supported(cleaned, ids, supports, check)
            if phrase:
                kept.append(phrase)
            elif ids:
                check.cited += 1
                cited.update(ids)
                kept.append(cleaned)
            elif policy == "drop":
                check.dropped += 1
            else:
                check.repaired += 1
                kept.append(UNKNOWN)
        kept = [s for i, s in enumerate(kept) if not (s == UNKNOWN and i and kept[i - 1] == UNKNOWN)]
        if kept:
            out_lines.append(prefix + " ".join(kept))
            # what is left may read as a label ("Stroke [1] :"): it then counts as structure, as it will
            # when the text is checked again
            factual_left = factual_left or not _is_structural(out_lines[-1])
    clean = re.sub(r"\n{3,}", "\n\n", "\n".join(out_lines)).strip()
    if not factual_left:
        clean = f"{clean}\n\n{UNKNOWN}".strip() if clean else UNKNOWN
    check.cited_ids = sorted(cited)
    return clean, check


def unresolved_citations(text: str, valid_ids: Collection[int]) -> list[str]:
    """Markers in ``text`` naming any id outside ``valid_ids`` (empty for checked text)."""
    valid = frozenset(valid_ids)
    return [m.group(0) for m in CITATION_RE.finditer(text) if _resolve(m.group(0), valid)[1]]
