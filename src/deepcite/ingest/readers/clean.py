"""Clean words for every reader: note markers out of the text, hyphenated line ends joined as the document
spells the word.

deepcite's idea: whether a hyphen at a line end is a break ("re-" + "lationships") or part of the word
("PaSa-" + "7b", "GPT-" + "4o", "state-of-the-" + "art") is read off the document itself: a word the
document also writes whole elsewhere is joined whole; one it writes with its hyphen keeps it; otherwise a
lower-case continuation is a break and anything else (a digit, a capital) keeps the hyphen. The same
vocabulary repairs a conversion's hyphens left inside words ("algo-rithm" where "algorithm" is written
elsewhere).

Usage::

    vocabulary = word_forms(lines)
    text = join_lines(["the re-", "lationships of PaSa-", "7b"], vocabulary)  # "the relationships of PaSa-7b"
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

SOFT_HYPHEN = "\x02"  # PDFium's mark for a hyphen it found at a line end
_BREAK_HYPHENS = "-\u00ad\u2010" + SOFT_HYPHEN
_WORD = re.compile(r"\w+(?:[-\u2010]\w+)*")
_LAST_WORD = re.compile(r"(\w+(?:[-\u2010]\w+)*)[" + _BREAK_HYPHENS + r"]$")
_FIRST_WORD = re.compile(r"^(\w+(?:[-\u2010]\w+)*)")
# a word hyphenated inside a line: two lower-case parts of two letters or more ("ran-dom", "algo-rithm")
_INLINE_HYPHEN = re.compile(r"\b([a-z]{2,})-([a-z]{2,})\b")
# a note marker glued to the word or punctuation before it: "1965.[1]", "plumage[2][3]", "day[a]",
# "claim[citation needed]", "History[edit]"; a bracket after a space ("as in [12]") is the author's citation
NOTE_MARKER = re.compile(
    r"(?<=[^\s\[(])(?:\[(?:\d{1,3}(?:[,–-]\d{1,3})*|[a-z]|note \d+|citation needed|edit)\])+", re.IGNORECASE
)
_EDIT_LINK = re.compile(r"\s*\[\s*edit\s*\]", re.IGNORECASE)


def word_forms(texts: Iterable[str]) -> Counter[str]:
    """How often each word form (lower-cased, inner hyphens kept) occurs in ``texts``."""
    return Counter(word.lower() for text in texts for word in _WORD.findall(text.replace(SOFT_HYPHEN, "-")))


def join_lines(lines: Iterable[str], vocabulary: Counter[str]) -> str:
    """``lines`` as one run of text: a line ending in a hyphen joins the next as :func:`hyphen_join` says,
    any other line break becomes a space."""
    text = ""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if not text:
            text = line
        elif (left := _LAST_WORD.search(text)) and (right := _FIRST_WORD.match(line)):
            text = text[: left.start()] + hyphen_join(left.group(1), right.group(1), vocabulary)
            text += line[right.end() :]
        else:
            text += " " + line
    return text.replace(SOFT_HYPHEN, "-")


def hyphen_join(left: str, right: str, vocabulary: Counter[str]) -> str:
    """The word a line-end hyphen splits into ``left`` and ``right``: whole when the document writes it
    whole at least as often as hyphenated, hyphenated when it writes it so, else whole for a lower-case
    continuation (a break) unless an acronym ends the line ("GROBID-parsed", "BERT-based"), and hyphenated
    before a digit or a capital ("PaSa-7b", "GPT-4o")."""
    whole, hyphenated = f"{left}{right}", f"{left}-{right}"
    seen_whole, seen_hyphenated = vocabulary[whole.lower()], vocabulary[hyphenated.lower()]
    if seen_whole or seen_hyphenated:
        return whole if seen_whole >= seen_hyphenated else hyphenated
    acronym = len(left) >= 2 and left.isupper()
    return whole if right[:1].islower() and not acronym else hyphenated


def repair_inline_hyphens(text: str, vocabulary: Counter[str]) -> str:
    """``text`` with hyphens a conversion left inside words removed: "algo-rithm" becomes "algorithm" when
    the document writes "algorithm" and never "algo-rithm" more often; "well-known" stays."""

    def whole(match: re.Match[str]) -> str:
        joined = match.group(1) + match.group(2)
        if vocabulary[joined] and vocabulary[joined] >= vocabulary[match.group(0)]:
            return joined
        return match.group(0)

    return _INLINE_HYPHEN.sub(whole, text)


def drop_note_markers(text: str) -> str:
    """``text`` without wiki-style note markers glued to a word ("1965.[1]" -> "1965.") or ``[edit]`` links."""
    return _EDIT_LINK.sub("", NOTE_MARKER.sub("", text))


def is_note_marker(text: str) -> bool:
    """Whether a superscript's text is a note marker ("[1]", "1", "1,2", "3–5", "a", "(1)", "*", "†")
    rather than an exponent or an ordinal's letters."""
    bare = text.strip().strip("[]()").strip()
    return bool(re.fullmatch(r"(?:\d{1,3}(?:\s*[,–-]\s*\d{1,3})*|[a-z]|[*†‡§¶]+|note \d+)?", bare))
