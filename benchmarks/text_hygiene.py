"""Text hygiene of the chunks deepcite makes from real documents: markup, escapes, markers and fused numbers.

    .venv/bin/python benchmarks/text_hygiene.py --files ../shared/datasets/real_docs/files

Every file of ``--files`` is read and chunked as an ingest does (:func:`deepcite.ingest.readers.read_file`,
:func:`deepcite.ingest.chunker.chunk_reads`, default settings), and each chunk is checked for:

- ``html_tag``: an HTML tag left in the text (``<sup>``, ``</p>``): an HTML element's name in angle
  brackets; a document's own placeholder in angle brackets ("<user query, paper>", "<your name>") is not one;
- ``markdown``: a Markdown escape (``\\[``, ``\\*``), a heading's hashes (``# Heading``, at the start of a
  sentence or line, where Markdown sets them; "# papers" as a table's column header is the document's) or a
  Markdown table's pipes (a sentence that opens or closes on ``|``, or a ``|---|`` rule; deepcite's own table
  rows join their cells with `` | `` inside a line and are not counted, nor is a formula's pair of bars
  around one expression, "|Csumm|");
- ``edit_link``: a wiki's ``[edit]``;
- ``footnote_marker``: a bracketed note number glued to the word or punctuation before it (``1965.[1]``,
  ``flag[a]``); a citation written with a space in running text ("as in [12]") is the author's and is not
  counted;
- ``fused_number``: a reference number glued to a word's end: a lower-case word of three letters or more,
  or a closing parenthesis, then (after optional punctuation) one to three digits and optional ranges or
  lists (``structure161``, ``(MMACE)9``, ``relationships.114–116``).

A marker or fused number inside a link, a path or an e-mail address (a token holding ``/``, ``@`` or ``_``)
is not counted. Nor is a fused number that is the document's own text rather than a reference marker: a
name whose letters the document never writes as a word of their own ("cld2", "longt5"), a literal in quotes
("“query1”"), or the title number of a code cited after it ("insider.11 U.S.C. §§ 101", "(a)(2),28 C.F.R.
§ 58.4": the number opens the citation, and the sentence splitter may cut after it, so the text that follows
the sentence in its chunk is looked at).
Sentences are checked one by one in the chunk's own segmentation; a sentence the reader labelled as not
prose (``Chunk.sentence_kinds``: heading, caption, page furniture, equation, reference entry) is kept apart:
it counts in ``labelled_flagged``, not in ``chunks_flagged``, since it is searchable but never an answer
sentence. A chunk with any flagged prose sentence is counted once per category and once in
``chunks_flagged``. The result (per file, total, and up to ``--examples`` examples per category) goes to
``benchmarks/results/text_hygiene/<date>_<short commit>.json`` (:mod:`results_path`). Target: ``chunks_flagged`` 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from collections import Counter
from pathlib import Path

from results_path import result_path

from deepcite.config import Settings
from deepcite.ingest.chunker import chunk_reads
from deepcite.ingest.readers import read_file

ANSWERABLE = {"prose", "table"}  # the sentence kinds an answer may quote (deepcite.models.ANSWER_KINDS)

_HTML_ELEMENTS = (
    "a|abbr|address|area|article|aside|audio|b|base|bdi|bdo|big|blockquote|body|br|button|canvas|caption|center|"
    "cite|code|col|colgroup|data|datalist|dd|del|details|dfn|dialog|div|dl|dt|em|embed|fieldset|figcaption|"
    "figure|font|footer|form|h[1-6]|head|header|hr|html|i|iframe|img|input|ins|kbd|label|legend|li|link|main|"
    "map|mark|math|meta|meter|nav|noscript|object|ol|optgroup|option|output|p|param|picture|pre|progress|q|rp|"
    "rt|ruby|s|samp|script|section|select|small|source|span|strike|strong|style|sub|summary|sup|svg|table|"
    "tbody|td|template|textarea|tfoot|th|thead|time|title|tr|track|tt|u|ul|var|video|wbr"
)
CHECKS: dict[str, re.Pattern[str]] = {
    "html_tag": re.compile(rf"</?(?:{_HTML_ELEMENTS})(?:\s[^<>]*)?/?>", re.IGNORECASE),
    "markdown": re.compile(
        r"\\[\[\]*_#`|()<>!-]"  # an escape
        r"|(?:^|\n)\s*#{1,6}\s+\w"  # a heading's hashes, where Markdown sets them: at a line's start
        r"|\|\s*:?-{3,}:?\s*\|"  # a table rule
    ),
    "edit_link": re.compile(r"\\?\[\s*edit\s*\\?\]", re.IGNORECASE),
    "footnote_marker": re.compile(r"(?<=[\w.,;:)\]\"'])\[(?:\d{1,3}|[a-z]|note \d+|citation needed)\]"),
    "fused_number": re.compile(r"(?:(?<![\w-])[a-z]{3,}|\))[.,;:]?\d{1,3}(?:[–,-]\d{1,3})*(?![\w.]?\w)"),
}
# a sentence that opens or closes on a pipe: a Markdown table row written as text
_PIPE_ROW = re.compile(r"^\s*\||\|\s*$")
# … unless its only two bars enclose one formula, the document's own notation (a set's size "|Csumm|",
# "| K ∪ ( cover( D) ∩ cover(A)) |"): bars against the expression, or around a mathematical operator
_NOTATION = re.compile(r"\|\S(?:[^|]*\S)?\||\|[^|]*[∪∩∈∉⊂⊆≤≥×∑=+−][^|]*\|")


_LINKISH = re.compile(r"[/@_]")
_NOT_IN_LINKS = {"footnote_marker", "fused_number"}  # "sport1/hi", "v2_data": parts of a link or a name
_LETTERS = re.compile(r"[a-z]+")
_WORDS = re.compile(r"(?<!\w)[^\W\d_]+(?!\w)")  # a word written on its own: "cld2" holds none
_QUOTED = re.compile(r"^[\"'“‘\[(].*[\"'”’\])][.,;:]?$")
_CODE_CITED = re.compile(
    r"^\d{1,3}\s*\.?\s+(?:[A-Z]\.){2,}"
)  # "11 U.S.C.", "28 C.F.R.": a code's title number


def _document_text(match: re.Match[str], sentence: str, after: str, token: str, words: set[str]) -> bool:
    """Whether a fused number is the document's own text, not a reference marker (see the module docstring)."""
    if _QUOTED.match(token):
        return True  # a literal: “query1”
    letters = _LETTERS.match(match.group(0))
    if letters and letters.group(0) not in words:
        return True  # a name: cld2, longt5
    digits = re.search(r"\d", match.group(0))
    start = match.start() + (digits.start() if digits else 0)
    return bool(_CODE_CITED.match((sentence[start:] + " " + after).strip()))


def problems(sentence: str, after: str = "", words: set[str] | None = None) -> dict[str, str]:
    """The categories ``sentence`` fails, each with the first offending excerpt; ``after`` is the text that
    follows it in its chunk, ``words`` the words the document writes on their own (lower case)."""
    found: dict[str, str] = {}
    for name, pattern in CHECKS.items():
        for match in pattern.finditer(sentence):
            start = sentence.rfind(" ", 0, match.start()) + 1
            end = sentence.find(" ", match.end())
            token = sentence[start : end if end >= 0 else len(sentence)]
            if name in _NOT_IN_LINKS and _LINKISH.search(token):
                continue  # a link, a path, an e-mail address
            if (
                name == "fused_number"
                and words is not None
                and _document_text(match, sentence, after, token, words)
            ):
                continue
            found[name] = sentence[max(0, match.start() - 40) : match.end() + 40]
            break
    notation = sentence.count("|") == 2 and _NOTATION.search(sentence)
    if "markdown" not in found and _PIPE_ROW.search(sentence) and not notation:
        found["markdown"] = sentence[:120]
    return found


def check_file(path: Path, settings: Settings, examples: int) -> dict[str, object]:
    result = read_file(path, doc_id=path.name, name=path.name, settings=settings.ingest)
    if result.skip:
        return {"skipped": f"{result.skip.reason}: {result.skip.message}", "chunks": 0}
    chunks = [c for cs in chunk_reads(result.documents, settings.chunker).values() for c in cs]
    words = {w.lower() for c in chunks for w in _WORDS.findall(c.text)}
    counts: Counter[str] = Counter()
    labelled: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    flagged = labelled_flagged = 0
    shown: dict[str, list[str]] = {}
    labelled_shown: dict[str, list[str]] = {}
    for chunk in chunks:
        sentence_kinds = getattr(chunk, "sentence_kinds", None) or [getattr(chunk, "kind", "prose")] * len(
            chunk.spans()
        )
        kinds.update(str(kind) for kind in sentence_kinds)
        found: dict[str, str] = {}
        found_labelled: dict[str, str] = {}
        for (_, end), sentence, kind in zip(chunk.spans(), chunk.sentences(), sentence_kinds, strict=True):
            into = found if str(kind) in ANSWERABLE else found_labelled
            after = chunk.text[end : end + 40]
            into.update({k: v for k, v in problems(sentence, after, words).items() if k not in into})
        flagged += bool(found)
        labelled_flagged += bool(found_labelled)
        for into, tally, examples_of in ((found, counts, shown), (found_labelled, labelled, labelled_shown)):
            for name, excerpt in into.items():
                tally[name] += 1
                if len(examples_of.setdefault(name, [])) < examples:
                    examples_of[name].append(excerpt)
    return {
        "chunks": len(chunks),
        "chunks_flagged": flagged,
        "by_check": {name: counts[name] for name in CHECKS},
        "examples": shown,
        "labelled_flagged": labelled_flagged,
        "labelled_by_check": {name: labelled[name] for name in CHECKS if labelled[name]},
        "labelled_examples": labelled_shown,
        "sentences_by_kind": dict(kinds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=Path, default=Path("../shared/datasets/real_docs/files"))
    parser.add_argument("--examples", type=int, default=5, help="examples kept per file and check")
    parser.add_argument("--out", type=Path, default=None, help="the result file (default: dated, in results)")
    args = parser.parse_args()
    settings = Settings()
    files = sorted(p for p in args.files.iterdir() if p.is_file())
    per_file = {}
    total: Counter[str] = Counter()
    for path in files:
        per_file[path.name] = report = check_file(path, settings, args.examples)
        total["chunks"] += report["chunks"]  # type: ignore[operator]
        total["chunks_flagged"] += report.get("chunks_flagged", 0)  # type: ignore[operator]
        total["labelled_flagged"] += report.get("labelled_flagged", 0)  # type: ignore[operator]
        for name, n in report.get("by_check", {}).items():  # type: ignore[union-attr]
            total[name] += n
        by = report.get("by_check", {})
        detail = " ".join(f"{k}={v}" for k, v in by.items() if v)  # type: ignore[union-attr]
        print(
            f"{path.name:48} chunks={report['chunks']:5} flagged={report.get('chunks_flagged', '-'):>4} {detail}"
        )
    print(
        f"{'TOTAL':48} chunks={total['chunks']:5} flagged={total['chunks_flagged']:>4} "
        + " ".join(f"{k}={total[k]}" for k in CHECKS if total[k])
    )
    out = args.out or result_path("text_hygiene")
    out.write_text(
        json.dumps(
            {
                "command": "benchmarks/text_hygiene.py --files " + str(args.files),
                "date": dt.datetime.now().isoformat(timespec="seconds"),
                "result_file": out.name,
                "total": {
                    "chunks": total["chunks"],
                    "chunks_flagged": total["chunks_flagged"],
                    "labelled_flagged": total["labelled_flagged"],
                }
                | {name: total[name] for name in CHECKS},
                "files": per_file,
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
