"""Which way a sentence answers a yes/no question: whether it denies what it says (:func:`negated`), read in its
main clause (:func:`main_clause`), and whether it answers a question "no" (:func:`opposes`).

The answer stage's decision (:mod:`deepcite.answer.decision`) reads a yes/no verdict with these; a sentence that
says something else is the case without a negation is read by :mod:`deepcite.answer.contrast`.

    negated("It is not possible to invoke it, because the user does not have the permission.")   # True
    opposes("Outliers were removed from the dataset.", "Were outliers dropped?")                  # False
"""

from __future__ import annotations

import re

from deepcite.answer.contrast import contradicts
from deepcite.answer.lead_guard import verb_like
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


def opposes(text: str, question: str) -> bool:
    """Whether ``text`` answers the yes/no ``question`` "no": it denies what the question asks (:func:`negated`,
    against the question's own negation), or says something else is the case
    (:func:`deepcite.answer.contrast.contradicts`)."""
    return negated(text, question) != negated(
        question, removal_denies=not _REMOVAL.search(question)
    ) or contradicts(text, question)
