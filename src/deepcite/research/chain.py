"""Composed questions as an ordered chain of hops, answered offline one entity at a time.

    decompose("Who is the spouse of the performer of Green?")
    # ['performer of Green', 'Who is the spouse of #1']   (a 2-hop chain; "#1" is hop 1's answer)

A question is parsed by rules for English relational phrasings: "the R of X" ("the performer of Green"),
possessives ("Green's performer"), and relative clauses ("the city where X was born", "the Y who/that …").
The innermost phrase becomes hop 1, is replaced by the slot ``#1`` and the rest is parsed again, until no
phrase is left; what remains is the last hop. Each hop's answer entity is taken from the names in that
hop's evidence (:func:`rank_answers`) and written into the slot of the next hop (:func:`fill`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from deepcite.config import ChainSettings
from deepcite.errors import LLMError
from deepcite.llm.client import LLMClient
from deepcite.llm.json import chat_json
from deepcite.models import Candidate
from deepcite.names import names_in
from deepcite.research.entities import content_words
from deepcite.retrieval.graph.extract import entity_key
from deepcite.text import STOP_WORDS, tokenize

SLOT = re.compile(r"#(\d+)")
_TOKEN = re.compile(r"#\d+|[\"“][^\"“”]+[\"”]|[\w][\w'’.&-]*|[,;:?!()]")
_ARTICLES = frozenset(["the", "a", "an"])
_RELATIVES = frozenset(["where", "which", "that", "who", "whom", "whose"])
# words that join the parts of one name ("Bank of America", "Leonardo da Vinci", "Simon & Garfunkel")
_NAME_JOINERS = frozenset(["of", "the", "and", "&", "de", "la", "le", "von", "van", "da", "del", "du", "for"])
# words that end a relation noun phrase ("Green's performer lived …", "the band's drummer was …")
_FUNCTION = STOP_WORDS | frozenset(
    [
        "is",
        "was",
        "are",
        "were",
        "be",
        "been",
        "did",
        "does",
        "do",
        "has",
        "have",
        "had",
        "in",
        "on",
        "at",
        "of",
        "to",
        "from",
        "by",
        "with",
        "for",
        "as",
        "and",
        "or",
        "when",
        "where",
        "which",
        "that",
        "who",
        "whom",
        "whose",
        "what",
        "how",
        "born",
        "located",
    ]
)
_QUESTION_WORDS = frozenset(["what", "who", "whom", "which", "when", "where", "why", "how", "whose"])
# the verbs a "the R X …" clause opens with after its name ("the country Signmark is from")
_COPULAS = frozenset(["is", "was", "are", "were"])
_PREPOSITIONS = frozenset(["of", "from", "in", "on", "at", "to", "with", "for", "by", "into"])
_MAX_RELATION_WORDS = 3


@dataclass
class _Phrase:
    start: int  # token span [start, end)
    end: int
    text: str  # the hop's sub-question


def _join(tokens: Iterable[str]) -> str:
    return re.sub(r" ([,;:?!)])", r"\1", " ".join(tokens))


def _is_name_start(tok: str) -> bool:
    return bool(SLOT.fullmatch(tok)) or tok[:1] in '"“' or tok[:1].isupper() or tok[:1].isdigit()


def _possessor(tok: str) -> str | None:
    for tail in ("'s", "’s", "s'", "s’"):
        if tok.endswith(tail) and len(tok) > len(tail):
            return tok[: -len(tail)] + ("s" if tail.startswith("s") else "")
    return None


def _name_end(tokens: list[str], i: int) -> int:
    """The end of the name starting at ``tokens[i]`` (exclusive); ``i`` when no name starts there."""
    if i >= len(tokens) or not _is_name_start(tokens[i]):
        return i
    j = i + 1
    while j < len(tokens) and not SLOT.fullmatch(tokens[i]):
        if _is_name_start(tokens[j]) and not SLOT.fullmatch(tokens[j]):
            j += 1
            continue
        k = j
        while k < len(tokens) and (tokens[k].lower() in _NAME_JOINERS or tokens[k] == ","):
            k += 1
        if k > j and k < len(tokens) and _is_name_start(tokens[k]) and not SLOT.fullmatch(tokens[k]):
            j = k + 1
            continue
        break
    return j


def _relation_words(tokens: list[str], i: int) -> int:
    """The end of a run of 1..3 lower-case relation words starting at ``i`` (``i`` when there is none)."""
    j = i
    while j < len(tokens) and j - i < _MAX_RELATION_WORDS:
        tok = tokens[j]
        if not tok.isalpha() or not tok.islower() or (tok in _FUNCTION and j == i):
            break
        if tok in _FUNCTION or (j > i and tok.endswith("ed")):  # "Green's performer lived …"
            break
        j += 1
    return j


def _clause_end(tokens: list[str], i: int) -> int:
    """The end of a clause starting at ``i``: the next punctuation that does not sit inside a name."""
    end = i
    while end < len(tokens):
        if tokens[end] in ",;:?!()":
            inside_name = (
                tokens[end] == ","
                and end + 1 < len(tokens)
                and end > 0
                and _is_name_start(tokens[end - 1])
                and _is_name_start(tokens[end + 1])
            )
            if not inside_name:
                break
        end += 1
    return end


def _phrases(tokens: list[str]) -> list[_Phrase]:
    """Every relational phrase in the tokens whose argument is a name or a slot (an innermost candidate)."""
    out: list[_Phrase] = []
    n = len(tokens)
    for i, tok in enumerate(tokens):
        low = tok.lower()
        if low in _ARTICLES:
            rel_end = _relation_words(tokens, i + 1)
            if rel_end == i + 1:
                continue
            relation = _join(tokens[i + 1 : rel_end])
            nxt = tokens[rel_end].lower() if rel_end < n else ""
            if nxt == "of":
                arg = rel_end + 1
                if (
                    arg < n
                    and tokens[arg].lower() == "the"
                    and arg + 1 < n
                    and _is_name_start(tokens[arg + 1])
                ):
                    arg += 1
                end = _name_end(tokens, arg)
                # a name followed by a noun is a modifier ("the daughter of the English nobleman"), not the argument
                modifier = (
                    end < n
                    and tokens[end].isalpha()
                    and tokens[end].islower()
                    and tokens[end] not in _FUNCTION
                )
                if end > arg and not modifier:
                    out.append(_Phrase(i, end, f"{relation} of {' '.join(tokens[rel_end + 1 : end])}"))
            elif nxt in _RELATIVES or (nxt == "in" and rel_end + 1 < n and tokens[rel_end + 1] == "which"):
                end = _clause_end(tokens, rel_end + 1)
                # a clause that names something (a name or a slot) can be searched on its own
                if end > rel_end + 1 and any(_is_name_start(t) for t in tokens[rel_end + 1 : end]):
                    out.append(_Phrase(i, end, _join(tokens[i + 1 : end])))
            elif nxt and _is_name_start(tokens[rel_end]):  # "the country Signmark is from"
                name_end = _name_end(tokens, rel_end)
                end = _clause_end(tokens, name_end)
                # the clause ends at its preposition ("is part of", "is from"), the rest is the outer question's
                prep = next((j for j in range(name_end + 1, end) if tokens[j] in _PREPOSITIONS), None)
                end = prep + 1 if prep is not None else end
                if end > name_end and tokens[name_end] in _COPULAS:
                    out.append(_Phrase(i, end, _join(tokens[i + 1 : end])))
        elif _possessor(tok) is not None and _is_name_start(tok):
            rel_end = _relation_words(tokens, i + 1)
            if rel_end == i + 1:
                continue
            start = i
            while start > 0 and (
                _is_name_start(tokens[start - 1]) or tokens[start - 1].lower() in _NAME_JOINERS
            ):
                if tokens[start - 1].lower() in _NAME_JOINERS and not _is_name_start(
                    tokens[start - 2] if start > 1 else ""
                ):
                    break
                start -= 1
            owner = _join([*tokens[start:i], _possessor(tok) or tok])
            out.append(_Phrase(start, rel_end, f"{' '.join(tokens[i + 1 : rel_end])} of {owner}"))
    return out


def _innermost(phrases: list[_Phrase], last_slot: str | None) -> _Phrase | None:
    inner = [
        p for p in phrases if not any(q is not p and p.start <= q.start and q.end <= p.end for q in phrases)
    ]
    if not inner:
        return None
    if last_slot is not None:
        holding = [p for p in inner if last_slot in p.text.split()]
        if holding:
            return holding[-1]
    return inner[-1]


def _has_content(tokens: list[str]) -> bool:
    """Whether a last hop asks more than its slot ("When was #1 born" does, "Who is #1" does not)."""
    words = [t.lower() for t in tokens if not SLOT.fullmatch(t) and t not in ",;:?!()"]
    return any(w not in STOP_WORDS and w not in _QUESTION_WORDS for w in words)


def decompose(question: str, *, max_hops: int) -> list[str]:
    """The hop templates of a composed question, innermost first, the last hop the rest of the question;
    ``[]`` when the question has fewer than two hops. Hop ``n``'s answer fills slot ``#n`` of later hops."""
    tokens = _TOKEN.findall(question.strip().rstrip("?.! "))
    hops: list[str] = []
    last_slot: str | None = None
    while len(hops) < max_hops - 1:
        phrase = _innermost(_phrases(tokens), last_slot)
        if phrase is None or (phrase.start == 0 and phrase.end == len(tokens)):
            break
        hops.append(phrase.text)
        last_slot = f"#{len(hops)}"
        tokens = [*tokens[: phrase.start], last_slot, *tokens[phrase.end :]]
    if not hops:
        return []
    if _has_content(tokens):
        hops.append(_join(tokens))
    elif len(hops) < 2:
        return []
    return hops


def is_linear(chain: list[str]) -> bool:
    """Whether each hop after the first takes exactly the answer of the hop before it (``#n`` in hop n + 1, no
    other slot): a chain one candidate at a time can follow, unlike two parallel parts ("in X's country and
    Y's country")."""
    return len(chain) >= 2 and all(SLOT.findall(hop) == [str(n)] for n, hop in enumerate(chain[1:], start=1))


STEPS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
    "required": ["steps"],
}


def llm_decompose(llm: LLMClient, question: str, *, max_hops: int) -> list[str]:
    """The LLM's decomposition of a composed question into the same chain :func:`decompose` writes (innermost
    step first, ``#n`` for step n's answer, the last step the question's own); ``[]`` when the LLM sees one hop.
    LLMError unless it is a linear chain (:func:`is_linear`) of at most ``max_hops`` steps whose first step
    shares a word with the question (the caller falls back to :func:`decompose`)."""
    data = chat_json(
        llm,
        [
            {
                "role": "system",
                "content": "You split a multi-hop question into a chain of simple steps, the innermost first. "
                "Each later step refers to the answer of the step before it as #1, #2, ... (step 2 uses #1, step 3 "
                "uses #2). Example: 'Who is the spouse of the performer of Green?' -> ['performer of Green', "
                "'Who is the spouse of #1']. A question of one hop gives []. Reply with JSON only.",
            },
            {"role": "user", "content": f"Question: {question}"},
        ],
        STEPS_SCHEMA,
    )
    steps = [str(step).strip() for step in data.get("steps") or [] if str(step).strip()]
    if not steps:
        return []
    if len(steps) > max_hops or not is_linear(steps):
        raise LLMError(f"the LLM's decomposition {steps!r} is no chain of at most {max_hops} linked steps")
    if not set(tokenize(steps[0])) & set(tokenize(question)):
        raise LLMError(f"the LLM's first step {steps[0][:120]!r} is off the question")
    return steps


def fill(template: str, answers: dict[int, str]) -> str:
    """The template with each ``#n`` slot replaced by hop ``n``'s answer (a slot without one is dropped)."""
    return re.sub(r"\s+", " ", SLOT.sub(lambda m: answers.get(int(m.group(1)), ""), template)).strip()


def rank_answers(
    query: str,
    passages: Iterable[Candidate],
    *,
    exclude: Iterable[str] = (),
    known: frozenset[str] = frozenset(),
    settings: ChainSettings,
) -> list[tuple[str, float]]:
    """Candidate answer entities of a hop, best first, from its passages (best first).

    Every title and name in a passage that the query (or ``exclude``) does not already name scores the
    passage's weight ``1 / rank``: times ``title_weight`` for the passage's title, plus up to
    ``near_weight`` the nearer the name stands to a relation word of the query (a query word the passage's
    title lacks, "performer" in "performer of Green"; nothing beyond ``near_window`` words), plus ``known_weight`` when the name is
    the title of a document of the collection (``known``, as entity keys).
    """
    asked = content_words(entity_key(query))
    used = {entity_key(e) for e in exclude}
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}
    query_stems = set(tokenize(query))

    def add(name: str, value: float) -> None:
        key = entity_key(name)
        words = content_words(key)
        if not words or words <= asked or key in used:
            return
        shown.setdefault(key, name)
        scores[key] = scores.get(key, 0.0) + value + settings.known_weight * (key in known) * value

    for rank, cand in enumerate(passages, start=1):
        weight = 1.0 / rank
        title = cand.chunk.title.strip()
        if title:
            add(title, weight * settings.title_weight)
        relation = query_stems - set(tokenize(title))
        words = cand.chunk.text.split()
        marks = [i for i, w in enumerate(words) if set(tokenize(w)) & relation]
        for name in names_in(cand.chunk.text):
            first = name.split()[0]
            at = next((i for i, w in enumerate(words) if w.strip("\"“”'(),.;:") == first), None)
            gap = min((abs(at - m) for m in marks), default=None) if at is not None else None
            near = (
                1.0 - gap / (settings.near_window + 1)
                if gap is not None and gap <= settings.near_window
                else 0.0
            )
            add(name, weight * (1.0 + settings.near_weight * near))
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    return [(shown[k], v) for k, v in ranked]
