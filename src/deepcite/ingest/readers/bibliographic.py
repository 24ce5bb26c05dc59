"""What a document says about itself: title, authors, year, venue or publisher, as its front matter states them.

The readers fill :class:`Bibliographic` from the file's own metadata (PDF info, DOCX/PPTX core properties,
HTML meta tags and JSON-LD, EPUB OPF) and its first page; a field the document does not state stays blank,
never guessed:

- a title that is a file name (``glxz-10k_20211231.htm``) or a placeholder (``Slide 1``, ``Untitled``) is no
  title; an author that is a machine's account (``Windows User``) is no author;
- a year is one the document states for itself: a dated proceedings or copyright line, an arXiv stamp, a
  date line of its own in the front matter, or a date field of its metadata; never a file's creation date on
  its own, and never a year found somewhere in the text.

    names = author_names("Kyle Lo†∗ Lucy Lu Wang†∗ Mark Neumann†")  # ['Kyle Lo', 'Lucy Lu Wang', 'Mark Neumann']
    stated_year("Proceedings of ACL, pages 4969–4983 July 5 - 10, 2020. c 2020 ACL")  # 2020
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

_FILE_NAME = re.compile(r"^[\w.+-]+\.(?:html?|xhtml|pdf|docx?|pptx?|epub|txt|md|json|xml)$", re.I)
_PLACEHOLDER = re.compile(
    r"^(?:slide \d+|untitled(?: document)?|document\d*|presentation\d*|microsoft word - .*|page \d+(?: of \d+)?"
    r"|(?:doi:\s*)?10\.\d{4,9}/\S+|[\w.-]*_[\w.-]*"  # a page number, a DOI, a file name ("FedRAMP_OSCAL_Vendor")
    r"|abstract|(?:table of )?contents|introduction|summary|overview|preface|index)$",  # a section's heading
    re.I,
)
_ACCOUNTS = frozenset(
    {"windows user", "microsoft office user", "user", "admin", "administrator", "author", "unknown"}
)
_ACCOUNT_SUFFIX = re.compile(
    r"\s+-\s+[a-z0-9]{1,8}$"
)  # a login after the name: "United States Copyright Office - jmf"
_NAME_SUFFIXES = frozenset(
    {"inc", "ltd", "llc", "plc", "corp", "co", "jr", "sr", "ii", "iii", "iv", "phd", "md"}
)
_YEAR = r"((?:19|20)\d\d)"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+"
_DATE = rf"(?:{_MONTH}\s+(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{{1,2}})?,?\s+)?|\d{{1,2}}\s+{_MONTH}\s+){_YEAR}"
# a copyright line: its year after the mark ("© 2020", "Copyright, 1916"), maybe after the holder ("© Copyright IBM
# Corp. 2014"); a range or a list ("© 2002-2007", "© 2008–2019, 2021, 2022"): its last
_COPYRIGHT_YEAR = (
    rf"(?:©|&copy;|\(c\)|copyright)[\s,]*(?:copyright\s+)?(?-i:[A-Z][\w.&]*,?\s+){{0,4}}?"
    rf"(?:(?:19|20)\d\d\s*[-–,]\s*)*{_YEAR}\b"
)
# a line of the front matter that dates the document: proceedings, copyright, arXiv stamp, a journal's citation
# line ("Journal of Hydrology 310 (2005) 253–265"), a date line ("Thursday, August 6, 2020", "January 2020 -
# MyDevSecOps", "Last Updated: Nov. 12, 2020")
_STATED_YEAR = (
    re.compile(rf"\bproceedings\b.*?\b{_YEAR}\b", re.I),
    re.compile(rf"{_COPYRIGHT_YEAR}|\bc\s(?:(?:19|20)\d\d\s*[-–]\s*)?{_YEAR}\b", re.I),
    re.compile(rf"\barxiv:\s*\d{{4}}\.\d{{4,5}}(?:v\d+)?.*?\b\d{{1,2}}\s+{_MONTH}\s+{_YEAR}\b", re.I),
    re.compile(rf"^[A-Z][A-Za-z &]+\s\d{{1,4}}\s\({_YEAR}\)\s\d+\s*[-–]\s*\d+\s*$"),
    re.compile(
        rf"^\s*(?:(?:last\s+)?(?:updated|revised|published|issued|released|dated?)\s*:?\s*)?(?:{_WEEKDAY})?{_DATE}"
        rf"\s*(?:\.|\s[-–|·]\s.*)?\s*$",
        re.I,
    ),
)
_COPYRIGHT = re.compile(_COPYRIGHT_YEAR, re.I)
_VENUE = re.compile(r"\b(Proceedings of (?:the )?[^,\n]{8,160}?)(?:,|\s+pages\b|\s+\d|$)", re.I)
# the marks that tie an author to an affiliation: symbols, digits, Greek letters, superscript letters
NAME_MARKS = re.compile(r"[∗*†‡§¶‖♠♢♡♣♦♥⋆★#\d\u0391-\u03c9\u02b0-\u02ff\u2070-\u209f˘]+")
AFFILIATION = re.compile(
    r"@|https?://|www\.|\b(?:universit\w*|institut\w*|college|school|department|dept|laborator\w*|lab|labs|"
    r"research|inc|ltd|corp\w*|foundation|centre|center|hospital|faculty|academy|abstract|résumé|introduction)\b",
    re.I,
)
# a byline's tokens: words (letters, apostrophes, dots, hyphens; "Passel24" is "Passel" and "24"), "&", ","
_BYLINE_TOKEN = re.compile(r"[^\W\d_](?:[^\W\d_]|['’.-])*|[&,]|\S")
_BYLINE_WORD = re.compile(
    r"^(?:[A-ZÀ-ÖØ-Þ][^\W\d_]+(?:['’-][^\W\d_]+)*\.?|[A-Z]\.(?:[A-Z]\.)*|de|van|von|der|da|di|le|la)$"
)
# the words that follow a name in a byline: a role, an action, a link's label
_ROLE_WORDS = frozenset(
    "editor edited senior principal staff lead chief associate assistant contributing contributor reporter "
    "correspondent writer columnist researcher engineer scientist director manager professor fellow analyst "
    "author posted published updated view follow profile on at in for from with rss email twitter".split()
)
_NAME = re.compile(r"^[A-Z][\w'’.-]*(?:\s+[A-Za-z][\w'’.-]*){1,4}$")  # two to five words


@dataclass
class Bibliographic:
    """A document's title, authors, year, and venue or publisher, as far as it states them ("" / [] / None)."""

    title: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str = ""

    def merged(self, other: Bibliographic) -> Bibliographic:
        """This record with ``other``'s fields where this one is blank."""
        return Bibliographic(
            title=self.title or other.title,
            authors=self.authors or other.authors,
            year=self.year or other.year,
            venue=self.venue or other.venue,
        )


def real_title(title: str | None) -> str:
    """``title`` with white space collapsed, or "" when it is a file name, a placeholder or a section's heading
    ('Abstract¶', the first heading of a page whose title is in its ``<title>``)."""
    text = " ".join((title or "").split()).removesuffix("¶").rstrip()  # a heading's permalink mark
    return "" if _FILE_NAME.match(text) or _PLACEHOLDER.match(text) else text


def given_first(name: str) -> str:
    """A name a metadata field writes surname first ('Tiruveedhi, Charan', 'Jong, Michiel de') as it is
    printed ('Charan Tiruveedhi'); other names ('Google, Inc.', 'Smith, Jr.', 'A, B, C') as they are."""
    surname, comma, given = name.partition(",")
    words = (surname.split(), given.split())
    if not comma or "," in given or given.strip(" .").lower() in _NAME_SUFFIXES:
        return name
    return f"{given.strip()} {surname.strip()}" if all(1 <= len(w) <= 3 for w in words) else name


def real_authors(names: Iterable[str]) -> list[str]:
    """The names that are people or organisations: no account names, web addresses or blanks; each once, given
    name first."""
    kept: list[str] = []
    for name in names:
        name = given_first(_ACCOUNT_SUFFIX.sub("", " ".join(name.split())).strip(" ,;"))
        if (
            name
            and name.lower() not in _ACCOUNTS
            and not re.search(r"https?://|www\.", name)
            and name not in kept
        ):
            kept.append(name)
    return kept


def names_among(some: list[str], names: list[str]) -> bool:
    """Whether every name of ``some`` is one of ``names`` (case and white space aside)."""
    listed = {" ".join(n.lower().split()) for n in names}
    return all(" ".join(n.lower().split()) in listed for n in some)


def year_of(date: str | None) -> int | None:
    """The year of a date written by a metadata field (``2021-03-04``, ``D:20200502…``, ``March 2021``)."""
    date = date or ""
    found = re.match(rf"D:{_YEAR}", date) or re.search(rf"(?<!\d){_YEAR}(?!\d)", date[:40])
    return int(found.group(1)) if found else None


def stated_year(front: str) -> int | None:
    """The year the front matter (a first page, a cover) dates the document by (module docstring), or None."""
    for pattern in _STATED_YEAR:
        for line in front.splitlines():
            found = pattern.search(line)
            if found:
                return int(next(g for g in found.groups() if g))
    return None


def copyright_line_year(text: str) -> int | None:
    """The year of the last copyright line of ``text`` ('Copyright © 2017 Google, Inc.', '© 2002-2007 …': its
    end), or None: a page that dates itself nowhere else is dated by its own copyright."""
    found = [y for y in _COPYRIGHT.findall(text) if y]
    return int(found[-1]) if found else None


def stated_venue(front: str) -> str:
    """The proceedings a first page names ("Proceedings of the 58th Annual Meeting of the ACL"), or ""."""
    found = _VENUE.search(" ".join(front.split()))
    return found.group(1).strip() if found else ""


def author_names(line: str) -> list[str]:
    """The names on an author line: split at commas, "and" and affiliation marks, the marks dropped."""
    parts = re.split(r",|;|\band\b|&|\s{2,}", NAME_MARKS.sub(",", line))
    return [p for p in (" ".join(part.split()) for part in parts) if _NAME.match(p)]


def byline_names(byline: str) -> list[str]:
    """The names a byline gives, without the words around them: 'Posted by Alon Zakai.', 'By Jens Manuel
    Krogstad and Jeffrey S. Passel24 comments', 'Chi Wang Principal Researcher at Microsoft Research', 'Written by
    Rob Ewaschuk Edited by Betsy Beyer', 'View all posts by Daniel Lemire' (the names after the last "by" before
    them, each two to four capitalised words, up to the first word of a role or anything else)."""
    text = " ".join(byline.split())
    by = list(re.finditer(r"\bby\s+(?=[A-Z])", text, re.I))
    if by:
        text = text[by[0].end() :]
    names: list[str] = []
    current: list[str] = []
    for token in _BYLINE_TOKEN.findall(text):
        if token.lower() in ("and", "&", ","):
            if not current:
                break
            names.append(" ".join(current))
            current = []
            continue
        if not _BYLINE_WORD.match(token) or token.lower().strip(".") in _ROLE_WORDS or len(current) == 4:
            break
        current.append(token)
    names.append(" ".join(current))
    people = [n.rstrip(".") if len(n.rsplit(" ", 1)[-1]) > 2 else n for n in names if len(n.split()) >= 2]
    return real_authors(people)


def front_authors(lines: Sequence[str], most_lines: int = 10) -> list[str]:
    """The authors on the lines right after a title: the names on the lines up to the first affiliation,
    address, date or heading line (at most ``most_lines`` lines; a line break separates names too); [] when
    those lines are not names but prose."""
    kept: list[str] = []
    for line in lines[:most_lines]:
        if AFFILIATION.search(line) or stated_year(line):
            break
        kept.append(line)
    text = ",".join(kept)
    names = author_names(text)
    words = len(re.findall(r"[^\W\d_]+", NAME_MARKS.sub(" ", text)))
    if not names or sum(len(n.split()) for n in names) < 0.6 * words:
        return []  # prose, not a list of names
    return real_authors(names)


def authors_after(text: str, title: str) -> list[str]:
    """The authors a page lists under ``title`` (:func:`front_authors` of the lines after its last words), or
    [] when the title is not found in ``text``."""
    words = re.findall(r"\w+", title)[-3:]
    found = re.search(r"\W+".join(map(re.escape, words)), text) if words else None
    return front_authors(text[found.end() :].splitlines()[1:]) if found else []
