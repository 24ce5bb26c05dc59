"""What an evidence sentence does: report a finding, or set out background, an aim or a method.

deepcite's idea here: a reader of an abstract answers from its results and conclusions, not from its
aims. A sentence's role comes from its source's section label when there is one ("RESULTS",
"MATERIALS AND METHODS", or a label glued inside the text such as "AIM: To test …"); its *finding score*
in [0, 1] starts from that role's prior (:class:`deepcite.config.AnswerSettings` ``findings.prior_*``) and
moves with what the sentence itself says: effects, comparisons, associations, p-values, OR/HR/CI and
numbers with their measures raise it (``findings.cue_bonus`` per kind of cue, up to
``findings.cue_cap``); an aim ("To determine whether …") or a method ("Patients were randomised …") lowers
it (``findings.aim_penalty``, ``findings.method_penalty``).

    role_of_section("PATIENTS AND METHODS")     # SentenceRole.METHOD
    finding_score("Warfarin reduced stroke by 64% (95% CI 49-74).", None, settings)   # close to 1
"""

from __future__ import annotations

import re
from enum import StrEnum

from deepcite.config import AnswerSettings


class SentenceRole(StrEnum):
    """What a sentence (or the section it comes from) does in its source."""

    FINDING = "finding"  # results, conclusions
    AIM = "aim"  # objective, purpose, hypothesis
    BACKGROUND = "background"
    METHOD = "method"  # design, setting, participants, measures
    UNKNOWN = "unknown"  # no label, or one that says nothing about the role


# section-label words by role, checked in this order ("METHODS AND RESULTS" is a finding section,
# "BACKGROUND AND PURPOSE" an aim)
_LABEL_ROLES: tuple[tuple[SentenceRole, re.Pattern[str]], ...] = (
    (SentenceRole.FINDING, re.compile(r"RESULT|FINDING|CONCLU|DISCUSSION|INTERPRETATION|SUMMARY$")),
    (SentenceRole.AIM, re.compile(r"OBJECT|AIM|PURPOSE|GOAL|HYPOTHES|QUESTION")),
    (SentenceRole.BACKGROUND, re.compile(r"BACKGROUND|INTRODUCTION|CONTEXT|RATIONALE")),
    (
        SentenceRole.METHOD,
        re.compile(
            r"METHOD|DESIGN|SETTING|PATIENT|PARTICIPANT|SUBJECT|MATERIAL|MEASURE|INTERVENTION|POPULATION|"
            r"DATA|OUTCOME|STUDY|CASE|SELECTION|LIMITATION|PROCEDURE|SAMPLE"
        ),
    ),
)
# a label at the start of a sentence: "AIM: To test …", "RESULTS - Mortality …", "STUDY DESIGN/ …"
INLINE_LABEL = re.compile(r"^([A-Z][A-Z&,/ -]{1,40}?)\s*[:/-]\s+(?=\S)")
# a fragment that is only a label ("STUDY DESIGN/", "MATERIALS &"): never quoted
LABEL_ONLY = re.compile(r"^[A-Z][A-Z&,/ -]*[:/&-]?$")

_FINDING_CUES: tuple[re.Pattern[str], ...] = (
    # an association, effect or comparison stated
    re.compile(
        r"\b(?:associated with|associations? (?:between|of|with)|correlat\w*|predict(?:s|ed|ive|or)|"
        r"(?:increase|decrease|reduce|improve|lower|raise|worsen|prevent)[sd]?\b|"
        r"(?:higher|lower|greater|fewer|less|more|better|worse|shorter|longer) (?:\w+ )?(?:than|in|among|rates?|risk)|"
        r"more likely|less likely|compared (?:with|to)|versus|\bvs\.?|differ(?:ed|ence)|similar (?:to|in)|"
        r"no (?:significant )?(?:difference|effect|association|change|benefit)|did not|was not|were not)",
        re.I,
    ),
    # significance and effect measures
    re.compile(
        r"(?:\bsignifican\w*|\b[pP]\s*[<=>≤≥]|\b(?:OR|HR|RR|aOR|aHR|IRR|AUC|CI)\b|odds ratio|hazard ratio|"
        r"relative risk|confidence interval)"
    ),
    # numbers with their measures
    re.compile(
        r"\d(?:[\d.,]*)\s*(?:%|percent|-?fold|mg|g/|mmol|µ|mcg|ml|mm|cm|kg|years?|months?|weeks?|days?|hours?)",
        re.I,
    ),
    # the authors stating what they found or conclude
    re.compile(
        r"\b(?:we (?:found|observed|showed|demonstrated|conclude)|(?:results?|data|findings|analysis|study) "
        r"(?:showed?|suggests?|indicated?|demonstrated?|revealed?|confirm(?:s|ed)?)|was effective|"
        r"were effective|is effective|(?:is|are|was|were) (?:a )?(?:safe|feasible|useful|effective|"
        r"an independent|independently))\b",
        re.I,
    ),
)
_AIM_CUE = re.compile(
    r"^(?:\(?[ivx]+\)\s*)?(?:to (?:determine|assess|evaluate|investigate|examine|compare|test|explore|describe|"
    r"identify|study|analy[sz]e|ascertain|establish|clarify|characteri[sz]e|estimate|measure|review|"
    r"quantify|report|validate|develop|define|elucidate|understand|address|answer|verify|see)\b|"
    r"(?:the|our|this|a)\s+(?:\w+\s+){0,3}(?:aims?|objectives?|purposes?|goals?)\b|"
    r"we (?:aimed|sought|hypothesi[sz]ed|wanted|wished|set out|intended|asked)|"
    r"(?:this|the present|the current|our) (?:study|paper|article|trial|review|report|investigation|work) "
    r"(?:aims?|aimed|was designed|is designed|investigat|examin|evaluat|assess|sought|explor|address|report|describ))",
    re.I,
)
_METHOD_CUE = re.compile(
    r"\b(?:(?:were|was) (?:randomi[sz]ed|enrolled|recruited|included|assigned|allocated|divided|selected|"
    r"collected|obtained|recorded|reviewed|followed|interviewed|administered|surveyed|stratified|matched|"
    r"identified|used|performed|calculated|defined|categori[sz]ed|classified|retrospectively|prospectively)|"
    r"we (?:retrospectively |prospectively )?(?:reviewed|enrolled|recruited|conducted|performed|used|"
    r"designed|collected|identified|searched|selected|administered)|"
    r"(?:retrospective|prospective|cross-sectional|case-control|cohort|randomi[sz]ed|observational) "
    r"(?:\w+ )?(?:study|analysis|review|trial|design)|questionnaires?|primary (?:end ?points?|outcomes?)|"
    r"secondary (?:end ?points?|outcomes?)|inclusion criteria|a total of \d+|participated)\b",
    re.I,
)


def role_of_section(label: str | None) -> SentenceRole:
    """The role of a section label (case-insensitive); ``UNKNOWN`` when there is none or it says nothing."""
    if not label:
        return SentenceRole.UNKNOWN
    upper = label.upper().strip()
    for role, pattern in _LABEL_ROLES:
        if pattern.search(upper):
            return role
    return SentenceRole.UNKNOWN


def split_inline_label(sentence: str) -> tuple[str | None, str]:
    """A label opening the sentence ("AIM: To test …") and the sentence without it."""
    m = INLINE_LABEL.match(sentence)
    if m and role_of_section(m.group(1)) is not SentenceRole.UNKNOWN:
        return m.group(1).strip(), sentence[m.end() :]
    return None, sentence


def role_prior(role: SentenceRole, settings: AnswerSettings) -> float:
    """The finding score a sentence starts from, given the role of its section."""
    return {
        SentenceRole.FINDING: settings.findings.prior_finding,
        SentenceRole.AIM: settings.findings.prior_aim,
        SentenceRole.BACKGROUND: settings.findings.prior_background,
        SentenceRole.METHOD: settings.findings.prior_method,
        SentenceRole.UNKNOWN: settings.findings.prior_unknown,
    }[role]


def finding_score(sentence: str, section: str | None, settings: AnswerSettings) -> float:
    """How much the sentence reports a finding, in [0, 1] (see the module docstring)."""
    inline, text = split_inline_label(sentence)
    score = role_prior(role_of_section(inline or section), settings)
    cues = sum(1 for pattern in _FINDING_CUES if pattern.search(text))
    score += min(cues * settings.findings.cue_bonus, settings.findings.cue_cap)
    if _AIM_CUE.search(text):
        score -= settings.findings.aim_penalty
    elif _METHOD_CUE.search(text):
        score -= settings.findings.method_penalty
    return min(1.0, max(0.0, score))


def states_an_aim(sentence: str) -> bool:
    """Whether the sentence's own words set out an aim ("The aim of this study was to …", "We sought to …")."""
    return bool(_AIM_CUE.match(split_inline_label(sentence)[1]))


def is_decisive(sentence: str) -> bool:
    """Whether the sentence states an effect, an association, a comparison or a statistical test: the
    kind of finding that decides a yes/no question."""
    return any(pattern.search(sentence) for pattern in _FINDING_CUES[:2])


# a parenthesis that holds statistics: a p-value, an interval, a ratio, a spread, a count or a percentage
_STATISTICS = re.compile(
    r"\s*[(\[](?=[^()\[\]]*(?:\b[pP]\s*[<=>≤≥]|\bCI\b|\b(?:a?OR|a?HR|RR|IRR|SD|SE|IQR|AUC)\b|±|\+/-|"
    r"\b[nN]\s*=|\d\s*%|\brange\b))[^()\[\]]*[)\]]"
)


def elide_statistics(sentence: str) -> str:
    """The sentence without its parenthesised statistics ("lower mortality (12% vs 18%, p=0.01)" reads
    "lower mortality"); a sentence that is nothing but statistics is returned as it is."""
    shorter, previous = sentence, ""
    while shorter != previous:  # inner brackets first: "(n = 18 [range 36-81])"
        previous, shorter = shorter, _STATISTICS.sub("", shorter)
    shorter = re.sub(r"\s+([.,;:!?])", r"\1", shorter).strip()
    return shorter if re.search(r"[A-Za-z]{3}", shorter) else sentence
