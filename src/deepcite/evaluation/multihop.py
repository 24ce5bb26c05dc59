"""Multi-hop retrieval evaluation through the Engine: every paragraph of every question pooled into one
collection, then in one run the single-shot hybrid baseline and each named settings profile's research (by
default the shipped defaults, and the engine as it was before the entity graph), scored on gold-paragraph
recall over the evidence pack's documents.

Formats: ``ircot`` (``contexts[]`` with ``is_supporting``), ``musique`` (``paragraphs[]`` with
``is_supporting``), ``hotpot`` and ``2wiki`` (``context: [[title, [sentences]]]`` with
``supporting_facts: [[title, sentence_index]]``).
"""

from __future__ import annotations

import hashlib
import re
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepcite.engine import Engine
from deepcite.errors import InputError
from deepcite.evaluation.profiles import DEFAULT_PROFILE, load_profile, profile_settings
from deepcite.evaluation.ranking import recall_at
from deepcite.ingest.loaders import paragraph_id
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.json_records import read_records
from deepcite.models import SearchMode
from deepcite.research.nodes.select_evidence import page_named
from deepcite.retrieval.graph.extract import entity_key
from deepcite.service import QuestionRequest, SearchRequest

FORMATS = ("ircot", "musique", "hotpot", "2wiki")
# the ingest format that reads each file layout's paragraphs
INGEST_FORMAT = {"ircot": "hotpotqa", "musique": "musique", "hotpot": "hotpotqa", "2wiki": "hotpotqa"}
CUTOFFS = (5, 10)
MAX_REASONS = 5  # skip reasons kept for the report
HOP_ID = re.compile(r"^(\d+)hop")  # MuSiQue ids carry the hop count: "2hop__…", "3hop1__…", "4hop3__…"
BRIDGE_PREFIX_WORDS = 2  # a candidate names a gold page as the research's names-to-pages rule does


@dataclass
class MultihopQuestion:
    """One question with the ids of its supporting paragraphs."""

    qid: str
    question: str
    gold: set[str]
    gold_titles: set[str] = field(default_factory=set)  # the supporting paragraphs' titles
    hop_answers: list[str] = field(default_factory=list)  # the answers of the hops before the last (MuSiQue)

    @property
    def hop_count(self) -> int | None:
        """The hop count the question's id carries (MuSiQue's "3hop1__…"), or ``None``."""
        found = HOP_ID.match(self.qid)
        return int(found.group(1)) if found else None


def bridge_pages(gold_titles: set[str], question: str) -> list[str]:
    """The supporting pages the question does not name itself (the pages of its hops' answers); none in a
    comparison of two named things."""
    asked = f" {entity_key(question)} "
    return [t for t in gold_titles if f" {entity_key(t.split(' (')[0].split(',')[0])} " not in asked]


def holds_bridge(candidates: list[str], gold_titles: set[str], question: str) -> bool | None:
    """Whether a bridge candidate names a supporting page the question does not name itself: equal to its title
    but for a "(…)" disambiguation, or a longer form of its head ("West Chicago High School" and "West Chicago,
    Illinois"); ``None`` when the question has no such page (:func:`bridge_pages`)."""
    bridges = bridge_pages(gold_titles, question)
    if not bridges:
        return None
    return any(page_named(t, c, BRIDGE_PREFIX_WORDS) for t in bridges for c in candidates)


def holds_answer(candidates: list[str], hop_answers: list[str]) -> bool:
    """Whether a bridge candidate names an answer of a hop before the last (MuSiQue's decomposition):
    the answer's words stand in the candidate's ("French-held Kassel" holds "Kassel")."""
    keys = [f" {entity_key(c)} " for c in candidates]
    answers = [f" {entity_key(a)} " for a in hop_answers if entity_key(a)]
    return any(a in k for a in answers for k in keys)


@dataclass
class Outcome:
    """What one system returned for one question: its ranked documents, hops and bridge candidates."""

    ranked: list[str]
    hops: int
    bridges: list[str] | None = None  # None: the system keeps no beam (the single-shot baseline)


@dataclass
class RunScores:
    """Recall figures and cost of one system over the questions."""

    recall_at: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in CUTOFFS})
    all_recall_10: list[float] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    hop_counts: list[int | None] = field(default_factory=list)  # per question, from its id
    beam_read: list[bool] = field(default_factory=list)  # per question of a system with a beam
    beam_held: list[bool | None] = field(default_factory=list)  # per question (None: not known)
    answer_held: list[bool | None] = field(default_factory=list)

    def add(
        self,
        ranked_doc_ids: list[str],
        gold: set[str],
        hops: int,
        seconds: float,
        *,
        hop_count: int | None = None,
        beam_held: bool | None = None,
        beam_read: bool | None = None,
        answer_held: bool | None = None,
    ) -> None:
        """Score one question: recall of ``gold`` in the ranked documents; ``hop_count`` groups it by hops;
        ``beam_read`` (None: the system has no beam) whether its beam held any candidate, ``beam_held`` (None: the
        question has no bridge page, or no beam) whether it held a bridge page's name, ``answer_held`` (None:
        unknown) whether it held an earlier hop's answer."""
        ranked = list(dict.fromkeys(ranked_doc_ids))
        for k, recall in recall_at(ranked, gold, CUTOFFS).items():
            self.recall_at[k].append(recall)
        self.all_recall_10.append(float(gold <= set(ranked[:10])))
        self.hops.append(hops)
        self.seconds.append(seconds)
        self.hop_counts.append(hop_count)
        if beam_read is not None:
            self.beam_read.append(beam_read)
        self.beam_held.append(beam_held)
        self.answer_held.append(answer_held)

    def summary(self) -> dict[str, Any]:
        n = max(1, len(self.hops))
        out: dict[str, Any] = {f"recall@{k}": round(sum(v) / n, 4) for k, v in self.recall_at.items()}
        out["all_recall@10"] = round(sum(self.all_recall_10) / n, 4)
        out["hops_mean"] = round(sum(self.hops) / n, 3)
        out["seconds_per_question"] = round(sum(self.seconds) / n, 4)
        out["seconds_median"] = round(statistics.median(self.seconds), 4) if self.seconds else 0.0
        out["questions"] = len(self.hops)
        if self.beam_read:
            out["beam_read"] = round(sum(self.beam_read) / len(self.beam_read), 4)
        out |= _shares("beam_held_bridge", "bridge_questions", self.beam_held, range(len(self.hops)))
        out |= _shares(
            "beam_held_hop_answer", "hop_answer_questions", self.answer_held, range(len(self.hops))
        )
        by_hops: dict[str, dict[str, float]] = {}
        for count in sorted({c for c in self.hop_counts if c is not None}):
            at = [i for i, c in enumerate(self.hop_counts) if c == count]
            row = {
                "questions": len(at),
                "recall@5": round(sum(self.recall_at[5][i] for i in at) / len(at), 4),
                "all_recall@10": round(sum(self.all_recall_10[i] for i in at) / len(at), 4),
            }
            row |= _shares("beam_held_bridge", "bridge_questions", self.beam_held, at)
            row |= _shares("beam_held_hop_answer", "hop_answer_questions", self.answer_held, at)
            by_hops[str(count)] = row
        if by_hops:
            out["by_hops"] = by_hops
        return out


def _shares(name: str, count: str, held: list[bool | None], at: Iterable[int]) -> dict[str, float]:
    """``{name: share held, count: questions known}`` over the questions ``at`` whose value is known (nothing
    when none is)."""
    known = [held[i] for i in at if held[i] is not None]
    return {name: round(sum(known) / len(known), 4), count: len(known)} if known else {}


@dataclass
class QuestionSet:
    """The questions read from a file, and the records skipped (unreadable, or no supporting paragraphs)."""

    questions: list[MultihopQuestion]
    format: str = ""  # the layout read (given, or detected from the first record)
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)  # the first few skip reasons, for the report


def detect_format(record: Any) -> str | None:
    """The file layout a question record has, by its keys (``None`` when it is no known layout)."""
    if not isinstance(record, dict):
        return None
    if "contexts" in record:
        return "ircot"
    if "paragraphs" in record:
        return "musique"
    if "context" in record:
        return "hotpot"
    return None


def _question(record: Any, fmt: str, where: str) -> MultihopQuestion:
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a question object, got {type(record).__name__}")
    qid = str(record.get("question_id") or record.get("id") or record.get("_id") or where)
    text = record.get("question_text") or record.get("question")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: no question text ('question_text' or 'question')")
    if fmt in ("ircot", "musique"):
        key = "contexts" if fmt == "ircot" else "paragraphs"
        supporting = [p for p in record.get(key) or [] if isinstance(p, dict) and p.get("is_supporting")]
        gold = {
            paragraph_id((p.get("title") or "").strip(), (p.get("paragraph_text") or "").strip())
            for p in supporting
        }
        titles = {(p.get("title") or "").strip() for p in supporting} - {""}
    else:
        titles = {str(t) for t, *_ in record.get("supporting_facts") or []}
        gold = {
            paragraph_id(title.strip(), " ".join(s.strip() for s in sentences if s.strip()))
            for title, sentences in record.get("context") or []
            if title in titles
        }
    if not gold:
        raise InputError(f"{where}: no supporting paragraphs marked")
    steps = record.get("question_decomposition") or []
    answers = [str(h.get("answer") or "") for h in steps[:-1] if isinstance(h, dict)]
    return MultihopQuestion(
        qid=qid, question=text.strip(), gold=gold, gold_titles=titles, hop_answers=[a for a in answers if a]
    )


def load_questions(path: str | Path, fmt: str = "auto", limit: int | None = None) -> QuestionSet:
    """The questions of a multi-hop QA file (JSON Lines, whatever its suffix, or a JSON list), each with its
    gold paragraph ids as ingest assigns them. ``fmt="auto"`` takes the layout from the first record.

    A record that cannot be read, or has no supporting-paragraph labels, is skipped and counted; a file
    with no usable question at all is an :class:`InputError`.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise InputError(f"unknown multi-hop format {fmt!r}; choose auto or one of: {', '.join(FORMATS)}")
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path.name} is not a file; give the question file with --data")
    out = QuestionSet(questions=[])
    for n, raw in enumerate(read_records(path), start=1):
        try:
            if isinstance(raw, LoadProblem):
                raise InputError(str(raw))
            if fmt == "auto":
                fmt = detect_format(raw.value) or "auto"
            if fmt == "auto":
                raise InputError(
                    f"{path.name} record {n}: not a question with contexts, paragraphs or context"
                )
            out.questions.append(_question(raw.value, fmt, f"{path.name} record {n}"))
        except InputError as exc:
            out.skipped += 1
            if len(out.reasons) < MAX_REASONS:
                out.reasons.append(str(exc))
            continue
        if limit is not None and len(out.questions) >= limit:
            break
    if not out.questions:
        reasons = "; ".join(out.reasons) or "the file is empty"
        raise InputError(
            f"no usable question in {path.name} ({out.skipped} skipped: {reasons}); is it a question file?"
        )
    out.format = fmt
    return out


def pool_collection_name(path: str | Path, fmt: str) -> str:
    """A collection name bound to the file's content, so a cached pool is reused only for the same file."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    return f"multihop-{fmt}-{digest}"


def ingest_pool(engine: Engine, path: str | Path, fmt: str, name: str | None = None) -> str:
    """Every paragraph of every question ingested into one collection of ``engine`` (idempotent: a cached pool
    is reused), named :func:`pool_collection_name` unless ``name`` is given; a profile whose graph is built
    with LLM triples (``graph.llm_triples``) gets a pool of its own. Returns the collection's name."""
    name = name or pool_collection_name(path, fmt)
    if engine.settings.graph.llm_triples:
        name = f"{name}-llm"
    engine.ingest(name, path, fmt=INGEST_FORMAT[fmt], on_error="skip")
    return name


Progress = Callable[[int, int], None]
SINGLE_SHOT = "single_shot"  # the question as one hybrid search: the baseline of every run
DEFAULT_SYSTEMS = (SINGLE_SHOT, DEFAULT_PROFILE, "before_graph")
NO_LLM = "skipped: it needs an LLM (set DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL)"


@dataclass
class System:
    """One evaluated system: a settings profile's Engine (sharing the base Engine's store and embedder) and
    the pool it searches; the single-shot baseline searches the default pool once per question."""

    name: str
    engine: Engine
    pool: str


PoolFor = Callable[[Engine], str]  # the pool collection a system's Engine searches (ingested when missing)


def systems_for(engine: Engine, names: tuple[str, ...], pool_for: PoolFor) -> tuple[list[System], list[str]]:
    """The systems to run: each profile's Engine (sharing ``engine``'s store and embedder) over its pool, and a
    message for each skipped one (a profile that needs an LLM when none is configured)."""
    systems, skipped = [], []
    for name in names:
        settings = (
            engine.settings if name == SINGLE_SHOT else profile_settings(engine.settings, load_profile(name))
        )
        needs_llm = settings.graph.llm_triples or settings.research.next_hop.enabled
        if needs_llm and not settings.llm.configured:
            skipped.append(f"{name} {NO_LLM}")
            continue
        profiled = engine if settings == engine.settings else engine.sharing(settings)
        systems.append(System(name, profiled, pool_for(profiled)))
    return systems, skipped


def ranked_documents(system: System, question: str, depth: int) -> tuple[list[str], int]:
    """The document ids a system ranks for ``question``, best first, and the hops it took: the evidence pack
    of the Engine's research (what ``deepcite research`` and the HTTP API return), or for the single-shot
    baseline the Engine's hybrid search."""
    if system.name == SINGLE_SHOT:
        found = system.engine.search(
            SearchRequest(query=question, collection=system.pool, mode=SearchMode.HYBRID, k=depth)
        )
        return [h.doc_id for h in found.hits], 1
    result = system.engine.research_sync(QuestionRequest(query=question, collection=system.pool))
    return [c.chunk.doc_id for c in result.pack.final_evidence], result.hops


def run_question(system: System, question: str, depth: int) -> Outcome:
    """:func:`ranked_documents` with the bridge candidates the research's beam held (none for single-shot)."""
    if system.name == SINGLE_SHOT:
        ranked, hops = ranked_documents(system, question, depth)
        return Outcome(ranked, hops)
    result = system.engine.research_sync(QuestionRequest(query=question, collection=system.pool))
    pack = result.pack
    bridges = [b.name for b in pack.bridges] + [a for step in pack.chain[:-1] for a in step.answers]
    return Outcome([c.chunk.doc_id for c in pack.final_evidence], result.hops, bridges)


def evaluate(
    systems: list[System], questions: list[MultihopQuestion], *, progress: Progress | None = None
) -> dict[str, dict[str, Any]]:
    """Per question, in one run, each system's ranked documents scored on gold-paragraph recall, per hop count
    too (``by_hops``, when the ids carry it), and the share of questions whose beam held a bridge: a
    supporting page the question does not name, named by a bridge candidate (:func:`holds_bridge`), and where
    the file decomposes its questions (MuSiQue), the share whose beam held an earlier hop's answer."""
    scores = {s.name: RunScores() for s in systems}
    depth = max(CUTOFFS)
    for i, q in enumerate(questions, start=1):
        for system in systems:
            started = time.perf_counter()
            got = run_question(system, q.question, depth)
            beam = got.bridges
            held = None if beam is None else holds_bridge(beam, q.gold_titles, q.question)
            answer = None if beam is None or not q.hop_answers else holds_answer(beam, q.hop_answers)
            scores[system.name].add(
                got.ranked,
                q.gold,
                got.hops,
                time.perf_counter() - started,
                hop_count=q.hop_count,
                beam_held=held,
                beam_read=None if beam is None else bool(beam),
                answer_held=answer,
            )
        if progress:
            progress(i, len(questions))
    return {name: run.summary() for name, run in scores.items()}
