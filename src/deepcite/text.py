"""Tokenising, stemming and sentence splitting shared by indexing, retrieval and answering."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from functools import lru_cache

import pysbd
import Stemmer
from pysbd.lang.english import English
from pysbd.utils import TextSpan

# English stop words (the Lucene/Anserini list plus common question words), lower-case.
STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_SPLIT_INNER = re.compile(r"[-']")
# the format of what tokenize() makes of a text: stored BM25 terms of another format are read again
# (retrieval/bm25.py). 2: accents folded ("résumés" -> "resumes", was "r", "sum", "s") and Greek letters spelled
# ("λ" -> "lambda", was nothing). 3: letters with no decomposition spelled in Latin ("Đức" -> "duc", was "uc";
# "Łódź" -> "lodz", was "odz")
TOKENS_FORMAT = 3
# the blocks of combining marks (diacritics, their supplements and extensions, for symbols, half marks)
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# Latin letters NFKD leaves whole (a stroke or a ligature is no combining mark), as written without them
_UNDECOMPOSED = str.maketrans(
    {
        "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "ħ": "h", "Ħ": "H",
        "ı": "i", "ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "þ": "th", "Þ": "Th",
    }
)  # fmt: skip
# each Greek letter as its name, a word of its own (Unicode spells lambda "LAMDA")
_SPELLED = {
    code: f" {unicodedata.name(chr(code)).split()[-1].lower().replace('lamda', 'lambda')} "
    for code in range(0x391, 0x3CA)
    if unicodedata.name(chr(code), "").startswith(("GREEK CAPITAL LETTER", "GREEK SMALL LETTER"))
}


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def raw_tokens(text: str) -> list[str]:
    """Lower-cased word tokens, hyphenated words split into parts, no stemming or stop-word removal."""
    out: list[str] = []
    for tok in _TOKEN_RE.findall(text.lower()):
        out.extend(p for p in _SPLIT_INNER.split(tok) if p)
    return out


def tokenize(text: str) -> list[str]:
    """The one BM25 tokenizer: accents folded and Greek letters spelled (:func:`folded`), lower-case, split,
    drop stop words, Snowball-stem (PyStemmer)."""
    words = [t for t in raw_tokens(folded(text)) if t not in STOP_WORDS]
    return _stemmer().stemWords(words)


def folded(text: str) -> str:
    """``text`` with accents taken off its letters ("requêtes" -> "requetes") and each Greek letter spelled as a
    word ("λ = 1.1" -> " lambda  = 1.1"; a mathematical italic one too); ASCII text as it is."""
    return text if text.isascii() else accent_free(text).translate(_SPELLED)


def accent_free(text: str) -> str:
    """``text`` in compatibility decomposition (NFKD) without its combining marks, and the letters that have no
    decomposition spelled as their languages write them without one: "Māori" -> "Maori", "Đức" -> "Duc",
    "Łódź" -> "Lodz", "Ørsted" -> "Orsted", "Straße" -> "Strasse"."""
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text)).translate(_UNDECOMPOSED)


def term_counts(text: str) -> Counter[str]:
    """Stemmed term frequencies of a text."""
    return Counter(tokenize(text))


# A section label glued to the previous sentence's full stop ("…lesions.STUDY DESIGN/", "…relevant.AIM: To
# test"): PubMed abstracts flattened to one string lose the break before the label; a space puts it back.
_GLUED_LABEL = re.compile(r"(?<=[a-z0-9)\]%][.!?])(?=[A-Z][A-Z&/ -]{2,}?(?:[:/&-]|\s[A-Z]|$))")
_ONLY_PARENTHESIS = re.compile(r"^\([^()]*\)$")
_SPACES = re.compile(r"\s*")
_NO_WORD = re.compile(r"^\W+$")  # a piece of punctuation alone belongs to the sentence before it
# text that ends a sentence: closing punctuation, then perhaps quotes, brackets or a citation mark
SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]\[\d]*\s*$")
# a piece pysbd starts at a list marker ("1) ", "(b) ", "(iv) ", "2. "): it numbers "1) … 2) …" as a list
# wherever it finds one, inside a parenthesis too ("without (Group 1) or with (Group 2) ablation")
_LIST_ITEM = re.compile(r"^(?:\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})\)|\d{1,2}\.)\s")
_SPLIT_CACHE_SIZE = 16_384  # distinct texts whose sentences are kept (chunks are split again at answer time)
# a list's bullet as extracted text writes it: the bullet characters, their symbol-font twins in Unicode's
# private use area (Wingdings/Symbol: ▪ , • , ● , ■ , ➢ , ✓ , ❖ , ☐ ), and the "o" a word
# processor sets before a second-level item, and a checklist's boxes and the outline shapes a document editor
# sets before its second and third levels (Google Docs: ●, ○, ■; □ before a checklist's item); an item starts
# after it with a letter or a quotation mark
_BULLET_GLYPHS = "•●▪◦■❖➢‣⁃▸►□☐❑❒◻○◆➤\uf0a7\uf0b7\uf06c\uf06e\uf0d8\uf0fc\uf076\uf0f0"
_BULLET = re.compile(rf"(?:(?<!\S)[{_BULLET_GLYPHS}]|(?<!\S)o(?=\s+[A-Z]))\s+(?=[A-Za-z\"“‘(])")
_WORD = re.compile(r"\w")
# the most words of a lead-in that keeps a list's first item with it (a label, "Key questions", "Checklist"): a
# longer run before a list's first glyph bullet is a line of its own (a page's running head, a closing
# parenthesis), not the item's lead-in
_LEAD_IN_MAX_WORDS = 4
# a symbol-font glyph or a bullet opening a sentence is no word of it (an arrow "" before "may start …")
_LEADING_GLYPHS = re.compile(rf"^(?:[{_BULLET_GLYPHS}\uf000-\uf0ff]\s+|o\s+(?=[A-Z]))+")


_THREAD = threading.local()


class _AbbreviationReplacer(English.AbbreviationReplacer):
    """pysbd's English abbreviation pass, without the rewrites that cannot change the text.

    pysbd 0.3.4 rewrites the whole text once for every occurrence of every abbreviation it finds at a word's
    start (" al" in " also" too), though a rewrite depends only on the occurrence's own text: the same rewrite
    again and again, most of them finding nothing. A rewrite only turns periods into pysbd's marker, never
    makes a period, and matches only at periods, so applying it to its own output changes nothing: it is
    skipped when the text is what that rewrite last returned. These rewrites were a quarter of the time of
    chunking the 19 real documents under a profiler (1.6 of 6.0 s).
    """

    def __init__(self, text: str, lang: type) -> None:
        super().__init__(text, lang)
        self._rewritten: dict[str, str] = {}  # an occurrence's text -> what its rewrite last returned

    def scan_for_replacements(self, txt: str, am: str, ind: int, char_array: list[str]) -> str:
        if self._rewritten.get(am) == txt:
            return txt
        out: str = super().scan_for_replacements(txt, am, ind, char_array)
        if ind < len(char_array):  # the rewrite depended on the occurrence's next character too
            return out
        self._rewritten[am] = out
        return out


class _English(English):
    AbbreviationReplacer = _AbbreviationReplacer


class _Segmenter(pysbd.Segmenter):
    """pysbd's English segmenter, finding each sentence in the text by string search, and skipping the
    abbreviation rewrites that cannot change the text (:class:`_AbbreviationReplacer`). pysbd 0.3.4 compiles
    a regular expression of every sentence and scans the text from its start for it: a third of an ingest's
    chunking time, and its thousands of one-off patterns push pysbd's own rules out of ``re``'s cache."""

    def __init__(self, *, char_span: bool = False) -> None:
        super().__init__(language="en", clean=False, char_span=char_span)
        self.language_module = _English

    def sentences_with_char_spans(self, sentences: list[str]) -> list[TextSpan]:
        """The spans pysbd's own method returns: for each sentence, the first of its non-overlapping
        occurrences (with the white space after it) that ends past the sentence before."""
        spans: list[TextSpan] = []
        prior_end = 0
        for sentence in sentences:
            span = _span_after(self.original_text, sentence, prior_end)
            if span is not None:
                spans.append(span)
                prior_end = span.end
        return spans


def _span_after(text: str, sentence: str, prior_end: int) -> TextSpan | None:
    if not sentence:  # pysbd's own search, whose empty matches step differently
        found = next((m for m in _SPACES.finditer(text) if m.end() > prior_end), None)
        return None if found is None else TextSpan(found.group(), found.start(), found.end())
    cursor = 0
    while (start := text.find(sentence, cursor)) >= 0:
        end = _SPACES.match(text, start + len(sentence)).end()  # type: ignore[union-attr]  # \s* always matches
        if end > prior_end:
            return TextSpan(text[start:end], start, end)
        cursor = end
    return None


def _segmenter() -> pysbd.Segmenter:
    """This thread's segmenter: a pysbd Segmenter keeps the text it is splitting on itself, so one shared by
    threads (the answer's parts are written in parallel) mixes their texts up."""
    segmenter = getattr(_THREAD, "segmenter", None)
    if segmenter is None:
        segmenter = _THREAD.segmenter = _Segmenter()
    return segmenter


@lru_cache(maxsize=_SPLIT_CACHE_SIZE)
def _sentences(text: str) -> tuple[str, ...]:
    text = _GLUED_LABEL.sub(" ", re.sub(r"\s+", " ", text).strip())
    if not text:
        return ()
    pieces = [s.strip() for s in _segmenter().segment(text) if s.strip()]
    out: list[str] = []
    for piece in pieces:
        if out and _NO_WORD.match(piece):  # pysbd cut it off the sentence it closes ("vs.." as "vs." and ".")
            out[-1] = out[-1] + piece if out[-1] + piece in text else f"{out[-1]} {piece}"
        elif out and (_ONLY_PARENTHESIS.match(out[-1]) or _continues(out[-1], piece)):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return tuple(whole[start:end] for whole in out for start, end in list_items(whole))


def list_items(sentence: str) -> list[tuple[int, int]]:
    """Where the list items a bulleted run holds lie in ``sentence`` (one ``(start, end)`` for a sentence
    without bullets): extracted text runs a list's items into one line ("… worthwhile!  Ideally the firm
    will …  Encourage …"), which the sentence splitter reads as one sentence. Each item starts after its
    bullet; the first item stays with a lead-in that ends no sentence (:func:`_leads_in`: "Important points: o
    Include …", a grid's row label before its first item), so no item is a colon-ended fragment or a label
    without its item, while a longer line before the list (a page's running head, "… doomed to fail) ● When …")
    is a unit of its own. Empty when the sentence is only bullets."""
    start = _LEADING_GLYPHS.match(sentence)
    cursor = start.end() if start else 0
    items: list[tuple[int, int]] = []
    listed = start is not None  # an item has begun: every bullet after it starts another
    for bullet in _BULLET.finditer(sentence, cursor):
        before = sentence[cursor : bullet.start()].rstrip()
        opens_list, listed = not listed, True
        if (
            opens_list
            and _WORD.search(before)
            and not SENTENCE_END.search(before)
            and _leads_in(before, bullet)
        ):
            continue  # the lead-in of the list ("Important points:", a grid's row label) keeps its first item
        if _WORD.search(before):
            items.append((cursor, cursor + len(before)))
        cursor = bullet.end()
    end = len(sentence.rstrip())
    if _WORD.search(sentence, cursor, end):
        items.append((cursor, end))
    return items


def _leads_in(before: str, bullet: re.Match[str]) -> bool:
    """Whether ``before``, the text ahead of a list's first bullet, is the list's lead-in: a line ending in a
    colon, a label of a few words, or anything before a word processor's "o" (which a glyph does not mark as a
    bullet for sure: "The value o Fahrenheit was low.")."""
    return (
        before.endswith(":")
        or len(before.split()) <= _LEAD_IN_MAX_WORDS
        or not bullet.group().startswith(tuple(_BULLET_GLYPHS))
    )


def _continues(previous: str, piece: str) -> bool:
    """Whether ``piece`` goes on with the sentence of ``previous`` though pysbd split them: pysbd starts a
    list item at every marker of a numbered run ("(Group 1) or with (Group 2)"), but an item starts a
    sentence only where the text before it ended one. (A parenthesis standing alone, "(n=12)", opens the
    sentence after it: the caller joins those.)"""
    return bool(_LIST_ITEM.match(piece)) and not SENTENCE_END.search(previous)


def first_sentence(text: str, window_chars: int) -> str:
    """The first sentence of ``text`` as :func:`split_sentences` finds it, read from the first
    ``window_chars`` characters when they already hold two whole sentences (the segmenter's cost grows with
    the text), else from the whole text."""
    if len(text) > window_chars:
        head = _sentences(text[:window_chars])
        if len(head) > 2:  # the first two are whole; only the last piece may be cut
            return head[0]
    whole = _sentences(text)
    return whole[0] if whole else ""


@lru_cache(maxsize=_SPLIT_CACHE_SIZE)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Where each sentence of :func:`split_sentences` lies in ``text``: ``(start, end)`` character offsets,
    one per sentence, so ``text[start:end]`` is the sentence as the text writes it (its own white space,
    without a section label's inserted break). The splitter collapses white space and may add a space
    before a glued label, so each sentence is found again by its words, in order, from where the last
    one ended."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for sentence in _sentences(text):
        words = sentence.split()
        found = re.compile(r"\s*".join(re.escape(w) for w in words)).search(text, cursor)
        if found is None:  # not expected: the splitter keeps every character but white space
            raise ValueError(f"sentence {sentence[:60]!r} is not in its text")
        spans.append((found.start(), found.end()))
        cursor = found.end()
    return tuple(spans)


_DOUBLE_QUOTE = re.compile(r"[\"“”„«»]")


def quoted_sentences(sentence: str) -> list[str]:
    """``sentence`` cut into the sentences its quotation marks hold: pysbd keeps a quotation whole, so a
    paragraph of dialogue ("“But Sir”, called Gregor, “I’ll open up immediately. I’m slightly unwell. …”") is one
    sentence. Each part is a slice of ``sentence``, with a quotation mark that opens or closes it; a sentence with
    no quotation mark is its own only part."""
    if not _DOUBLE_QUOTE.search(sentence):
        return [sentence]
    # the quotation marks blanked keep every offset, so the blanked text's sentence spans are the sentence's
    parts: list[str] = []
    for start, end in sentence_spans(_DOUBLE_QUOTE.sub(" ", sentence)):
        start -= start > 0 and bool(_DOUBLE_QUOTE.match(sentence[start - 1]))
        end += end < len(sentence) and bool(_DOUBLE_QUOTE.match(sentence[end]))
        parts.append(sentence[start:end])
    return parts or [sentence]


# a form's or a report's label before its value: one to three words, the first capitalised ("Median Proximity: ")
_LABEL = re.compile(r"(?<!\S)[A-Z][\w./-]*(?:\s[A-Za-z][\w./-]*){0,2}:\s")


def labelled_parts(sentence: str, min_labels: int, min_terms: int) -> list[str]:
    """``sentence`` cut before each of its labels when it runs at least ``min_labels`` label–value pairs together
    ("Skewed: Mildly skewed right Outliers: None Gap: None" -> "Skewed: Mildly skewed right", "Outliers: None Gap:
    None"), each part a slice of ``sentence``; a pair of fewer than ``min_terms`` terms, too short to quote, stays
    with the one after it. A table row (cells joined by " | ") or a sentence with fewer labels is its own only
    part; ``min_labels`` 0 turns the cut off."""
    starts: list[int] = []
    end = -1
    for m in _LABEL.finditer(sentence):
        start = m.start()
        if start == end:  # "Outliers: None Gap: None": a value has a word at least, "None" is Outliers' own
            start = sentence.index(" ", start) + 1
        starts.append(start)
        end = m.end()
    if not min_labels or len(starts) < min_labels or " | " in sentence:
        return [sentence]
    parts: list[str] = []
    begin = 0
    for cut in [*[a for a in starts if a > 0], len(sentence)]:
        if len(tokenize(sentence[begin:cut])) >= min_terms or cut == len(sentence):
            parts.append(sentence[begin:cut].strip())
            begin = cut
    return [p for p in parts if p]


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences with pysbd's rules (abbreviations, decimals, "et al.", "vs.", "e.g."),
    after a pre-pass that separates section labels glued to a full stop; citation markers such as
    ``[3]`` stay with their sentence. Chosen by measuring (``benchmarks/sentence_splitters.py``)."""
    return list(_sentences(text))
