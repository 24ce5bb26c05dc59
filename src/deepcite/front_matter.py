"""Questions a source's front matter answers: who wrote it, gave it or supervised it, when it was published or
dated, which course, team or institution it belongs to. Its title page, byline or first slide tells these, not
its prose, so the research brings each leading document's first passage (:mod:`deepcite.research`) and the
writer lets a front-matter sentence open the answer (:mod:`deepcite.answer.question_fit`).

    asks_about_source("Who wrote the report?")                           # True
    asks_about_source("Which course was this project done for?")          # True
    asks_about_source("Who gave the order to attack?")                    # False
"""

from __future__ import annotations

import re

# what a reader calls the source they are reading ("this talk", "the report")
_WORK = (
    r"(?:talk|presentation|lecture|seminar|keynote|course|class|module|webinar|workshop|tutorial|slides|deck|"
    r"report|paper|study|thesis|dissertation|project|work|document|section|handbook|guide|book|article|"
    r"proposal|assignment|white ?paper)"
)
# a body a source is done for or by ("Which training programme is the project part of?")
_BODY = (
    r"(?:university|institution|organi[sz]ation|company|department|school|course|class|programme|program|"
    r"team|group|lab|laboratory|agency|firm|conference|journal|unit)"
)
# what ties a body to the source ("was this project", "gave this talk", "done for the course")
_DID = r"(?:is|was|are|were|gave|give|gives|presented|wrote|prepared|ran|run|runs|did|made|for|by|behind)"
_ABOUT_SOURCE = re.compile(
    r"\b(?:who|which \w+)\s+(?:wrote|authored|published|posted|created|edited)\b|\bauthors?\s+of\b|"
    r"\bwritten by\b|\bwhen was\b[^?]*\b(?:published|posted|written|released|issued|dated|updated)\b|"
    r"\b(?:publication|release) date\b|\bdate of (?:publication|release)\b|"
    rf"\bwhen is\b[^?]*\b{_WORK}\s+dated\b|"
    # a talk's speaker, a course's teacher, a project's supervisor, and when it was given or handed in
    r"\bwho\s+(?:gave|gives|presented|delivered|taught|teaches|supervised|supervises|advised|advises|"
    rf"prepared|commissioned|funded|sponsored)\s+(?:this|the|these)\s+(?:\w+\s+)?{_WORK}\b|"
    r"\bwho\s+(?:supervised|advised|advises)\b|\bwho\s+(?:is|are|was|were)\s+on\s+the\s+(?:\w+\s+)?team\b|"
    r"\bwhen was\b[^?]*\b(?:given|held|presented|submitted|handed in)\b|"
    # where its authors or speaker work ("Which institution are the study's authors from?"), and what it was
    # done for or by ("Which course was this project done for?", "Which team gave this talk?")
    rf"\b(?:which|what)\s+(?:\w+\s+)?{_BODY}\b[^?]*\b(?:authors?|speaker|presenter|writer)\b|"
    rf"\b(?:which|what)\s+(?:\w+\s+)?{_BODY}\b[^?]*\b{_DID}\s+(?:this|the)\s+(?:\w+\s+)?{_WORK}\b",
    re.I,
)


def asks_about_source(question: str) -> bool:
    """Whether ``question`` asks what the source's front matter tells: who wrote, gave or supervised it, when it
    was published or dated, which course, team or institution it was done for or by."""
    return bool(_ABOUT_SOURCE.search(question))
