"""Multi-hop retrieval evaluation: every paragraph of every question pooled into one collection, then
single-shot hybrid retrieval, today's research engine and the graph-augmented engine (chains and the
entity graph) in one run, scored on gold-paragraph recall.

Formats: ``ircot`` (``contexts[]`` with ``is_supporting``), ``musique`` (``paragraphs[]`` with
``is_supporting``), ``hotpot`` and ``2wiki`` (``context: [[title, [sentences]]]`` with
``supporting_facts: [[title, sentence_index]]``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepcite.config import ResearchSettings, Settings
from deepcite.errors import InputError
from deepcite.evaluation.ranking import recall_at
from deepcite.ingest.loaders import paragraph_id
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.json_records import read_records
from deepcite.llm.client import LLMClient
from deepcite.models import SearchMode
from deepcite.research.agent import ResearchAgent
from deepcite.research.llm_adapters import LLMHopChooser
from deepcite.retrieval.collection import Collection

FORMATS = ("ircot", "musique", "hotpot", "2wiki")
# the ingest format that reads each file layout's paragraphs
INGEST_FORMAT = {"ircot": "hotpotqa", "musique": "musique", "hotpot": "hotpotqa", "2wiki": "hotpotqa"}
CUTOFFS = (5, 10)
MAX_REASONS = 5  # skip reasons kept for the report


@dataclass
class MultihopQuestion:
    """One question with the ids of its supporting paragraphs."""

    qid: str
    question: str
    gold: set[str]


@dataclass
class RunScores:
    """Recall figures and cost of one system over the questions."""

    recall_at: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in CUTOFFS})
    all_recall_10: list[float] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def add(self, ranked_doc_ids: list[str], gold: set[str], hops: int, seconds: float) -> None:
        ranked = list(dict.fromkeys(ranked_doc_ids))
        for k, recall in recall_at(ranked, gold, CUTOFFS).items():
            self.recall_at[k].append(recall)
        self.all_recall_10.append(float(gold <= set(ranked[:10])))
        self.hops.append(hops)
        self.seconds.append(seconds)

    def summary(self) -> dict[str, float]:
        n = max(1, len(self.hops))
        out = {f"recall@{k}": round(sum(v) / n, 4) for k, v in self.recall_at.items()}
        out["all_recall@10"] = round(sum(self.all_recall_10) / n, 4)
        out["hops_mean"] = round(sum(self.hops) / n, 3)
        out["seconds_per_question"] = round(sum(self.seconds) / n, 4)
        out["questions"] = len(self.hops)
        return out


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
        gold = {
            paragraph_id((p.get("title") or "").strip(), (p.get("paragraph_text") or "").strip())
            for p in record.get(key) or []
            if isinstance(p, dict) and p.get("is_supporting")
        }
    else:
        titles = {str(t) for t, *_ in record.get("supporting_facts") or []}
        gold = {
            paragraph_id(title.strip(), " ".join(s.strip() for s in sentences if s.strip()))
            for title, sentences in record.get("context") or []
            if title in titles
        }
    if not gold:
        raise InputError(f"{where}: no supporting paragraphs marked")
    return MultihopQuestion(qid=qid, question=text.strip(), gold=gold)


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


def build_pool(
    collection: Collection, path: str | Path, fmt: str, *, llm: LLMClient | None = None
) -> Collection:
    """Every paragraph of every question ingested into ``collection`` (idempotent: a cached pool is reused);
    name it with :func:`pool_collection_name`. ``llm`` reads triples when ``graph.llm_triples`` is on."""
    IngestPipeline(collection, llm=llm).ingest(path, fmt=INGEST_FORMAT[fmt], on_error="skip")
    return collection


Progress = Callable[[int, int], None]
SYSTEMS = ("single_shot", "research", "graph_research", "llm_graph_research")
# systems that need an LLM: the graph-augmented engine with LLM triples in its pool's graph (a pool of its own,
# build_llm_pool) and LLM-chosen next hops; skipped with a message when no LLM is configured
LLM_SYSTEMS = ("llm_graph_research",)
NO_LLM = "skipped: it needs an LLM (set DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL)"


def runnable_systems(systems: tuple[str, ...], settings: Settings) -> tuple[tuple[str, ...], list[str]]:
    """The systems that can run with these settings, and a message for each skipped one."""
    if settings.llm.configured:
        return systems, []
    return tuple(s for s in systems if s not in LLM_SYSTEMS), [
        f"{s} {NO_LLM}" for s in systems if s in LLM_SYSTEMS
    ]


def llm_pool_settings(settings: Settings) -> Settings:
    """The settings of the LLM systems' pool: its graph built with LLM triples (``graph.llm_triples``; replies
    cached, so a re-run asks only for paragraphs not yet read)."""
    return settings.model_copy(update={"graph": settings.graph.model_copy(update={"llm_triples": True})})


def llm_agent(
    collection: Collection, settings: Settings, system: str, llm: LLMClient | None
) -> ResearchAgent:
    """The agent of an LLM system: ``system_settings`` with LLM-chosen next hops on, no other LLM step."""
    if llm is None:
        raise InputError(f"{system} needs an LLM: set DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL")
    research = system_settings(settings, system).tuned(next_hop={"enabled": True})
    chooser = LLMHopChooser(llm, research.next_hop, chars_per_token=settings.llm.chars_per_token)
    return ResearchAgent(collection, research, hop_chooser=chooser)


def system_settings(settings: Settings, system: str) -> ResearchSettings:
    """The research settings of one evaluated system: today's engine (as it was before the entity graph) has
    chains, the graph, the linked final order and top-k novelty stopping off; the graph-augmented engine has
    the graph's list on (``research.retrieval.use_graph``), with the configured ``research.chain``, graph bridges
    (``research.planning``), ``research.ranking`` and ``research.stopping``."""
    if system == "research":
        return settings.research.tuned(
            chain={"enabled": False},
            retrieval={"use_graph": False},
            planning={"graph_bridge_entities": 0},
            ranking={"enabled": False},
            stopping={"novelty_top_k": 0},
        )
    return settings.research.tuned(retrieval={"use_graph": True})


def evaluate(
    collection: Collection,
    questions: list[MultihopQuestion],
    settings: Settings,
    *,
    systems: tuple[str, ...] = SYSTEMS,
    progress: Progress | None = None,
    llm_pool: Collection | None = None,
    llm: LLMClient | None = None,
) -> dict[str, dict[str, float]]:
    """Per question, in one run: single-shot hybrid retrieval (the question as the query), today's research
    engine, and the graph-augmented engine (research with composed-question chains and the entity graph);
    with ``llm``, the graph-augmented engine over ``llm_pool`` (default: ``collection``) with LLM hops."""
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        raise InputError(f"unknown system(s) {sorted(unknown)}; choose from: {', '.join(SYSTEMS)}")
    agents = {
        name: llm_agent(llm_pool or collection, settings, name, llm)
        if name in LLM_SYSTEMS
        else ResearchAgent(collection, system_settings(settings, name))
        for name in systems
        if name != "single_shot"
    }
    scores = {name: RunScores() for name in systems}
    depth = max(CUTOFFS)
    for i, q in enumerate(questions, start=1):
        for name in systems:
            started = time.perf_counter()
            if name == "single_shot":
                hits = collection.search(q.question, mode=SearchMode.HYBRID, k=depth)
                ranked, hops = [h.chunk.doc_id for h in hits], 1
            else:
                result = agents[name].process(q.question)
                ranked, hops = [c.chunk.doc_id for c in result.pack.final_evidence], result.hops
            scores[name].add(ranked, q.gold, hops, time.perf_counter() - started)
        if progress:
            progress(i, len(questions))
    return {name: run.summary() for name, run in scores.items()}
