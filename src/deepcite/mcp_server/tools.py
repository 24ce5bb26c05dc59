"""The MCP tools: module-level functions, each taking the Engine from the server's lifespan context and
returning a pydantic model; ``TOOLS`` (read-only) and ``WRITE_TOOLS`` (they change what is saved) name them."""

# no `from __future__ import annotations`: the MCP SDK reads the tools' annotations when they are registered
import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from deepcite.engine import Engine
from deepcite.mcp_server.callers import caller_groups
from deepcite.mcp_server.schemas import (
    AnswerIdArg,
    CollectionArg,
    CollectionsResult,
    DeletedAnswer,
    EvidencePassage,
    HopReport,
    MaxHopsArg,
    PractitionerLocation,
    QuestionArg,
    ResearchResponse,
    SubquestionEvidence,
    ToolFilters,
)
from deepcite.models import Candidate, SearchMode
from deepcite.practitioners.api import ChatMessage, PractitionerQuery, PractitionerSearchResponse
from deepcite.saved_answers import SavedAnswer, SavedAnswerList
from deepcite.service import AskResponse, Groups, QuestionRequest, SearchRequest, SearchResponse


# -- helpers ---------------------------------------------------------------------------------------------------
def _engine(ctx: Context) -> Engine:
    """The Engine the server's lifespan holds."""
    return ctx.request_context.lifespan_context


def _groups(ctx: Context) -> Groups:
    """The ACL groups of this call's caller (:func:`caller_groups` of the request's headers)."""
    return caller_groups(_engine(ctx).settings, ctx.headers)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def _passage(cand: Candidate, limit: int, in_final: bool) -> EvidencePassage:
    # the stored sentence offsets point into the whole text, not into the cut one
    chunk = cand.chunk.model_copy(
        update={"text": _cut(cand.chunk.text, limit), "sentence_spans": None, "sentence_pages": None}
    )
    return EvidencePassage(
        **chunk.model_dump(),
        score=round(float(cand.score), 6),
        in_final=in_final,
        llm_read_rounds=cand.llm_read_rounds,
    )


# -- the tools -------------------------------------------------------------------------------------------------
async def list_collections(ctx: Context) -> CollectionsResult:
    """The collections that can be searched, with how many passages each holds (an unreadable one says why)."""
    engine = _engine(ctx)
    collections = await asyncio.to_thread(engine.corpus.collections, _groups(ctx))
    return CollectionsResult(collections=collections, default=engine.settings.server.default_collection)


async def search(
    ctx: Context,
    query: Annotated[str, Field(description="What to look for.")],
    collection: CollectionArg = None,
    mode: Annotated[
        Literal["bm25", "dense", "hybrid"],
        Field(description="bm25: exact words; dense: meaning; hybrid: both fused (best in general)."),
    ] = "hybrid",
    k: Annotated[
        int | None, Field(description="How many passages to return (default: search.default_k).")
    ] = None,
    filters: Annotated[ToolFilters | None, Field(description="Optional limits: years, sources, ids.")] = None,
) -> SearchResponse:
    """One ranked search of a collection, without planning or answering: passages with their title,
    section, PMID/DOI, year, score and text. Fast; use it to look something up or check a fact."""
    engine = _engine(ctx)
    request = SearchRequest(
        query=query,
        collection=collection,
        mode=SearchMode.from_str(mode),
        k=k,
        filters=filters.to_filters() if filters else None,
    )
    found = await asyncio.to_thread(engine.search, request, _groups(ctx))
    limit = engine.settings.mcp.max_passage_chars
    for hit in found.hits:
        hit.text = _cut(hit.text, limit)
    return found


async def research(
    ctx: Context, question: QuestionArg, collection: CollectionArg = None, max_hops: MaxHopsArg = None
) -> ResearchResponse:
    """Plan the question into aspects and sub-questions and retrieve over several hops until the core
    aspects are covered. Returns the evidence pack (passages, each sub-question's own evidence as
    chunk ids), the coverage per aspect and the per-hop retrieval report. No prose answer: use `ask`."""
    engine = _engine(ctx)
    request = QuestionRequest(query=question, collection=collection, max_hops=max_hops)
    result = await engine.research(request, _groups(ctx))
    pack = result.pack
    limit = engine.settings.mcp.max_passage_chars
    rows: dict[str, EvidencePassage] = {}
    for cand in pack.final_evidence:
        rows.setdefault(cand.chunk.chunk_id, _passage(cand, limit, in_final=True))
    subquestions = []
    for sub, cands in pack.subquery_evidence.items():
        for cand in cands:
            rows.setdefault(cand.chunk.chunk_id, _passage(cand, limit, in_final=False))
        subquestions.append(SubquestionEvidence(subquestion=sub, chunk_ids=[c.chunk.chunk_id for c in cands]))
    return ResearchResponse(
        question=result.question,
        collection=engine.corpus.name(collection),
        hops=result.hops,
        stop_reason=pack.stop_reason,
        coverage=result.coverage,
        evidence=list(rows.values()),
        subquestions=subquestions,
        retrieval_report=[
            HopReport(**r.model_dump(exclude={"selected"}), selected=len(r.selected))
            for r in pack.retrieval_report
        ],
        errors=pack.errors,
        warnings=pack.warnings,
    )


async def ask(
    ctx: Context, question: QuestionArg, collection: CollectionArg = None, max_hops: MaxHopsArg = None
) -> AskResponse:
    """Research the question, then answer it from the evidence only: a 3-5 sentence quick summary, a
    longer answer by aspect, and an answer per sub-question. Every sentence cites [n], and `citations`
    lists each n with its title, PMID/DOI/URL, section, score, passage text and `quote`: the sentence(s) of
    the passage that support the claim citing it (text[quote_start:quote_end]). Claims the passages do
    not support read "Unknown based on provided sources."; with no evidence at all the answer says the
    evidence is insufficient. Takes a few seconds."""
    engine = _engine(ctx)
    request = QuestionRequest(query=question, collection=collection, max_hops=max_hops)
    response = await engine.ask(request, _groups(ctx))
    return _brief(response, engine.settings.mcp.max_passage_chars)


def _brief(response: AskResponse, limit: int) -> AskResponse:
    """The response without its retrieval report, passage texts cut (never inside the quote: its offsets
    stay true)."""
    citations = [
        c.model_copy(update={"text": _cut(c.text, max(limit, c.quote_end))}) for c in response.citations
    ]
    return response.model_copy(update={"retrieval_report": [], "citations": citations})


def _brief_saved(saved: SavedAnswer, limit: int) -> SavedAnswer:
    """A saved answer as a tool returns it: the response brief, the evidence pack's passages left out (the
    citations hold the passages the answer cites)."""
    pack = saved.pack.model_copy(update={"final_evidence": [], "subquery_evidence": {}})
    return saved.model_copy(update={"response": _brief(saved.response, limit), "pack": pack})


async def saved_answers(ctx: Context, collection: CollectionArg = None) -> SavedAnswerList:
    """The newest saved answers of a collection (every `ask` is saved): id, question, time, how many
    passages it cites. Read one with saved_answer."""
    engine = _engine(ctx)
    return await asyncio.to_thread(engine.saved.list, collection, _groups(ctx))


async def saved_answer(ctx: Context, answer_id: AnswerIdArg) -> SavedAnswer:
    """One saved answer: the question as asked, the settings used, the answer with its citations and
    quotes, the citation check's counts, and for a re-run which cited passages changed."""
    engine = _engine(ctx)
    saved = await asyncio.to_thread(engine.saved.get, answer_id, _groups(ctx))
    return _brief_saved(saved, engine.settings.mcp.max_passage_chars)


async def rerun_answer(ctx: Context, answer_id: AnswerIdArg) -> SavedAnswer:
    """Ask a saved question again against the collection as it is now; the new answer is saved and its
    `changes` list which cited passages were added, removed or changed. Takes a few seconds."""
    engine = _engine(ctx)
    saved = await engine.answers.rerun(answer_id, _groups(ctx))
    return _brief_saved(saved, engine.settings.mcp.max_passage_chars)


async def delete_saved_answer(ctx: Context, answer_id: AnswerIdArg) -> DeletedAnswer:
    """Delete a saved answer you may read, by its id (the request_id of the answer); it cannot be undone."""
    engine = _engine(ctx)
    await asyncio.to_thread(engine.saved.delete, answer_id, _groups(ctx))
    return DeletedAnswer(deleted=answer_id)


async def find_practitioners(
    ctx: Context,
    request: Annotated[
        str,
        Field(
            min_length=1, description="The patient's request in their own words, e.g. 'I need SVT ablation'."
        ),
    ],
    location: Annotated[
        PractitionerLocation | None, Field(description="Only practitioners here (city/state/ZIP).")
    ] = None,
    limit: Annotated[int | None, Field(ge=1, le=100, description="How many practitioners to return.")] = None,
    messages: Annotated[
        list[ChatMessage] | None,
        Field(description="Earlier turns of the conversation (user and assistant), oldest first."),
    ] = None,
) -> PractitionerSearchResponse:
    """Match a patient's plain-language request (a procedure, diagnosis or symptoms) to clinicians in the
    practitioner directory. Returns `emergency` guidance first for a crisis or an emergency (pass it on
    before anything else), then ranked practitioners with specialty, organisation and address, each with
    its `explanation` (matched intent and terms, specialty matches, boosts and penalties with their sizes)
    and the specialty in plain words, plus how the request was understood."""
    engine = _engine(ctx)

    query = PractitionerQuery(
        userQuery=request,
        location=location.model_dump(exclude_none=True) if location else None,
        limit=limit,
        messages=messages or [],
    )
    return await engine.practitioners.find(query)


TOOLS: dict[str, tuple[str, Callable[..., Awaitable[BaseModel]]]] = {
    "list_collections": ("List collections", list_collections),
    "search": ("Search passages", search),
    "research": ("Research a question", research),
    "ask": ("Ask for a cited answer", ask),
    "find_practitioners": ("Find practitioners", find_practitioners),
    "saved_answers": ("List saved answers", saved_answers),
    "saved_answer": ("Read a saved answer", saved_answer),
}
# tools that change what is saved
WRITE_TOOLS: dict[str, tuple[str, Callable[..., Awaitable[BaseModel]]]] = {
    "rerun_answer": ("Re-run a saved answer", rerun_answer),
    "delete_saved_answer": ("Delete a saved answer", delete_saved_answer),
}
