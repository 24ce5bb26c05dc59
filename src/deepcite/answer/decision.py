"""The answer stage decides before it writes: does the evidence state what was asked, which sentence states
it, and for a yes/no question, which way.

deepcite's idea here: a reader trusts an answer whose first line answers, or says plainly that the sources do
not. The offline writer (:mod:`deepcite.answer.extractive`) chooses the summary's sentences; :func:`decide`
reads its opening sentence against the question:

- *stated* when a chosen sentence's own fit to the question (lexical and embedding, without its study's share)
  reaches ``decision.min_fit`` and, for a kind of question whose answer has a mark of its own (a number for
  "how many", a date for "when": ``decision.require_cue_for``), a chosen sentence bears it, and for an amount
  asked in a unit ("how long does it take", "how much did it cost": ``asked_units``) in that unit, and for a
  question that names a year ("Who ran IBM in 2010?") with ``decision.require_years_asked`` (off) a chosen sentence's
  passage names it, and for a question that names something ("… as a pet in Canada?") with
  ``decision.require_names_asked`` the context mentions it (:func:`names_asked`), and for a question that asks
  no verdict the evidence offers an opening strongly enough (the opening model's best score and how many sentences
  may open: ``decision.min_opening_evidence``, :func:`deepcite.answer.opening.opening_evidence`);
- else *not stated*: the summary opens with :meth:`AnswerDecision.not_stated_line` and quotes the closest
  evidence after it, marked as such;
- a yes/no question (also one comparing without offering a choice: "Is A better than B?") gets a verdict: "no" when the stating sentence is negated and the question is not (or the
  other way round), else "yes"; a chosen sentence that denies and fits nearly as well as the opening
  (``decision.denial_open_fit_ratio``) opens instead (:func:`denial_first`); "the sources disagree" when a summary
  sentence of another document (``decision.disagree_shown_only``) that fits the question almost as well
  (``decision.disagree_fit_ratio``) and as a stating sentence does (``decision.disagree_min_fit``) says the opposite.

    decision = decide(question, kind, scores, chosen, settings)
    decision.status          # AnswerStatus.STATED
    decision.verdict         # Verdict.NO
    decision.opening("It is not a public holiday [2].")   # "No: It is not a public holiday [2]."

The response carries the decision (``AnswerResult.decision``), so every surface can say which it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel

from deepcite.answer.asked_units import asked_units, counted_noun, names_counted, states_unit
from deepcite.answer.contrast import contradicts
from deepcite.answer.lead_guard import verb_like
from deepcite.answer.prompts import not_stated
from deepcite.answer.question_kind import AnswerKind, asks_yes_or_no, states_amount
from deepcite.answer.question_words import MONTH_NAMES
from deepcite.answer.sentence_scores import SentenceScores
from deepcite.config import AnswerSettings
from deepcite.text import tokenize

# a word that turns a statement into its opposite: a negation, or a verb or adjective that denies ("Switzerland
# is excluded from all comparisons" answers "Is Switzerland included?"), a removal, an exemption, a thing to
# avoid, a predicate "missing" (not "the missing prince") and a count of zero, first or last in its row ("Critical
# issues 0" answers "Did they find any critical problems?"; a formula's ", 0 Pt − 1" does not); "without" and "only"
# are left out: they qualify more often than they deny ("can be reused without impairing its efficiency"), and so
# does "zero" in a compound ("near-zero spread")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|nothing|nobody|unable|fails?\s+to|failed\s+to|"
    r"exclud(?:e|es|ed|ing)|lacks?|lacked|prohibit(?:s|ed)?|forbid(?:s|den)?|illegal|impossible|"
    r"refus(?:e|es|ed)|reject(?:s|ed)?|den(?:ies|ied)|remov(?:e|es|ed|al)|exempt(?:s|ed)?|avoid(?:s|ed)?|"
    r"(?:is|are|was|were)\s+missing|absent|(?<!-)zero(?!-)|"
    # a warning or advice against something, and keeping away from it ("Never call Wait" answers "Do they warn
    # against calling Wait?")
    r"(?:warn(?:s|ed|ing)?|advis(?:e|es|ed|ing)|caution(?:s|ed|ing)?|recommend(?:s|ed|ing)?)\s+against|"
    r"discourag(?:e|es|ed|ing)|refrain(?:s|ed|ing)?\s+from|resist(?:s|ed|ing)?\s+the\s+(?:temptation|urge)|"
    r"(?:keep|keeps|kept|stay|stays|stayed|steer|steers|steered)\s+(?:away\s+from|clear\s+of)|"
    # a state switched off ("the TACH input is disabled upon power-up", "defaults to OFF", "is turned off"), not
    # an action that could switch something off ("could … disable memory writes"), "off-the-shelf", "a trade-off"
    # nor "cut off from"
    r"(?:is|are|was|were|be|been|remains?|stays?|gets?)\s+(?:[a-z]+ly\s+)?(?:disabled|deactivated)|"
    r"(?:disabled|deactivated)\s+by\s+default|"
    r"(?:is|are|was|were|be|been|turned|switched|set|defaults?\s+to|remains?|stays?)\s+off(?![\w-])|"
    # a predicate its prefix denies ("is unsupported", "seems unnecessary", "start unchecked"), not an attribute
    # ("an undisclosed sum") nor "uniform", "under", "until"; "remains unknown" or "unclear" says the answer is not
    # known, not "no"
    r"(?:is|are|was|were|be|been|seems?|seemed|remains?|remained|stays?|stayed|starts?|started|appears?|"
    r"becomes?|became)\s+(?:[a-z]+ly\s+)?un(?!i|der|til|less)[a-z]{2,}(?:ed|able|ible|ary|ful|fe|al|ive|ant|ent))"
    r"\b|n't\b|^\s*0(?=\s+[A-Za-z])|(?<![\w.,])0\s*(?=\||$)",
    re.I,
)


# where a sentence's main clause ends: a reason, a concession, a condition, a relative clause, a qualification
# after a comma ("will still work, but they will not benefit"), a semicolon, or a clause of its own joined by
# ", and" / ", or" with its own subject ("the policy has not been released, and there have been no updates": each
# clause's negations are its own, not one count over both)
_SUBORDINATE = re.compile(
    r"[;:]|,\s+but\b|,?\s+\b(?:because|since|although|though|while|whereas|unless|until|as long as|so that|"
    r"even if|which|who|whom|if|when)\b|"
    # a relative "that" before its verb ("companies that are not …"), not "that" before a subject
    r"\s+that\s+(?=(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|may|might|must|should)\b)|"
    r",\s+(?:and|or)\s+(?=(?:there|it|they|we|he|she|this|these|those|i|you|neither|nor)\b)",
    re.I,
)
_SUBORDINATE_START = re.compile(
    r"\s*(?:because|since|although|though|while|whereas|unless|if|when|as)\b", re.I
)
_PARENTHESIS = re.compile(r"\([^()]*\)")
# a relative clause between commas inside a sentence, an aside like a parenthesis ("TEPCO, which manages the
# plant, says that no damage has been detected")
_ASIDE = re.compile(r",\s+(?:which|who|whom|whose)\b[^,;:]*,", re.I)
# a preposition ending the text before a relative pronoun: "the mechanisms by which BPA acts are not understood"
# goes on to its main verb after the relative clause, so the main clause does not end there
_PREPOSITION_END = re.compile(
    r"\b(?:by|in|of|through|on|at|for|from|with|to|under|during|after|before|about)\s*$", re.I
)
# where a leading subordinate clause ends: its comma, or the "then" of an "if … then"
_LEAD_END = re.compile(r",|\bthen\b", re.I)
# a predicate "only" restricts after its verb ("can only communicate through arguments", "has only 6% pine", "might
# only need cooldown"): nothing else holds, so it denies what a question asks of anything else; not "only just",
# nor "the only known population" or "Invite Only", which restrict no predicate
_RESTRICTED = re.compile(
    r"\b(?:can|could|may|might|must|will|would|shall|should|is|are|was|were|be|been|has|have|had|do|does|did)\s+"
    r"only\b(?!\s+just)"
    # … or ends its clause ("can be done for reference side ions only", not "Invite Only"), or a predicate held
    # exclusively ("operates exclusively under Linux")
    r"|(?<=[a-z])\s+(?-i:only)(?=\s*(?:[.!,;)]|$))|\b(?:exclusively|solely)\b",
    re.I,
)
# a question that restricts itself ("Is it assessed only / entirely by coursework?") is answered yes by one
_RESTRICTING = re.compile(r"\b(?:only|solely|merely|exclusively|entirely|just|purely)\b", re.I)
# a contrast in a main clause: "not X(,) but (instead|rather) Y"
_NOT_BUT = re.compile(
    r"\bnot\s+(?P<denied>[^,;]+?)(?P<comma>,?)\s+but\s+(?:instead\s+|rather\s+)?(?P<said>[^,;]+)", re.I
)
# a preference "Y rather than X" / "Y instead of X", or an exception "all Y except X": X is denied, as far as its
# words reach (to a comma, a dash or a sentence's end)
_RATHER_THAN = re.compile(
    r"\s+(?:rather\s+than|instead\s+of|except(?:\s+for)?)\s+(?P<denied>[^,;:.!?\u2014\u2013()]+)", re.I
)
# a label before a colon opening a sentence ("Note:", "For At-Risk Classification:") is no main clause of it: at
# most this many words, none a verb
_LABEL = re.compile(r"^\s*(?P<label>[^:;.!?]{1,60}?):\s+(?=\S)")
_LABEL_MAX_WORDS = 6
# the parts of a sentence read apart: between semicolons, and a contrast's two sides ("graphics … is only available
# on client parts, while the DRAM … is only available on server parts")
_PARTS = re.compile(r";|,\s+(?:while|whereas)\s+", re.I)

# a removal ("removed", "deleted", "dropped", "excluded"): a denial of a question about keeping, an affirmation of
# one about removing ("Were outliers dropped?" / "Outliers were removed")
_REMOVAL = re.compile(
    r"\b(?:remov(?:e|es|ed|ing|al)|delet(?:e|es|ed|ing|ion)|drop(?:s|ped|ping)?|discard(?:s|ed|ing)?|"
    r"exclu(?:de|des|ded|ding|sion)|omit(?:s|ted|ting)?|eliminat(?:e|es|ed|ing|ion))\b",
    re.I,
)
# "only" before a verb restricts its predicate ("miners only get to keep the priority fee")
_ONLY_VERB = re.compile(r"(?<!\bthe\s)(?<!\bnot\s)(?<!\bif\s)(?<!\ban\s)\bonly\s+(?P<verb>[a-z]+)\b")

_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
# a word of a question; a name is one capitalised or holding a digit, after the question's first word
_QUESTION_WORD = re.compile(r"[A-Za-z0-9][\w'\u2019.-]*[A-Za-z0-9]|[A-Za-z]")
# … and not a question word, nor a month or a day of the week ("in May 2007" names a date, not "May")
_NOT_NAMES = frozenset(
    {"I", "A", "An", "The", "What", "Which", "Who", "How", "When", "Where", "Why", "According"}
    | {m.capitalize() for m in MONTH_NAMES.split("|")}
    | {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)
# "I" in a contraction ("I'm", "I've") is no name
_CONTRACTED_I = re.compile(r"I['\u2019](?:m|ve|d|ll)")
# a name is found when the evidence holds its first letters ("American" in "North America", "Turtles")
_NAME_STEM_DROP = 3
_NAME_STEM_MIN = 4

# how a yes/no summary's first sentence opens (Verdict.label and a colon): the citation check reads the sentence
# after it
VERDICT_OPENING = re.compile(r"^(?:Yes|No|The sources disagree):\s+")


class AnswerStatus(StrEnum):
    """Whether the evidence states what was asked."""

    STATED = "stated"
    NOT_STATED = "not_stated"


class Verdict(StrEnum):
    """A yes/no question's answer as the evidence gives it."""

    YES = "yes"
    NO = "no"
    DISAGREE = "sources_disagree"

    @property
    def label(self) -> str:
        """How a summary opens with it ("Yes", "No", "The sources disagree")."""
        return {"yes": "Yes", "no": "No", "sources_disagree": "The sources disagree"}[self.value]


class AnswerDecision(BaseModel):
    """What the answer stage decided before writing (module docstring); the scores that decided it."""

    status: AnswerStatus
    kind: AnswerKind  # the kind of answer the question asks for
    sentence: str = ""  # the evidence sentence that states the answer, as quoted; "" when not stated
    cite: int | None = None  # the display id of its passage
    verdict: Verdict | None = None  # a yes/no question's, when stated
    fit: float = 0.0  # the best own fit to the question of the sentences chosen
    cue: float | None = None  # its answer-type cue, for a kind of question with one
    reason: str = ""  # why, in a reader's words

    @property
    def stated(self) -> bool:
        return self.status is AnswerStatus.STATED

    def not_stated_line(self, closest: bool = True) -> str:
        """The line a not-stated summary opens with: the closest evidence follows it (``closest``), else it is the
        whole summary."""
        said = not_stated(self.kind.asked_for)
        return f"{said}; the closest passages say:" if closest else f"{said}."

    def opening(self, cited_sentence: str) -> str:
        """The summary's first sentence: ``cited_sentence`` after the verdict, for a yes/no question."""
        if self.verdict is None:
            return cited_sentence
        return f"{self.verdict.label}: {cited_sentence}"


def negated(text: str, about: str = "", removal_denies: bool = True) -> bool:
    """Whether ``text`` denies what it says: an odd number of negations ("does not", "never", "isn't", "warns
    against") in its main clause (:func:`main_clause`): "It is not possible to invoke it, because the user does not
    have the permission" denies, though it holds two; "companies that are not concerned with journalism" is a
    relative clause, not the main one.

    - A contrast "not X but Y" affirms Y: it denies nothing of a question ``about`` Y ("Was he treated leniently?"
      over "his command did not pursue a punitive discharge but opted instead for the more lenient administrative
      discharge"), and denies X as before; with a comma only when Y is no clause of its own ("is not a threat …, but
      a liberation", not "is not forbidden, but authors should ensure …").
    - Of a sentence in parts between semicolons or either side of a contrast, the part the question is about is
      read (:func:`_asked_part`); a short label before a colon ("Note:", "For At-Risk Classification:") is not its
      main clause.
    - A preference "Y rather than X", or an exception "all Y except X", denies a question about X
      (:func:`_prefers_other`).
    - A clause without a negation whose predicate "only" restricts ("Tasks with different object-ids can only
      communicate through arguments", "… for reference side ions only", "operates exclusively under Linux", "miners
      only get to keep the priority fee") denies a question ``about`` anything else ("Can tasks with different
      object ids share data directly?"), unless the question restricts too ("… entirely by coursework?").
    - A removal ("removed", "dropped") denies unless the question ``about`` asks about one ("Were outliers
      dropped?") or ``removal_denies`` is False (the question itself, read for its own negation)."""
    part = _asked_part(text, about).replace("\u2019", "'")
    contrast = _NOT_BUT.search(part)
    asked = set(tokenize(about))
    if (
        contrast
        and about
        and len(asked & set(tokenize(contrast["said"]))) > len(asked & set(tokenize(contrast["denied"])))
        and not (contrast["comma"] and any(verb_like(w) for w in contrast["said"].split()))
    ):
        part = part[: contrast.start()] + part[contrast.start("denied") :]
    clause = main_clause(part)
    negations = _NEGATION.findall(clause)
    if not removal_denies or _REMOVAL.search(about):
        negations = [n for n in negations if not _REMOVAL.fullmatch(n)]
    if (len(negations) + _prefers_other(clause, asked)) % 2 == 1:
        return True
    return (
        bool(about)
        and (_RESTRICTED.search(clause) is not None or _only_before_verb(clause))
        and _RESTRICTING.search(about) is None
    )


def _only_before_verb(clause: str) -> bool:
    """Whether "only" restricts a verb in ``clause`` ("miners only get to keep", not "the only way")."""
    return any(verb_like(m["verb"]) for m in _ONLY_VERB.finditer(clause))


def _prefers_other(clause: str, asked: set[str]) -> bool:
    """Whether ``clause`` prefers something to what the question (its words ``asked``) is about: "The RFP should
    use a Statement of Objectives rather than a Statement of Work" denies "… describe the work with a statement of
    work?", the words after "rather than" sharing more with the question than as many words before it do."""
    preference = _RATHER_THAN.search(clause)
    if not asked or preference is None:
        return False
    denied = preference["denied"].split()
    preferred = " ".join(clause[: preference.start()].split()[-len(denied) :])
    return len(asked & set(tokenize(preference["denied"]))) > len(asked & set(tokenize(preferred)))


def _asked_part(text: str, about: str) -> str:
    """Of ``text``'s parts between semicolons or either side of a contrast (", while", ", whereas"), the one sharing
    most words with the question ``about`` (the first on ties; ``text`` itself without a question): "Milestones are
    due Friday of the milestone week; no late milestones" answers "Are late project milestones accepted?" in its
    second part, which its main clause left out."""
    parts = _PARTS.split(text)
    if not about or len(parts) < 2:
        return text
    asked = set(tokenize(about))
    return max(parts, key=lambda part: len(asked & set(tokenize(part))))


def main_clause(text: str) -> str:
    """``text`` without a leading subordinate clause ("When comparing them, …", "If you have three … then you
    can …"), a parenthesis, a relative clause between commas, and what follows a reason, a concession, a condition
    or a relative clause after its main clause (not one after a preposition: "the mechanisms by which …")."""
    text = _ASIDE.sub(" ", _PARENTHESIS.sub(" ", _without_label(text)))
    if _SUBORDINATE_START.match(text) and (lead := _LEAD_END.search(text)):
        text = text[lead.end() :]
    for end in _SUBORDINATE.finditer(text):
        if not _PREPOSITION_END.search(text, 0, end.start()):
            return text[: end.start()]
    return text


def _without_label(text: str) -> str:
    """``text`` without a label before a colon opening it: a few words without a verb ("Note:", "For At-Risk
    Classification:", "Results Statistical Calculus:"), whose colon would end the main clause before its statement."""
    label = _LABEL.match(text)
    if label is None:
        return text
    words = label["label"].split()
    if len(words) > _LABEL_MAX_WORDS or any(verb_like(w) for w in words):
        return text
    return text[label.end() :]


def names_asked(question: str) -> list[str]:
    """The names ``question`` asks about: its words after the first that are capitalised, hold a digit and a
    letter ("T5") or are a year ("in 2017"), each part of a hyphenated word apart ("NLP-powered" names "NLP"), a
    possessive's "'s" and an acronym's plural "s" off ("O'Reilly's", "PDFs")."""
    names: list[str] = []
    for word in _QUESTION_WORD.findall(question)[1:]:
        # a possessive's "'s" off, and an acronym's plural "s" ("PDFs" is found as "PDF")
        word = re.sub(r"(?<=[A-Z0-9])s$", "", re.sub(r"['\u2019]s$", "", word).rstrip("."))
        for part in word.split("-"):
            if (
                part
                and part not in _NOT_NAMES
                and not _CONTRACTED_I.fullmatch(part)
                and (
                    part[0].isupper()
                    or (re.search(r"\d", part) and re.search("[A-Za-z]", part))
                    or _YEAR.fullmatch(part)
                )
            ):
                names.append(part)
    return names


def _unmentioned(names: Sequence[str], evidence: str) -> list[str]:
    """The ``names`` that ``evidence`` (lower-case) does not mention, by their first letters."""
    return [
        name
        for name in names
        if name.lower()[: max(_NAME_STEM_MIN, len(name) - _NAME_STEM_DROP)] not in evidence
    ]


def decide(
    question: str,
    kind: AnswerKind,
    scores: SentenceScores,
    chosen: Sequence[int],
    settings: AnswerSettings,
    evidence: str = "",
    opening_evidence: float | None = None,
) -> AnswerDecision:
    """The decision for a summary that opens with ``chosen[0]`` (module docstring); ``evidence`` is the context's
    text (passages, titles, file names), for the names the question asks about; ``opening_evidence`` how strongly
    the evidence offers an opening (:func:`deepcite.answer.opening.opening_evidence`)."""
    if not chosen or scores.fit is None:
        return AnswerDecision(
            status=AnswerStatus.NOT_STATED,
            kind=kind,
            reason="no evidence sentence bears on the question",
        )
    first = chosen[0]
    fit = max(float(scores.fit[i, 0]) for i in chosen)  # a table row that leads fits less than its prose
    cue = float(scores.cue[first]) if scores.cue is not None else None
    sentence = scores.sentences[first]
    missing = _missing(question, kind, scores, chosen, fit, settings, evidence.lower(), opening_evidence)
    if missing is not None:
        return AnswerDecision(
            status=AnswerStatus.NOT_STATED, kind=kind, fit=round(fit, 3), cue=cue, reason=missing
        )
    verdict = _verdict(question, scores, chosen, settings) if asks_a_verdict(question, kind) else None
    return AnswerDecision(
        status=AnswerStatus.STATED,
        kind=kind,
        sentence=sentence.text,
        cite=sentence.cite,
        verdict=verdict,
        fit=round(fit, 3),
        cue=cue,
        reason="a sentence of the evidence states it",
    )


def _missing(
    question: str,
    kind: AnswerKind,
    scores: SentenceScores,
    chosen: Sequence[int],
    fit: float,
    settings: AnswerSettings,
    evidence: str,
    opening_evidence: float | None,
) -> str | None:
    """Why the chosen sentences do not state the answer (module docstring), or None when they do."""
    d = settings.decision
    if fit < d.min_fit:
        return f"the closest sentence fits the question {fit:.2f}, under {d.min_fit:.2f}"
    if (
        d.min_opening_evidence is not None
        and opening_evidence is not None
        and opening_evidence < d.min_opening_evidence
        and not asks_a_verdict(question, kind)
    ):
        return f"no sentence reads as its answer (opening evidence {opening_evidence:.2f}, under {d.min_opening_evidence:.2f})"
    if d.require_names_asked and evidence and (absent := _unmentioned(names_asked(question), evidence)):
        return f"no passage found mentions {', '.join(absent)}"
    texts = [scores.sentences[i].text for i in chosen]
    if (
        kind.value in d.require_cue_for
        and scores.cue is not None
        and not any(
            scores.cue[i] >= settings.kinds.cue_min
            and (kind is not AnswerKind.AMOUNT or states_amount(text, question))
            for i, text in zip(chosen, texts, strict=True)
        )
    ):
        return f"no sentence found holds {kind.asked_for}"
    noun = counted_noun(question) if kind is AnswerKind.AMOUNT and d.require_counted_noun else None
    if noun and not any(names_counted(text, noun) for text in texts):
        return f"no sentence found counts {noun}"
    units = asked_units(question) if kind is AnswerKind.AMOUNT and d.require_unit_asked else None
    if units is not None and not any(states_unit(text, units) for text in texts):
        return "no sentence found states a number in the unit asked for"
    if d.require_years_asked and (years := _years(question)):
        passages = {scores.sentences[i].cite for i in chosen}
        said = " ".join(x.text for x in scores.sentences if x.cite in passages)
        if absent := sorted(years - _years(said)):
            return f"no passage found speaks of {', '.join(absent)}"
    return None


def denial_first(
    question: str, kind: AnswerKind, scores: SentenceScores, chosen: Sequence[int], ratio: float
) -> list[int]:
    """``chosen`` for a yes/no question, with its first later sentence that says the opposite of what the question
    asks (:func:`negated`) and fits the question at least ``ratio`` of the opening's fit moved to open it: a
    sentence that denies takes a stance where an on-topic one may take none ("Do not number the pages in the
    camera-ready version." for "Should the pages of the final paper be numbered?"). Any other question, or
    ``ratio`` above 1, keeps ``chosen`` as it is."""
    order = list(chosen)
    if not asks_a_verdict(question, kind) or len(order) < 2 or scores.fit is None or ratio > 1:
        return order
    if opposes(scores.sentences[order[0]].text, question):
        return order  # the opening denies already
    bar = ratio * float(scores.fit[order[0], 0])
    for i in order[1:]:
        if opposes(scores.sentences[i].text, question) and float(scores.fit[i, 0]) >= bar:
            return [i, *(j for j in order if j != i)]
    return order


def opposes(text: str, question: str) -> bool:
    """Whether ``text`` answers the yes/no ``question`` "no": it denies what the question asks (:func:`negated`,
    against the question's own negation), or says something else is the case
    (:func:`deepcite.answer.contrast.contradicts`)."""
    return negated(text, question) != negated(
        question, removal_denies=not _REMOVAL.search(question)
    ) or contradicts(text, question)


def asks_a_verdict(question: str, kind: AnswerKind) -> bool:
    """Whether ``question`` is answered yes or no: a yes/no question, or one comparing without offering a choice."""
    return kind is AnswerKind.YES_NO or asks_yes_or_no(question)


def _years(text: str) -> set[str]:
    """The years ``text`` names ("in 2010", "the 2013 census")."""
    return set(_YEAR.findall(text))


def _verdict(
    question: str, scores: SentenceScores, chosen: Sequence[int], settings: AnswerSettings
) -> Verdict:
    """Yes or no as the stating sentence (``chosen[0]``) says it; the sources disagree when another document's
    sentence, one of the summary's ``chosen`` (``decision.disagree_shown_only``), that fits the question as well
    (``decision.disagree_fit_ratio`` of the opening's fit, and ``decision.disagree_min_fit``) says the opposite. A
    sentence without a negation reads as "yes", so the bar keeps a weak, off-topic sentence from disputing a weak
    opening."""
    first = chosen[0]
    denies = opposes(scores.sentences[first].text, question)
    d = settings.decision
    if d.disagree_fit_ratio > 0 and scores.fit is not None:
        bar = max(d.disagree_fit_ratio * float(scores.fit[first, 0]), d.disagree_min_fit)
        threshold = settings.extractive.support_threshold
        pool = chosen if d.disagree_shown_only else range(len(scores.sentences))
        for i in pool:
            x = scores.sentences[i]
            if (
                i != first
                and x.study != scores.sentences[first].study
                and float(scores.fit[i, 0]) >= bar
                and float(scores.support[i, 0]) >= threshold
                and opposes(x.text, question) != denies
            ):
                return Verdict.DISAGREE
    return Verdict.NO if denies else Verdict.YES
